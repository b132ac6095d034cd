package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// The transport of HE-MPC sessions: mutual TLS 1.3 with the deployment's
// certificates (the protocol assumes private, authenticated channels: its
// frames carry secret shares of the client's image and of the model), or
// plaintext on loopback only.

// mpcServerFlags are a session server's flags: its certificate, whom it
// serves, and its bounds.
type mpcServerFlags struct {
	tls         *serverTLSFlags
	allow       *string
	maxSessions *int
	idle        *time.Duration
}

func addMPCServerFlags(fs *flag.FlagSet, cmd string) *mpcServerFlags {
	return &mpcServerFlags{
		tls:         addServerTLSFlags(fs, cmd, "rosemary certs issue --role server --host HOST"),
		allow:       fs.String("allow", "", "comma-separated names of the user certificates served (default: every user certificate of the CA)"),
		maxSessions: fs.Int("max-sessions", transport.DefaultMaxSessions, "sessions served at once; a client beyond them is refused"),
		idle:        fs.Duration("idle-timeout", transport.DefaultIdleTimeout, "a client silent (or not reading) this long is dropped, its handshake included"),
	}
}

// server is the session server the flags name, for a listener at listen.
func (f *mpcServerFlags) server(listen string) (*transport.SessionServer, error) {
	cfg, err := f.tls.config(listen, true)
	if err != nil {
		return nil, err
	}
	s := &transport.SessionServer{TLS: cfg, MaxSessions: *f.maxSessions, IdleTimeout: *f.idle,
		Logf: func(format string, a ...any) { fmt.Fprintf(os.Stderr, format+"\n", a...) }}
	if cfg != nil {
		s.Authorize = certs.Allow([]certs.Role{certs.RoleUser}, splitList(*f.allow))
	}
	return s, nil
}

// mpcDial connects to an HE-MPC server with the client flags: mutual TLS
// (the server's certificate must name the host of addr), or plaintext to a
// loopback address with --insecure-plaintext.
func mpcDial(ctx context.Context, tf *transportFlags, addr string) (*transport.Conn, error) {
	cfg, err := tf.tlsConfig()
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		return transport.DialTLS(ctx, addr, cfg)
	}
	if err := certs.CheckLoopback(addr); err != nil {
		return nil, fmt.Errorf("--insecure-plaintext: %w", err)
	}
	return transport.Dial(ctx, addr)
}
