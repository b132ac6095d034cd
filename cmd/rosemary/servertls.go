package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"

	"github.com/rosemary-fhe/rosemary/device/certs"
)

// Server-side transport flags, etcd's names as `device serve` takes them:
// --cert-file, --key-file, --trusted-ca-file (the server's certificate and
// the CA its clients' certificates must come from), or
// --insecure-plaintext on a loopback address.
type serverTLSFlags struct {
	cmd       string // for errors: "device serve", "mpc serve"
	files     certs.Files
	plaintext *bool
}

// addServerTLSFlags adds the flags; issue says how the server's
// certificate is made (rosemary certs issue --role …).
func addServerTLSFlags(fs *flag.FlagSet, cmd, issue string) *serverTLSFlags {
	f := &serverTLSFlags{cmd: cmd}
	fs.StringVar(&f.files.Cert, "cert-file", "", "the server's TLS certificate ("+issue+")")
	fs.StringVar(&f.files.Key, "key-file", "", "its key")
	fs.StringVar(&f.files.CA, "trusted-ca-file", "", "CA whose certificates clients must present")
	f.plaintext = fs.Bool("insecure-plaintext", false, "serve without TLS or client authentication (loopback addresses only)")
	return f
}

// config is the server TLS configuration the flags name for a server at
// listen (with clientCertAuth, clients must present a certificate of the
// CA), or nil with --insecure-plaintext on a loopback address.
func (f *serverTLSFlags) config(listen string, clientCertAuth bool) (*tls.Config, error) {
	switch {
	case *f.plaintext && f.files.Set():
		return nil, fmt.Errorf("%s: give --cert-file/--key-file/--trusted-ca-file or --insecure-plaintext, not both", f.cmd)
	case *f.plaintext:
		if err := certs.CheckLoopback(listen); err != nil {
			return nil, fmt.Errorf("%s: --insecure-plaintext: %w", f.cmd, err)
		}
		return nil, nil
	case !f.files.Set():
		return nil, fmt.Errorf("%s: %w", f.cmd, errServerCerts)
	}
	cfg, err := certs.ServerConfig(f.files, clientCertAuth)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.cmd, err)
	}
	return cfg, nil
}

var errServerCerts = errors.New("TLS is required: give --cert-file, --key-file and --trusted-ca-file (rosemary certs init|issue make them), " +
	"or --insecure-plaintext on a loopback address")
