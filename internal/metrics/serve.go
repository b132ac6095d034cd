// Package metrics serves a Prometheus registry at /metrics on a loopback
// address: the listener has no TLS and no client authentication, so it
// refuses any other address (scrape it from the same host, or forward
// the port).
package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ErrNotLoopback is returned for a listen address that is not loopback.
var ErrNotLoopback = errors.New("metrics: the /metrics listener is plaintext and unauthenticated: loopback addresses only")

// Server is a running /metrics listener.
type Server struct {
	lis net.Listener
	srv *http.Server
}

// Listen serves g at http://addr/metrics (addr host:port on loopback;
// port 0 picks one) until Close.
func Listen(addr string, g prometheus.Gatherer) (*Server, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("%w: %q", ErrNotLoopback, addr)
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	s := &Server{lis: lis, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go s.srv.Serve(lis)
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.lis.Addr() }

// Close stops the server.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}
