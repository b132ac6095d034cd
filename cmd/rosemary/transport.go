package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"os"
	"strings"

	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/remote"
)

// Client-side transport flags, etcdctl's names: --cert, --key, --cacert
// (defaults from ROSEMARY_CERT, ROSEMARY_KEY, ROSEMARY_CACERT), or
// --insecure-plaintext to a device or etcd on loopback. The same
// certificate authenticates to the devices and to a cluster's etcd.
type transportFlags struct {
	fs                *flag.FlagSet
	cert, key, cacert *string
	plaintext         *bool
}

// --key is the certificate's key on every command (a keyword database's
// key is --kv-key), as etcdctl names it.
func addTransportFlags(fs *flag.FlagSet) *transportFlags {
	return &transportFlags{fs: fs,
		cert:      fs.String("cert", os.Getenv("ROSEMARY_CERT"), "client certificate (rosemary certs issue; env ROSEMARY_CERT)"),
		key:       fs.String("key", os.Getenv("ROSEMARY_KEY"), "client certificate's key (env ROSEMARY_KEY)"),
		cacert:    fs.String("cacert", os.Getenv("ROSEMARY_CACERT"), "CA certificate that signed the devices (env ROSEMARY_CACERT)"),
		plaintext: fs.Bool("insecure-plaintext", false, "no TLS: only to a device or etcd on a loopback address started with --insecure-plaintext"),
	}
}

// errNoCerts says what a connection needs.
var errNoCerts = errors.New("a device or etcd connection is TLS with a client certificate: give --cert, --key and --cacert " +
	"(rosemary certs issue makes them), or --insecure-plaintext to a loopback address")

// tlsConfig is the client TLS configuration the flags name; nil with
// --insecure-plaintext.
func (t *transportFlags) tlsConfig() (*tls.Config, error) {
	files := certs.Files{Cert: *t.cert, Key: *t.key, CA: *t.cacert}
	// Certificates from the environment give way to --insecure-plaintext;
	// certificates on the command line beside it are a contradiction.
	given := false
	t.fs.Visit(func(f *flag.Flag) { given = given || f.Name == "cert" || f.Name == "key" || f.Name == "cacert" })
	switch {
	case *t.plaintext && given:
		return nil, errors.New("give certificates or --insecure-plaintext, not both")
	case *t.plaintext:
		return nil, nil
	case !files.Set():
		return nil, errNoCerts
	}
	return certs.ClientConfig(files)
}

// dialOptions are the remote options the flags name.
func (t *transportFlags) dialOptions() ([]remote.Option, error) {
	cfg, err := t.tlsConfig()
	if err != nil {
		return nil, err
	}
	if cfg == nil {
		return []remote.Option{remote.WithPlaintext()}, nil
	}
	return []remote.Option{remote.WithTLS(cfg)}, nil
}

// etcd is how the flags reach the etcd at endpoints (comma-separated):
// with the same certificate as the devices (etcd takes its name for the
// user), or in plaintext to loopback endpoints.
func (t *transportFlags) etcd(endpoints string) (cluster.Etcd, error) {
	cfg, err := t.tlsConfig()
	if err != nil {
		return cluster.Etcd{}, err
	}
	return cluster.Etcd{Endpoints: strings.Split(endpoints, ","), TLS: cfg}, nil
}
