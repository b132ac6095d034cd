package cluster_test

import (
	"bytes"
	"context"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/device/remote"
)

// Repair copies a lost replica from a source that holds the shard, and
// restores a wiped one: the first replica listed was wiped (so its copy
// would be empty), the third's device dies; repair reconciles the wiped
// replica in place from a whole one and copies the lost one onto d3.
// Once the one replica never touched is gone too, the others answer,
// exactly.
func TestClusterRepairSkipsWipedSource(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and device processes")
	}
	ctx := context.Background()
	c, _, procs := newCluster(t, 4)
	const n = 1024
	data := records(81, n, recSize)
	m := createPIR(t, c, "db", data, 1, 3)
	if got := m.Shards[0].Replicas; len(got) != 3 || got[0] != "d0" || got[1] != "d1" || got[2] != "d2" {
		t.Fatalf("replicas %v, want [d0 d1 d2]", got)
	}
	keys, err := client.NewKeys(filepath.Join(t.TempDir(), "keys"))
	if err != nil {
		t.Fatal(err)
	}
	dc, err := client.Open(ctx, procs[0].addr, keys, remote.WithPlaintext())
	if err != nil {
		t.Fatal(err)
	}
	if err := wipeDB(ctx, dc.Device(), m.ShardName(0)); err != nil { // d0's disk "wiped"
		t.Fatal(err)
	}
	dc.Close()
	procs[2].cmd.Process.Signal(syscall.SIGKILL)
	waitDevices(t, c, 3)
	copied, err := c.Repair(ctx, "db")
	if err != nil {
		t.Fatal(err)
	}
	m, err = c.Info(ctx, "db")
	if err != nil {
		t.Fatal(err)
	}
	if copied != 2 || replicasOn(m, "d3") != 1 || replicasOn(m, "d0") != 1 {
		t.Fatalf("repair copied %d replicas, map %v: want d0 copied again in place and a copy onto d3", copied, m.Shards[0].Replicas)
	}
	// d1, the only replica never touched, goes too: d0 and d3 answer.
	procs[1].cmd.Process.Signal(syscall.SIGKILL)
	waitDevices(t, c, 2)
	for _, i := range []int{0, 517, n - 1} {
		a, err := c.Get(ctx, "db", i)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Record, data[i*recSize:(i+1)*recSize]) || a.DeviceBytes["d1"] != 0 {
			t.Fatalf("record %d: exact %v, devices %v: want d0's or d3's answer", i, bytes.Equal(a.Record, data[i*recSize:(i+1)*recSize]), a.DeviceBytes)
		}
	}
}

// wipeDB deletes every object of database name on dev, its manifest last:
// a disk "wiped" of it (a test's key set is not the database's, so
// client.Drop, which reads the verified manifest, is not the tool).
func wipeDB(ctx context.Context, dev api.Device, name string) error {
	list, err := dev.List(ctx, &devicepb.ListRequest{Prefix: name + "/"})
	if err != nil {
		return err
	}
	for _, o := range list.Objects {
		if o.Name == objname.Manifest(name) {
			continue
		}
		if _, err := dev.Delete(ctx, &devicepb.DeleteRequest{Name: o.Name}); err != nil {
			return err
		}
	}
	_, err = dev.Delete(ctx, &devicepb.DeleteRequest{Name: objname.Manifest(name)})
	return err
}
