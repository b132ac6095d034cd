package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/tools/bench"
)

// bench pir --compare on a small database (test parameters) with its own
// device process: every record of the hint-free queries, both cold runs
// and SimplePIR's mode is checked; both cold runs are cold (the second on
// a fresh device, whose predecessor's mappings would have kept the store
// cached); the device's CPU a warm query and the hint-downloaded scan's
// are both measured, and the overhead is their ratio.
func TestBenchPIRCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("starts device processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("ROSEMARY_TEST_AS_MAIN", "1") // the child device runs main
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := bench.RunPIR(ctx, bench.PIROptions{Scheme: "lwe", LWEParams: "test", Size: 1 << 20, RecordSize: 64, Queries: 4, Seed: 11,
		StoreDir: filepath.Join(t.TempDir(), "store"), DeviceCommand: []string{exe, "device", "serve", "--log-level", "warn"}, Compare: true, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Correct || len(rep.Failures) != 0 {
		t.Fatalf("records wrong: %v", rep.Failures)
	}
	if len(rep.ColdRuns) != 2 || rep.ColdIsWarm || rep.ColdScanGBps <= 0 {
		t.Fatalf("cold runs %+v, cold is warm %v", rep.ColdRuns, rep.ColdIsWarm)
	}
	for _, run := range rep.ColdRuns {
		if run.Warm || !run.Correct {
			t.Fatalf("cold run %+v", run)
		}
	}
	hd := rep.HintDownload
	if hd == nil || !hd.Correct || hd.Queries != 4 || rep.HintDownloadDeviceCPUSeconds != hd.DeviceCPUSeconds || hd.DeviceCPUSeconds <= 0 {
		t.Fatalf("hint download %+v", hd)
	}
	if rep.DeviceCPUPerQuery <= 0 || rep.HintFreeCPUOverhead != rep.DeviceCPUPerQuery/hd.DeviceCPUSeconds {
		t.Fatalf("device CPU %v a query, hint download %v, overhead %v", rep.DeviceCPUPerQuery, hd.DeviceCPUSeconds, rep.HintFreeCPUOverhead)
	}
}
