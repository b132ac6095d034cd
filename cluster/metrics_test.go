package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/internal/metrics"
)

// scrape reads http://addr/metrics: each sample's value by its name and
// labels as the text format prints them.
func scrape(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// serve serves a registry filled by register at /metrics on loopback.
func serve(t *testing.T, register func(prometheus.Registerer) error) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	if err := register(reg); err != nil {
		t.Fatal(err)
	}
	s, err := metrics.Listen("127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.Addr().String()
}

// The coordinator's and a device's /metrics move with what they do: a
// query that fails over counts a failover, a query, its bytes; the device
// that answered counts a run and the RunStream call.
func TestClusterMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and devices")
	}
	ctx := context.Background()
	if _, err := metrics.Listen("0.0.0.0:0", prometheus.NewRegistry()); err == nil {
		t.Fatal("a /metrics listener on a public address was accepted")
	}
	c, _, addrs, devs := newGatedClusterDevices(t, 2)
	coord := serve(t, c.RegisterMetrics)
	dev1 := serve(t, devs[1].RegisterMetrics)
	const n = 2048
	data := records(71, n, recSize)
	m := createPIR(t, c, "db", data, 1, 2)
	// Shard 0 is gone from d0, its first replica: the query fails over.
	keys, err := client.NewKeys(filepath.Join(t.TempDir(), "keys"))
	if err != nil {
		t.Fatal(err)
	}
	dc, err := client.Open(ctx, addrs[0], keys, remote.WithPlaintext())
	if err != nil {
		t.Fatal(err)
	}
	if err := wipeDB(ctx, dc.Device(), m.ShardName(0)); err != nil {
		t.Fatal(err)
	}
	dc.Close()

	before := scrape(t, dev1)
	a, err := c.Get(ctx, "db", 5)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Record, data[5*recSize:6*recSize]) || a.Retries != 1 {
		t.Fatalf("exact %v after %d retries", bytes.Equal(a.Record, data[5*recSize:6*recSize]), a.Retries)
	}
	got := scrape(t, coord)
	for name, want := range map[string]float64{
		`rosemary_cluster_failovers_total`:                            1,
		`rosemary_cluster_hedges_total`:                               0,
		`rosemary_cluster_query_duration_seconds_count{op="get"}`:     1,
		`rosemary_cluster_query_bytes_total`:                          float64(a.DeviceBytes["d1"]),
		`rosemary_cluster_loads_total{outcome="published"}`:           1,
		`rosemary_cluster_repairs_total`:                              0,
		`rosemary_cluster_query_duration_seconds_count{op="nearest"}`: -1, // absent: no nearest query
	} {
		v, ok := got[name]
		if want < 0 {
			if ok {
				t.Fatalf("%s present (%v)", name, v)
			}
			continue
		}
		if !ok || v != want {
			t.Fatalf("coordinator %s = %v (present %v), want %v", name, v, ok, want)
		}
	}
	after := scrape(t, dev1)
	runs := `rosemary_device_runs_total`
	streams := `rosemary_device_rpc_duration_seconds_count{code="OK",method="RunStream"}`
	if after[runs] <= before[runs] || after[streams] <= before[streams] {
		t.Fatalf("device d1: runs %v → %v, RunStream calls %v → %v: want both up", before[runs], after[runs], before[streams], after[streams])
	}
	if after[`rosemary_device_wire_sent_bytes_total`] <= before[`rosemary_device_wire_sent_bytes_total`] {
		t.Fatal("device d1 sent no bytes for the query")
	}
}

// Once attempts have a recent history, a replica that takes longer than
// most is hedged: the next replica is asked while it still works, the
// first answer wins and the stalled attempt is cancelled — no failover,
// however far the caller's deadline.
func TestClusterHedgesAStalledReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and devices")
	}
	ctx := context.Background()
	c, gates, _ := newGatedCluster(t, 2)
	coord := serve(t, c.RegisterMetrics)
	const n = 1024
	data := records(91, n, recSize)
	createPIR(t, c, "db", data, 1, 2)
	for i := range 24 { // a history of answers (d0's)
		a, err := c.Get(ctx, "db", i)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Record, data[i*recSize:(i+1)*recSize]) {
			t.Fatalf("record %d differs", i)
		}
	}
	before := scrape(t, coord)
	gates[0].close()
	qctx, cancel := context.WithTimeout(ctx, 10*time.Minute) // far: the hedge, not the deadline, moves the query on
	defer cancel()
	a, err := c.Get(qctx, "db", 700)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Record, data[700*recSize:701*recSize]) || a.DeviceBytes["d1"] == 0 || a.DeviceBytes["d0"] != 0 || a.Retries != 1 {
		t.Fatalf("with d0 stalled: exact %v, devices %v, retries %d: want d1's answer", bytes.Equal(a.Record, data[700*recSize:701*recSize]), a.DeviceBytes, a.Retries)
	}
	after := scrape(t, coord)
	hedges, failovers := "rosemary_cluster_hedges_total", "rosemary_cluster_failovers_total"
	if after[hedges]-before[hedges] != 1 || after[failovers] != before[failovers] {
		t.Fatalf("hedges %v → %v, failovers %v → %v: want one hedge, no failover", before[hedges], after[hedges], before[failovers], after[failovers])
	}
}
