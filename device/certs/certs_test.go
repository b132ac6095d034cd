package certs

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// deployment makes a CA in a temporary directory and issues the named
// parties.
func deployment(t *testing.T, parties map[string]Role) string {
	t.Helper()
	dir := t.TempDir()
	if err := Init(dir); err != nil {
		t.Fatal(err)
	}
	for name, role := range parties {
		if err := Issue(dir, name, role, nil); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// handshake runs a TLS handshake between a server and a client config over
// a loopback connection and returns the identity the server saw, or the
// first side's error.
func handshake(t *testing.T, server, client *tls.Config) (Identity, error) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	type result struct {
		id  Identity
		err error
	}
	got := make(chan result, 1)
	go func() {
		c, err := lis.Accept()
		if err != nil {
			got <- result{err: err}
			return
		}
		defer c.Close()
		s := tls.Server(c, server)
		if err := s.Handshake(); err != nil {
			got <- result{err: err}
			return
		}
		// TLS 1.3 clients learn of a rejected certificate on their first
		// read; the server answers one byte once it has accepted.
		peers := s.ConnectionState().PeerCertificates
		if len(peers) == 0 {
			_, _ = s.Write([]byte{1})
			got <- result{err: errors.New("no client certificate")}
			return
		}
		id, err := IdentityOf(peers[0])
		_, _ = s.Write([]byte{1})
		got <- result{id, err}
	}()
	c, err := tls.Dial("tcp", lis.Addr().String(), client)
	if err == nil {
		_, err = io.ReadFull(c, make([]byte, 1))
		c.Close()
	}
	r := <-got
	if r.err != nil {
		return r.id, r.err
	}
	return r.id, err
}

func TestMutualTLSNamesTheClient(t *testing.T) {
	dir := deployment(t, map[string]Role{"dev0": RoleDevice, "alice": RoleUser})
	srv, err := ServerConfig(InDir(dir, "dev0"), true)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := ClientConfig(InDir(dir, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	id, err := handshake(t, srv, cli)
	if err != nil {
		t.Fatal(err)
	}
	if id != (Identity{Name: "alice", Role: RoleUser}) {
		t.Fatalf("server saw %v, want alice (user)", id)
	}
	if cli.MinVersion != tls.VersionTLS13 || srv.MinVersion != tls.VersionTLS13 {
		t.Fatal("configs allow versions below TLS 1.3")
	}
}

func TestForeignCAAndMissingCertificateRefused(t *testing.T) {
	dir := deployment(t, map[string]Role{"dev0": RoleDevice, "alice": RoleUser})
	other := deployment(t, map[string]Role{"mallory": RoleUser, "dev0": RoleDevice})
	srv, err := ServerConfig(InDir(dir, "dev0"), true)
	if err != nil {
		t.Fatal(err)
	}
	// A client certificate from another CA, trusting the right CA.
	foreign := InDir(other, "mallory")
	foreign.CA = filepath.Join(dir, CAFile)
	cli, err := ClientConfig(foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := handshake(t, srv, cli); err == nil {
		t.Fatal("a certificate of another CA was accepted")
	}
	// No client certificate at all.
	noCert, _ := ClientConfig(InDir(dir, "alice"))
	noCert.Certificates = nil
	if _, err := handshake(t, srv, noCert); err == nil {
		t.Fatal("a client without a certificate was accepted")
	}
	// A client that trusts another CA refuses our device.
	wrongTrust, _ := ClientConfig(InDir(other, "mallory"))
	if _, err := handshake(t, srv, wrongTrust); err == nil {
		t.Fatal("a client accepted a device its CA did not sign")
	}
}

func TestKeyFilesArePrivate(t *testing.T) {
	dir := deployment(t, map[string]Role{"alice": RoleUser})
	for _, f := range []string{KeyFile(dir, "alice"), filepath.Join(dir, CAKeyFile)} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s has mode %v, want 0600", f, fi.Mode().Perm())
		}
	}
	if err := os.Chmod(KeyFile(dir, "alice"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ClientConfig(InDir(dir, "alice")); !errors.Is(err, ErrKeyReadable) {
		t.Fatalf("a world-readable key: %v, want ErrKeyReadable", err)
	}
}

func TestIssueChecksItsInput(t *testing.T) {
	dir := deployment(t, nil)
	for _, name := range []string{"", "ca", "root", "../x", "a/b", "-x"} {
		if err := Issue(dir, name, RoleUser, nil); err == nil {
			t.Errorf("Issue accepted name %q", name)
		}
	}
	if err := Issue(dir, "bob", Role("root"), nil); err == nil {
		t.Error("Issue accepted role root")
	}
	if err := Issue(t.TempDir(), "bob", RoleUser, nil); err == nil {
		t.Error("Issue without a CA succeeded")
	}
	if err := Init(dir); err == nil {
		t.Error("Init overwrote a CA")
	}
	if _, err := ClientConfig(Files{Cert: "x"}); !errors.Is(err, ErrIncomplete) {
		t.Errorf("one file of three: %v, want ErrIncomplete", err)
	}
}

func TestDeviceCertificateNamesItsHosts(t *testing.T) {
	dir := deployment(t, nil)
	if err := Issue(dir, "dev1", RoleDevice, []string{"10.0.0.7", "dev1.rosemary.svc"}); err != nil {
		t.Fatal(err)
	}
	c, err := readCert(CertFile(dir, "dev1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.IPAddresses) != 1 || c.IPAddresses[0].String() != "10.0.0.7" || len(c.DNSNames) != 1 || c.DNSNames[0] != "dev1.rosemary.svc" {
		t.Fatalf("SANs %v %v", c.IPAddresses, c.DNSNames)
	}
	if err := c.VerifyHostname("10.0.0.7"); err != nil {
		t.Fatal(err)
	}
	if err := c.VerifyHostname("127.0.0.1"); err == nil {
		t.Fatal("a device issued for 10.0.0.7 verifies as 127.0.0.1")
	}
}

func TestCheckLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:7420": true, "[::1]:7420": true, "localhost:1": true, "127.3.4.5:9": true,
		":7420": false, "0.0.0.0:7420": false, "10.0.0.1:7420": false, "example.com:7420": false, "nonsense": false,
	} {
		if err := CheckLoopback(addr); (err == nil) != ok {
			t.Errorf("CheckLoopback(%q) = %v", addr, err)
		}
	}
}

// A server certificate (etcd's) serves TLS on loopback and speaks to its
// peers as a client; its identity carries the server role.
func TestServerCertificate(t *testing.T) {
	dir := deployment(t, map[string]Role{"etcd": RoleServer, "alice": RoleUser})
	c, err := readCert(CertFile(dir, "etcd"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.VerifyHostname("127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(c.ExtKeyUsage, x509.ExtKeyUsageServerAuth) || !slices.Contains(c.ExtKeyUsage, x509.ExtKeyUsageClientAuth) {
		t.Fatalf("server certificate's key usages %v", c.ExtKeyUsage)
	}
	if id, err := IdentityOf(c); err != nil || id != (Identity{Name: "etcd", Role: RoleServer}) {
		t.Fatalf("identity %v %v", id, err)
	}
	srv, err := ServerConfig(InDir(dir, "etcd"), true)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := ClientConfig(InDir(dir, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	if id, err := handshake(t, srv, cli); err != nil || id.Name != "alice" {
		t.Fatalf("handshake with the server certificate: %v %v", id, err)
	}
	// A user's certificate is no server's.
	u, err := readCert(CertFile(dir, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(u.ExtKeyUsage, x509.ExtKeyUsageServerAuth) {
		t.Fatal("a user certificate may serve TLS")
	}
}
