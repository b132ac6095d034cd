package cluster_test

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/cluster/chaos"
)

// The fault schedule's knobs: `go test ./cluster -run FaultSchedule
// -faults.seed 7 -faults.duration 5m -faults.rounds 20` runs a longer
// schedule than the default (one round of every fault track). `rosemary
// chaos` runs the same schedule on `rosemary device serve` processes.
var (
	faultSeed     = flag.Uint64("faults.seed", 1, "TestClusterFaultSchedule: the schedule's seed")
	faultDuration = flag.Duration("faults.duration", 0, "TestClusterFaultSchedule: inject faults for this long, pacing -faults.rounds over it (0: the rounds without pause)")
	faultRounds   = flag.Int("faults.rounds", 1, "TestClusterFaultSchedule: rounds of every fault track")
)

// A seeded schedule of every fault kind — SIGKILL and restart, SIGSTOP and
// SIGCONT, a flipped bit in a stored page, a wiped store, an etcd member
// stopped, etcd without quorum, two loads at once, a full disk (when the
// test may mount a tmpfs) — runs among four device processes and three
// etcd members while two clients query without pause and a loader
// publishes new generations. Every answer must be the record of the load
// that published the generation it names, published during the query;
// every failed query a named error (never a hang); after the faults heal,
// every replica of the last load answers exactly on its own and no device
// keeps the shard databases of dropped generations (package chaos checks
// all of it).
func TestClusterFaultSchedule(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd members and device processes and injects faults")
	}
	cfg := chaos.Config{
		Dir: t.TempDir(), Devices: 4, EtcdMembers: 3, Seed: *faultSeed, Duration: *faultDuration, Rounds: *faultRounds,
		Scheme:    client.SchemeBGV, // BGV shards here, LWE in newCluster (see there)
		DiskBytes: 128 << 20,
		// Devices on mutual TLS: the database's owner loads and queries,
		// the coordinator (an admin) repairs, sweeps and reconciles.
		Device: func(s chaos.DeviceSpec) *exec.Cmd {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), deviceEnv+"="+strings.Join([]string{s.Store, strings.Join(s.Etcd, ","), s.ID, s.PKI, s.Scrub.String(), "tls", s.Metrics}, "|"))
			return cmd
		},
		EtcdMember:    spawnMember, // a stopped member is killed
		DeviceMetrics: true,
		Log:           testLog{t},
		ProgressEvery: 15 * time.Second,
	}
	rep, err := chaos.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep.Summary())
	for _, a := range rep.Anomalies {
		t.Errorf("anomaly: %s", a)
	}
	if rep.Queries == 0 {
		t.Error("no query was answered")
	}
	// The devices' own counters, read from their /metrics: the queries
	// ran on them and the scrubs read their stores.
	if rep.DeviceCounters["runs"] == 0 || rep.DeviceCounters["scrubbed_bytes"] == 0 || rep.DeviceCounters["wire_sent_bytes"] == 0 {
		t.Errorf("device counters %v: no runs, scrubbed bytes or bytes sent", rep.DeviceCounters)
	}
	for _, k := range chaos.Kinds() {
		if why, skipped := rep.Skipped[k]; skipped {
			t.Logf("%s not injected: %s", k, why)
			continue
		}
		if rep.Faults[k] < *faultRounds && *faultDuration == 0 {
			t.Errorf("%d %s faults injected, want %d", rep.Faults[k], k, *faultRounds)
		}
	}
	if _, err := os.Stat(filepath.Join(cfg.Dir, "logs")); err != nil {
		t.Error(err)
	}
}

// testLog writes a run's progress lines to the test's log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
