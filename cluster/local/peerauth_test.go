package local

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/device/certs"
)

// peerGet does an HTTPS GET of path on an etcd peer address with the
// client certificate of files and returns the status code, or the error
// (a refused handshake).
func peerGet(t *testing.T, peer, path string, files certs.Files) (int, error) {
	t.Helper()
	cfg, err := certs.ClientConfig(files)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
	defer c.CloseIdleConnections()
	resp, err := c.Get("https://" + peer + path)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// peerPKI is a CA with the members' server certificate (etcd) and parties
// of every other role, which etcd's peers must not take for members.
func peerPKI(t *testing.T) string {
	t.Helper()
	pki := t.TempDir()
	if err := certs.Init(pki); err != nil {
		t.Fatal(err)
	}
	for name, role := range map[string]certs.Role{"etcd": certs.RoleServer, "mallory": certs.RoleUser, "d0": certs.RoleDevice,
		"coordinator": certs.RoleAdmin, "other-server": certs.RoleServer} {
		if err := certs.Issue(pki, name, role, nil); err != nil {
			t.Fatal(err)
		}
	}
	return pki
}

// checkPeerPort asks peer for /members and /raft/probing: the member
// certificate gets 200, every other certificate of the same CA nothing.
func checkPeerPort(t *testing.T, pki, peer string) {
	t.Helper()
	for _, path := range []string{"/members", "/raft/probing"} {
		code, err := peerGet(t, peer, path, certs.InDir(pki, "etcd"))
		if err != nil || code != http.StatusOK {
			t.Fatalf("member certificate on the peer port %s: status %d, %v; want 200", path, code, err)
		}
		for _, name := range []string{"mallory", "d0", "coordinator", "other-server"} {
			code, err := peerGet(t, peer, path, certs.InDir(pki, name))
			if err == nil && code == http.StatusOK {
				t.Errorf("%s's certificate (not a member's) on the peer port %s: 200", name, path)
			}
		}
	}
}

// The embedded etcd of `rosemary cluster up` (StartEtcd): its peer port
// takes the member certificate only.
func TestPeerPortRefusesNonMembersOneMember(t *testing.T) {
	pki := peerPKI(t)
	e, err := StartEtcd(t.TempDir(), "127.0.0.1:0", certs.InDir(pki, "etcd"))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	checkPeerPort(t, pki, e.Peers[0].Addr().String())
}

// Three members (the chaos run's etcd): they form a cluster, so the member
// certificate passes between peers, and no other certificate of the CA is
// taken on any peer port.
func TestPeerPortRefusesNonMembersThreeMembers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three etcd members")
	}
	pki := peerPKI(t)
	c, err := StartEtcdCluster(context.Background(), t.TempDir(), 3, certs.InDir(pki, "etcd"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, m := range c.Members() {
		checkPeerPort(t, pki, m.spec.peer)
	}
}

// A member certificate that is not a server's is refused before etcd
// starts: its name could be a user's.
func TestMemberCertificateMustBeAServers(t *testing.T) {
	pki := peerPKI(t)
	_, err := StartEtcd(t.TempDir(), "127.0.0.1:0", certs.InDir(pki, "mallory"))
	if !errors.Is(err, ErrMemberCert) {
		t.Fatalf("etcd with a user's certificate: %v, want ErrMemberCert", err)
	}
}
