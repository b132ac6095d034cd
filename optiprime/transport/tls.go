package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
)

// ErrNoTLSConfig is returned by DialTLS without a configuration.
var ErrNoTLSConfig = errors.New("transport: no TLS configuration")

// DialTLS connects to a server over TCP and mutual TLS 1.3 with cfg
// (certs.ClientConfig: the client's certificate and the deployment's CA)
// and completes the handshake within ctx. The server's certificate must
// name the host of addr, unless cfg.ServerName names another. A server
// that refuses the client's certificate says so on the first Recv (TLS
// 1.3 sends the verdict after the client's handshake ends).
func DialTLS(ctx context.Context, addr string, cfg *tls.Config, opts ...Option) (*Conn, error) {
	if cfg == nil {
		return nil, ErrNoTLSConfig
	}
	cfg = cfg.Clone()
	cfg.MinVersion = max(cfg.MinVersion, tls.VersionTLS13)
	d := tls.Dialer{Config: cfg}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("transport: dial %s over TLS: %w", addr, err)
	}
	return NewConn(nc, Client, opts...), nil
}
