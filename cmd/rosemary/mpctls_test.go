package main

import (
	"errors"
	"testing"

	"github.com/rosemary-fhe/rosemary/device/certs"
)

// mpc serve and mpc infer speak mutual TLS unless told otherwise, and
// plaintext only on loopback: refused before any model is loaded or any
// connection made.
func TestMPCTransportRefusals(t *testing.T) {
	t.Setenv("ROSEMARY_CERT", "")
	t.Setenv("ROSEMARY_KEY", "")
	t.Setenv("ROSEMARY_CACERT", "")
	if err := mpcServe([]string{"--insecure-plaintext", "--listen", "0.0.0.0:7045"}); !errors.Is(err, certs.ErrNotLoopback) {
		t.Errorf("mpc serve --insecure-plaintext on 0.0.0.0: %v, want ErrNotLoopback", err)
	}
	if err := mpcServe([]string{"--insecure-plaintext", "--listen", "192.0.2.1:7045"}); !errors.Is(err, certs.ErrNotLoopback) {
		t.Errorf("mpc serve --insecure-plaintext on 192.0.2.1: %v, want ErrNotLoopback", err)
	}
	if err := mpcServe([]string{"--listen", "127.0.0.1:0"}); !errors.Is(err, errServerCerts) {
		t.Errorf("mpc serve without certificates: %v, want errServerCerts", err)
	}
	if err := mpcE2EServe([]string{"--insecure-plaintext", "--listen", "0.0.0.0:0"}); !errors.Is(err, certs.ErrNotLoopback) {
		t.Errorf("mpc e2e-serve --insecure-plaintext on 0.0.0.0: %v, want ErrNotLoopback", err)
	}
	if err := mpcInfer([]string{"--images", "1", "--insecure-plaintext", "--server", "192.0.2.1:7045"}); !errors.Is(err, certs.ErrNotLoopback) {
		t.Errorf("mpc infer --insecure-plaintext to 192.0.2.1: %v, want ErrNotLoopback", err)
	}
	if err := mpcInfer([]string{"--images", "1", "--server", "127.0.0.1:7045"}); !errors.Is(err, errNoCerts) {
		t.Errorf("mpc infer without certificates: %v, want errNoCerts", err)
	}
}
