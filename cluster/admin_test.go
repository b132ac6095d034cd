package cluster_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/programs"
	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/store"
)

// startTLSDevice starts a device process on mutual TLS with its own
// certificate that joins the cluster as id.
func startTLSDevice(t *testing.T, e *testEtcd, id string) *proc {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), deviceEnv+"="+strings.Join([]string{dir, e.endpoint, id, e.pki, "0s", "tls"}, "|"))
	return startProc(t, cmd, id)
}

// userOf is user name's cluster client, on TLS to etcd and the devices.
func userOf(t *testing.T, e *testEtcd, name string) *cluster.Client {
	t.Helper()
	keys, err := client.NewKeys(filepath.Join(t.TempDir(), "keys"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := cluster.Open(context.Background(), e.as(t, name), keys, remote.WithTLS(tlsOf(t, e, name)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.Scheme = client.SchemeBGV
	c.Programs = programs.New()
	return c
}

func tlsOf(t *testing.T, e *testEtcd, name string) *tls.Config {
	t.Helper()
	cfg, err := certs.ClientConfig(certs.InDir(e.pki, name))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// The coordinator, an admin, repairs a database it does not own on
// devices that check every caller: a replica short of one object is
// cleared and copied again, a stale shard of the owner's left on a device
// is swept — and another owner's database of the same name, whose shard
// names look just as stale to the coordinator, is left whole.
func TestClusterCoordinatorRepairsAUsersDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and devices")
	}
	ctx := context.Background()
	e := startEtcd(t)
	var addrs []string
	for i := range 2 {
		addrs = append(addrs, startTLSDevice(t, e, fmt.Sprintf("d%d", i)).addr)
	}
	alice, bob := userOf(t, e, "alice"), userOf(t, e, "bob")
	waitDevices(t, alice, 2)
	const n = 64
	aliceData, bobData := records(81, n, recSize), records(82, n, recSize)
	m := createPIR(t, alice, "db", aliceData, 2, 2)
	createPIR(t, bob, "db", bobData, 2, 2)

	dial := func(name, addr string) api.Device {
		d, err := remote.Dial(addr, remote.WithTLS(tlsOf(t, e, name)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	}
	list := func(name, addr, prefix string) map[string]bool {
		resp, err := dial(name, addr).List(ctx, &devicepb.ListRequest{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, o := range resp.Objects {
			out[o.Name] = true
		}
		return out
	}
	// Alice's replica of shard 0 on d0 loses a data object; a shard of a
	// load of hers that never published stays on d1.
	a0 := dial("alice", addrs[0])
	for name := range list("alice", addrs[0], m.ShardName(0)+"/") {
		if name != objname.Manifest(m.ShardName(0)) {
			if _, err := a0.Delete(ctx, &devicepb.DeleteRequest{Name: name}); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	stale := "db.g9.t1.s0/head"
	if _, err := dial("alice", addrs[1]).Put(ctx, mustPut(stale, object.Kind(store.KindCiphertext), 1, 1, [][]uint64{make([]uint64, 2048)}, 8)); err != nil {
		t.Fatal(err)
	}
	bobBefore := [2]map[string]bool{list("bob", addrs[0], "db.g"), list("bob", addrs[1], "db.g")}

	coord := userOf(t, e, "coordinator")
	copied, err := coord.Repair(ctx, "alice/db")
	if err != nil || copied != 1 {
		t.Fatalf("the coordinator's repair of alice's database: %d copied, %v; want the short replica copied again", copied, err)
	}
	if list("alice", addrs[1], "db.g9.")[stale] {
		t.Error("alice's stale shard survived the coordinator's sweep")
	}
	for i, addr := range addrs {
		if got := list("bob", addr, "db.g"); len(got) != len(bobBefore[i]) {
			t.Errorf("bob's objects on d%d: %d, before alice's repair %d", i, len(got), len(bobBefore[i]))
		}
	}
	if got, want := list("alice", addrs[0], m.ShardName(0)+"/"), list("alice", addrs[1], m.ShardName(0)+"/"); len(got) != len(want) {
		t.Errorf("alice's repaired replica holds %d objects, the other %d", len(got), len(want))
	}
	wantExact(t, alice, aliceData, 0, 2, n-2)
	wantExact(t, bob, bobData, 0, 1, n-1)
}

// mustPut is the Put of an object given as words (api.NewPut), for tests.
func mustPut(name string, kind object.Kind, polys, limbs int, data [][]uint64, wordBytes int) *devicepb.PutRequest {
	put, err := api.NewPut(name, kind, polys, limbs, data, wordBytes)
	if err != nil {
		panic(err)
	}
	return put
}
