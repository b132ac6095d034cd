package bench

import (
	"os"
	"path/filepath"

	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/remote"
)

// Transport names in the reports.
const (
	TransportTLS       = "tls1.3-mutual"
	TransportPlaintext = "plaintext-loopback"
)

// childTransport makes what a child device and this process need to talk:
// by default a fresh CA in dir with a device and a user certificate (the
// device serves TLS 1.3 and requires the user's certificate), or, with
// plaintext, the flag that lets the device serve on loopback without TLS.
func childTransport(dir string, plaintext bool) (serveArgs []string, dial []remote.Option, name string, err error) {
	if plaintext {
		return []string{"--insecure-plaintext"}, []remote.Option{remote.WithPlaintext()}, TransportPlaintext, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, nil, "", err
	}
	if err := certs.Init(dir); err != nil {
		return nil, nil, "", err
	}
	if err := certs.Issue(dir, "bench-device", certs.RoleDevice, nil); err != nil {
		return nil, nil, "", err
	}
	if err := certs.Issue(dir, "bench-user", certs.RoleUser, nil); err != nil {
		return nil, nil, "", err
	}
	dev := certs.InDir(dir, "bench-device")
	cfg, err := certs.ClientConfig(certs.InDir(dir, "bench-user"))
	if err != nil {
		return nil, nil, "", err
	}
	return []string{"--cert-file", dev.Cert, "--key-file", dev.Key, "--trusted-ca-file", filepath.Join(dir, certs.CAFile)},
		[]remote.Option{remote.WithTLS(cfg)}, TransportTLS, nil
}
