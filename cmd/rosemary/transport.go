package main

import (
	"errors"
	"flag"
	"os"

	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/remote"
)

// Client-side transport flags, etcdctl's names: --cert, --key, --cacert
// (defaults from ROSEMARY_CERT, ROSEMARY_KEY, ROSEMARY_CACERT), or
// --insecure-plaintext to a device on loopback.
type transportFlags struct {
	fs                *flag.FlagSet
	cert, key, cacert *string
	plaintext         *bool
}

func addTransportFlags(fs *flag.FlagSet) *transportFlags {
	return &transportFlags{fs: fs,
		cert:      fs.String("cert", os.Getenv("ROSEMARY_CERT"), "client certificate (rosemary certs issue; env ROSEMARY_CERT)"),
		key:       fs.String("key", os.Getenv("ROSEMARY_KEY"), "client certificate's key (env ROSEMARY_KEY)"),
		cacert:    fs.String("cacert", os.Getenv("ROSEMARY_CACERT"), "CA certificate that signed the devices (env ROSEMARY_CACERT)"),
		plaintext: fs.Bool("insecure-plaintext", false, "no TLS: only to a device on a loopback address started with --insecure-plaintext"),
	}
}

// errNoCerts says what a device connection needs.
var errNoCerts = errors.New("a device connection is TLS with a client certificate: give --cert, --key and --cacert " +
	"(rosemary certs issue makes them), or --insecure-plaintext to a device on loopback")

// dialOptions are the remote options the flags name.
func (t *transportFlags) dialOptions() ([]remote.Option, error) {
	files := certs.Files{Cert: *t.cert, Key: *t.key, CA: *t.cacert}
	// Certificates from the environment give way to --insecure-plaintext;
	// certificates on the command line beside it are a contradiction.
	given := false
	t.fs.Visit(func(f *flag.Flag) { given = given || f.Name == "cert" || f.Name == "key" || f.Name == "cacert" })
	switch {
	case *t.plaintext && given:
		return nil, errors.New("give certificates or --insecure-plaintext, not both")
	case *t.plaintext:
		return []remote.Option{remote.WithPlaintext()}, nil
	case !files.Set():
		return nil, errNoCerts
	}
	cfg, err := certs.ClientConfig(files)
	if err != nil {
		return nil, err
	}
	return []remote.Option{remote.WithTLS(cfg)}, nil
}
