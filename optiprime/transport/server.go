package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rosemary-fhe/rosemary/device/certs"
)

// Bounds of a SessionServer unless configured.
const (
	// DefaultMaxSessions is how many sessions a SessionServer runs at once: a
	// session holds the client's keys and a layer's ciphertexts (hundreds
	// of MiB at N = 8192) and a core or two.
	DefaultMaxSessions = 4
	// DefaultIdleTimeout is how long a peer may stay silent (or not read):
	// longer than any pause of an honest client between two frames.
	DefaultIdleTimeout = 2 * time.Minute
)

// ErrClientCertOptional is returned for a TLS server configuration that
// does not require client certificates.
var ErrClientCertOptional = errors.New("transport: a TLS server must require and verify client certificates")

// SessionServer accepts the sessions of a two-party protocol on a listener: over
// mutual TLS with a check of the client's identity (or plaintext on a
// loopback address only), at most MaxSessions at once (a client beyond
// them is refused: its connection is closed before the handshake), each
// ended when its peer is silent for IdleTimeout (the handshake included).
type SessionServer struct {
	// TLS is the server's configuration (certs.ServerConfig with client
	// certificates required); nil: plaintext, on a loopback listener only.
	TLS *tls.Config
	// Authorize, if set, is the identity check of a TLS client after its
	// certificate chain verified; an error refuses the handshake.
	Authorize func(tls.ConnectionState) error
	// MaxSessions (≤ 0: DefaultMaxSessions) and IdleTimeout (≤ 0:
	// DefaultIdleTimeout) bound the sessions.
	MaxSessions int
	IdleTimeout time.Duration
	// Options are given to every session's Conn.
	Options []Option
	// Logf, if set, reports refused clients and failed sessions.
	Logf func(format string, args ...any)
}

// Serve accepts clients on l until ctx ends (which also closes the running
// sessions' connections) or, with total > 0, until total sessions have
// been admitted, and returns once the sessions it started have ended.
// handle runs each admitted session (n counts from 1) in a goroutine of
// its own; Serve closes the connection after it, and reports its error
// through Logf. Clients refused before their session starts do not count.
func (s *SessionServer) Serve(ctx context.Context, l net.Listener, total int, handle func(n int, conn *Conn) error) error {
	tlsCfg, err := s.tlsConfig(l)
	if err != nil {
		return err
	}
	logf := s.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	idle := s.IdleTimeout
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	maxSessions := s.MaxSessions
	if maxSessions <= 0 {
		maxSessions = DefaultMaxSessions
	}
	var (
		slots     = make(chan struct{}, maxSessions)
		wg        sync.WaitGroup
		admitted  atomic.Int64
		closeOnce sync.Once
		finished  atomic.Bool
	)
	stopListening := func() { closeOnce.Do(func() { l.Close() }) }
	stop := context.AfterFunc(ctx, stopListening)
	defer stop()
	defer wg.Wait()
	for {
		nc, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil || finished.Load() {
				return nil
			}
			return fmt.Errorf("transport: accept on %s: %w", l.Addr(), err)
		}
		select {
		case slots <- struct{}{}:
		default:
			logf("refused %s: %d sessions running", nc.RemoteAddr(), maxSessions)
			nc.Close()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			conn, who, err := s.admit(ctx, nc, tlsCfg, idle)
			if err != nil {
				logf("refused %s: %v", nc.RemoteAddr(), err)
				nc.Close()
				return
			}
			defer conn.Close()
			n := int(admitted.Add(1))
			if total > 0 && n > total {
				return
			}
			if total > 0 && n == total {
				finished.Store(true)
				stopListening()
			}
			closeOnStop := context.AfterFunc(ctx, func() { conn.Close() })
			defer closeOnStop()
			if err := handle(n, conn); err != nil {
				logf("session %d (%s): %v", n, who, err)
			}
		}()
	}
}

// tlsConfig checks the server's transport and returns the TLS
// configuration its handshakes use (nil: plaintext).
func (s *SessionServer) tlsConfig(l net.Listener) (*tls.Config, error) {
	if s.TLS == nil {
		if err := certs.CheckLoopback(l.Addr().String()); err != nil {
			return nil, fmt.Errorf("transport: a plaintext server: %w", err)
		}
		return nil, nil
	}
	if s.TLS.ClientAuth != tls.RequireAndVerifyClientCert {
		return nil, ErrClientCertOptional
	}
	cfg := s.TLS.Clone()
	cfg.MinVersion = max(cfg.MinVersion, tls.VersionTLS13)
	if s.Authorize != nil {
		own := cfg.VerifyConnection
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if own != nil {
				if err := own(cs); err != nil {
					return err
				}
			}
			return s.Authorize(cs)
		}
	}
	return cfg, nil
}

// admit runs the TLS handshake within idle (a silent client is dropped)
// and returns the session's Conn and who the client is.
func (s *SessionServer) admit(ctx context.Context, nc net.Conn, cfg *tls.Config, idle time.Duration) (*Conn, string, error) {
	opts := append(append([]Option(nil), s.Options...), WithIdleTimeout(idle))
	if cfg == nil {
		return NewConn(nc, Server, opts...), nc.RemoteAddr().String(), nil
	}
	if err := nc.SetDeadline(time.Now().Add(idle)); err != nil {
		return nil, "", err
	}
	tc := tls.Server(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, "", fmt.Errorf("TLS handshake: %w", err)
	}
	if err := nc.SetDeadline(time.Time{}); err != nil {
		return nil, "", err
	}
	who := nc.RemoteAddr().String()
	if p := tc.ConnectionState().PeerCertificates; len(p) > 0 {
		who = p[0].Subject.CommonName + " at " + who
	}
	return NewConn(tc, Server, opts...), who, nil
}
