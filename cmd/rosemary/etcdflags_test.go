package main

import (
	"flag"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/device/certs"
)

// The client flags reach etcd with the same certificate as the devices,
// or in plaintext only when asked, never both.
func TestTransportFlagsForEtcd(t *testing.T) {
	dir := t.TempDir()
	if err := certs.Init(dir); err != nil {
		t.Fatal(err)
	}
	if err := certs.Issue(dir, "alice", certs.RoleUser, nil); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ROSEMARY_CERT", "")
	t.Setenv("ROSEMARY_KEY", "")
	t.Setenv("ROSEMARY_CACERT", "")
	parse := func(args ...string) (cluster.Etcd, error) {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		tf := addTransportFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return tf.etcd("127.0.0.1:2379,127.0.0.1:2380")
	}
	f := certs.InDir(dir, "alice")
	e, err := parse("--cert", f.Cert, "--key", f.Key, "--cacert", f.CA)
	if err != nil || e.TLS == nil || len(e.Endpoints) != 2 {
		t.Fatalf("with certificates: %+v %v", e, err)
	}
	if id, err := e.Identity(); err != nil || id != (certs.Identity{Name: "alice", Role: certs.RoleUser}) {
		t.Fatalf("identity %v %v", id, err)
	}
	if e, err := parse("--insecure-plaintext"); err != nil || e.TLS != nil {
		t.Fatalf("plaintext: %+v %v", e, err)
	}
	if _, err := parse(); err == nil || !strings.Contains(err.Error(), "--cert") {
		t.Fatalf("no certificates, no plaintext: %v", err)
	}
	if _, err := parse("--insecure-plaintext", "--cert", f.Cert, "--key", f.Key, "--cacert", f.CA); err == nil {
		t.Fatal("certificates and plaintext together were accepted")
	}
	// db lookup, put, delete: the keyword database's key is --kv-key, so
	// --key is the certificate's there too, and a keyword key beside
	// plaintext is no certificate.
	fs := flag.NewFlagSet("db lookup", flag.ContinueOnError)
	tf := addTransportFlags(fs)
	fs.String("kv-key", "", "the key")
	if err := fs.Parse([]string{"--insecure-plaintext", "--kv-key", "user1"}); err != nil {
		t.Fatal(err)
	}
	if e, err := tf.etcd("127.0.0.1:2379"); err != nil || e.TLS != nil {
		t.Fatalf("plaintext with a keyword key: %+v %v", e, err)
	}
}

// A device registers under its certificate's name only.
func TestDeviceIDIsTheCertificateName(t *testing.T) {
	dir := t.TempDir()
	if err := certs.Init(dir); err != nil {
		t.Fatal(err)
	}
	for name, role := range map[string]certs.Role{"d1": certs.RoleDevice, "alice": certs.RoleUser} {
		if err := certs.Issue(dir, name, role, nil); err != nil {
			t.Fatal(err)
		}
	}
	as := func(name string) cluster.Etcd {
		cfg, err := certs.ClientConfig(certs.InDir(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return cluster.Etcd{Endpoints: []string{"127.0.0.1:2379"}, TLS: cfg}
	}
	if id, err := deviceID(as("d1"), "", "127.0.0.1:7420"); err != nil || id != "d1" {
		t.Fatalf("default id: %q %v", id, err)
	}
	if id, err := deviceID(as("d1"), "d1", "127.0.0.1:7420"); err != nil || id != "d1" {
		t.Fatalf("--id d1: %q %v", id, err)
	}
	if _, err := deviceID(as("d1"), "d0", "127.0.0.1:7420"); err == nil {
		t.Fatal("d1's certificate registered as d0")
	}
	if _, err := deviceID(as("alice"), "", "127.0.0.1:7420"); err == nil {
		t.Fatal("a user's certificate registered a device")
	}
	plain := cluster.Etcd{Endpoints: []string{"127.0.0.1:2379"}}
	if id, _ := deviceID(plain, "", "127.0.0.1:7420"); id != "127.0.0.1:7420" {
		t.Fatalf("plaintext default id %q", id)
	}
	if id, _ := deviceID(plain, "x", "127.0.0.1:7420"); id != "x" {
		t.Fatalf("plaintext --id x: %q", id)
	}
}
