package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
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

// The text names a warm "cold" run warm and puts SimplePIR's mode's CPU
// beside the hint-free query's, with their ratio.
func TestPrintLWEReportLabels(t *testing.T) {
	rep := &bench.PIRReport{Scheme: "lwe", DeviceCPUPerQuery: 0.45, HintDownloadDeviceCPUSeconds: 0.15, HintFreeCPUOverhead: 3,
		HintDownload: &bench.HintDownload{HintBytes: 16 << 20, Correct: true},
		ColdRuns:     []bench.ColdRun{{Order: bench.OrderRawFirst, Warm: true, CachedBytes: 1 << 30, StoreBytes: 1 << 30}, {Order: bench.OrderQueryFirst}}}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	printPIRReport(rep)
	os.Stdout = stdout
	w.Close()
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"WARM, not cold query", "(raw read, then the cold query; 1.00 GiB of 1.00 GiB cached at the start: WARM, not cold)",
		"cold query   ", "0.450 core-s a warm hint-free query; 0.150 core-s in SimplePIR's mode", "hint-free costs the device 3.00× the CPU", "hint 16.00 MiB downloaded once"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the text lacks %q:\n%s", want, out)
		}
	}
}
