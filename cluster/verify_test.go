package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/device/remote"
)

// holdings is what the device at addr holds under prefix: each object's
// kind, shape and whole content, by name.
func holdings(t *testing.T, addr, prefix string) map[string]string {
	t.Helper()
	ctx := context.Background()
	dev, err := remote.Dial(addr, remote.WithPlaintext())
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	list, err := dev.List(ctx, &devicepb.ListRequest{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, o := range list.Objects {
		g, err := dev.Get(ctx, &devicepb.GetRequest{Name: o.Name})
		if err != nil {
			t.Fatalf("%s: get %s: %v", addr, o.Name, err)
		}
		out[o.Name] = fmt.Sprint(o.Kind, o.Polys, o.Limbs, o.LogN, o.WordBytes, g.Data)
	}
	return out
}

// sameHoldings fails unless the devices at a and b hold the same objects
// under prefix, byte for byte (and at least one).
func sameHoldings(t *testing.T, a, b, prefix string) {
	t.Helper()
	ha, hb := holdings(t, a, prefix), holdings(t, b, prefix)
	if len(ha) == 0 || len(ha) != len(hb) {
		t.Fatalf("%s holds %d objects under %s, %s holds %d", a, len(ha), prefix, b, len(hb))
	}
	for name, v := range ha {
		if hb[name] != v {
			t.Fatalf("%s differs between %s and %s", name, a, b)
		}
	}
}

// deviceCounter reads one of a device's counters through its metrics.
func deviceCounter(t *testing.T, d *device.Device, name string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	if err := d.RegisterMetrics(reg); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// deleteObjects deletes names from the device at addr, as a disk losing
// them under the running device would.
func deleteObjects(t *testing.T, addr string, names ...string) {
	t.Helper()
	dev, err := remote.Dial(addr, remote.WithPlaintext())
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	for _, name := range names {
		if _, err := dev.Delete(context.Background(), &devicepb.DeleteRequest{Name: name}); err != nil {
			t.Fatalf("delete %s: %v", name, err)
		}
	}
}

// wantExact queries records and fails unless each is exact.
func wantExact(t *testing.T, c *cluster.Client, data []byte, idx ...int) {
	t.Helper()
	for _, i := range idx {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		a, err := c.Get(ctx, "db", i)
		cancel()
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !bytes.Equal(a.Record, data[i*recSize:(i+1)*recSize]) {
			t.Fatalf("record %d is not the one loaded (answered by %v)", i, a.DeviceBytes)
		}
	}
}

// Repair verifies what it copies: the first source serves objects that
// went bad after their checksum was computed, so the receiver refuses
// them (counted by its metrics) and the repair falls back to the next
// replica; the repaired replica then holds exactly what that one holds
// (each replica is its own database: a short one is copied again whole).
func TestClusterRepairRefusesCorruptSource(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and devices")
	}
	ctx := context.Background()
	c, gates, addrs, devs := newGatedClusterDevices(t, 3)
	const n = 512
	data := records(61, n, recSize)
	m := createPIR(t, c, "db", data, 1, 3)
	if got := m.Shards[0].Replicas; fmt.Sprint(got) != "[d0 d1 d2]" {
		t.Fatalf("replicas %v, want [d0 d1 d2]", got)
	}
	prefix := m.ShardName(0) + "/"
	// d2 loses one object of its replica; d0, the first source, rots.
	for name := range holdings(t, addrs[2], prefix) {
		if name != objname.Manifest(m.ShardName(0)) {
			deleteObjects(t, addrs[2], name)
			break
		}
	}
	gates[0].rot.Store(true)
	copied, err := c.Repair(ctx, "db")
	if err != nil || copied != 1 {
		t.Fatalf("repair: %d copied, %v; want the short replica copied again", copied, err)
	}
	if got := deviceCounter(t, devs[2], "rosemary_device_copy_checksum_failures_total"); got != 1 {
		t.Fatalf("d2 refused %v objects on their checksum, want 1 (d0's)", got)
	}
	gates[0].rot.Store(false)
	sameHoldings(t, addrs[1], addrs[2], prefix)
	wantExact(t, c, data, 0, 311, n-1)
}

// A replica's objects deleted under its running device — one object of
// one shard (a partial replica), the whole of another (wiped) — are found
// by the reconcile (the device's listing against its peer's) and copied
// back; with the other device frozen, the repaired one answers exactly.
func TestClusterReconcileRestoresWipedReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and devices")
	}
	ctx := context.Background()
	c, gates, addrs, _ := newGatedClusterDevices(t, 2)
	const n = 1024
	data := records(62, n, recSize)
	m := createPIR(t, c, "db", data, 2, 2)
	partial := holdings(t, addrs[0], m.ShardName(0)+"/")
	for name := range partial {
		if name != objname.Manifest(m.ShardName(0)) {
			deleteObjects(t, addrs[0], name)
			break
		}
	}
	var wiped []string
	for name := range holdings(t, addrs[0], m.ShardName(1)+"/") {
		wiped = append(wiped, name)
	}
	deleteObjects(t, addrs[0], wiped...)
	wantExact(t, c, data, 0, 1) // answered by d1 meanwhile
	copied, err := c.Repair(ctx, "db")
	if err != nil || copied != 2 {
		t.Fatalf("repair: %d copied, %v; want both short replicas copied again", copied, err)
	}
	for s := range m.Shards {
		sameHoldings(t, addrs[0], addrs[1], m.ShardName(s)+"/")
	}
	if copied, err := c.Repair(ctx, "db"); err != nil || copied != 0 {
		t.Fatalf("second repair: %d copied, %v; want nothing to do", copied, err)
	}
	gates[1].close()
	c.ShardTimeout = 2 * time.Second // d1 frozen: each shard's attempt there gives up soon
	wantExact(t, c, data, 0, 1, 516, 517, n-1)
}

// flipPage XORs a byte in the middle of the first channel file of a
// store: bit rot in a page of the largest object there.
func flipPage(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, "ch00")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const slot = 4096 + 16 // the test stores' page and its spare area
	off := (len(b)/slot/2)*slot + 1000
	b[off] ^= 0x20
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A byte flipped in a stored page: queries still answer exactly (the
// page fails its CRC, the other replica answers), the scrub finds it and
// quarantines its object, the reconcile copies it back from the healthy
// replica, and the repaired device answers exactly on its own.
func TestClusterScrubRepairsCorruptPage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and devices")
	}
	ctx := context.Background()
	c, gates, addrs, devs := newGatedClusterDevices(t, 2)
	const n = 1024
	data := records(63, n, recSize)
	m := createPIR(t, c, "db", data, 1, 2)
	flipPage(t, gates[0].dir)
	wantExact(t, c, data, 5, 900)
	rep, err := devs[0].Scrub(ctx)
	if err != nil || len(rep.Corrupt) != 1 {
		t.Fatalf("scrub: %+v, %v; want one corrupt object", rep, err)
	}
	if got := deviceCounter(t, devs[0], "rosemary_device_scrub_corruptions_total"); got != 1 {
		t.Fatalf("corruptions counted %v, want 1", got)
	}
	wantExact(t, c, data, 6) // d0 no longer holds it: d1 answers
	copied, err := c.Repair(ctx, "db")
	if err != nil || copied != 1 {
		t.Fatalf("repair: %d copied, %v", copied, err)
	}
	sameHoldings(t, addrs[0], addrs[1], m.ShardName(0)+"/")
	if rep, err := devs[0].Scrub(ctx); err != nil || len(rep.Corrupt) != 0 {
		t.Fatalf("scrub after the repair: %+v, %v", rep, err)
	}
	gates[1].close()
	c.ShardTimeout = 2 * time.Second
	wantExact(t, c, data, 0, 517, n-1)
}
