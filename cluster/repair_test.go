package cluster_test

import (
	"bytes"
	"context"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/object"
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

// A device that still holds a copy of a shard (left by a move away, or by
// a copy whose check failed) becomes its new replica: the repair drops the
// stale copy first. Without that, the copy's manifest made the device
// refuse the member objects the source had gained since (here one put
// there by hand; in a run, a client's keys uploaded while a copy ran), and
// every repair onto it failed the same way.
func TestClusterRepairReplacesAStaleCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and device processes")
	}
	ctx := context.Background()
	c, _, procs := newCluster(t, 3)
	const n = 512
	data := records(83, n, recSize)
	m := createPIR(t, c, "db", data, 1, 2)
	if got := m.Shards[0].Replicas; len(got) != 2 || got[0] != "d0" || got[1] != "d1" {
		t.Fatalf("replicas %v, want [d0 d1]", got)
	}
	shard := m.ShardName(0)
	dial := func(i int) api.Device {
		t.Helper()
		d, err := remote.Dial(procs[i].addr, remote.WithPlaintext())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	}
	d0, d2 := dial(0), dial(2)
	// d2 holds a copy of the shard, then the replicas gain a member object.
	if _, err := d2.CopyFrom(ctx, &devicepb.CopyFromRequest{Source: procs[0].addr, Prefix: shard + "/"}); err != nil {
		t.Fatal(err)
	}
	member := objname.Member(shard, cluster.PlaintextOwner) + "gained"
	for _, d := range []api.Device{d0, dial(1)} {
		if _, err := d.Put(ctx, api.PutRaw(member, object.KindBlob, object.BlobShape(8), [][]byte{[]byte("12345678")})); err != nil {
			t.Fatal(err)
		}
	}
	procs[1].cmd.Process.Signal(syscall.SIGKILL)
	waitDevices(t, c, 2)
	copied, err := c.Repair(ctx, "db")
	if err != nil {
		t.Fatalf("repair onto the device holding a stale copy: %v", err)
	}
	if m, err = c.Info(ctx, "db"); err != nil || copied != 1 || replicasOn(m, "d2") != 1 {
		t.Fatalf("repair copied %d, map %v, %v: want the replica on d2", copied, m.Shards[0].Replicas, err)
	}
	if _, err := d2.Get(ctx, &devicepb.GetRequest{Name: member}); err != nil {
		t.Fatalf("the new replica lacks the member object the source held: %v", err)
	}
	procs[0].cmd.Process.Signal(syscall.SIGKILL) // d2 answers alone
	waitDevices(t, c, 1)
	for _, i := range []int{0, n - 1} {
		a, err := c.Get(ctx, "db", i)
		if err != nil || !bytes.Equal(a.Record, data[i*recSize:(i+1)*recSize]) {
			t.Fatalf("record %d from the new replica: %v", i, err)
		}
	}
}
