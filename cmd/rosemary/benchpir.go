package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/tools/bench"
	"github.com/rosemary-fhe/rosemary/tools/report"
)

func runBenchPIR(args []string) error {
	fs := flag.NewFlagSet("bench pir", flag.ContinueOnError)
	size := fs.String("size", "1GiB", "database size (e.g. 4GiB)")
	recordSize := fs.Int("record-size", 256, "bytes per record")
	queries := fs.Int("queries", 20, "queries at random indices (the first and last record included)")
	seed := fs.Uint64("seed", 1, "seed of the records and the indices")
	dir := fs.String("store", "", "store directory (default: rosemary-bench-pir-SIZE in the temporary directory; reused when it holds the same database)")
	dev := fs.String("device", "", "address of a running `rosemary device serve` on --store (default: start one as a child process)")
	lattigo := fs.Bool("lattigo", true, "also answer one query host-only with Lattigo reading the store")
	asJSON := fs.Bool("json", false, "print JSON")
	tls := addTransportFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	// A child device serves TLS with certificates made for the run, or
	// plaintext with --insecure-plaintext; a --device is dialled as the
	// transport flags say.
	var dial []remote.Option
	if *dev != "" {
		var err error
		if dial, err = tls.dialOptions(); err != nil {
			return err
		}
	}
	n, err := bench.ParseSize(*size)
	if err != nil {
		return err
	}
	if *dir == "" {
		*dir = filepath.Join(os.TempDir(), "rosemary-bench-pir-"+*size)
	}
	device, err := childDeviceCommand()
	if err != nil {
		return err
	}
	ctx, stop := untilInterrupted()
	defer stop()
	bar := newProgressBar()
	opt := bench.PIROptions{Size: n, RecordSize: *recordSize, Queries: *queries, Seed: *seed, StoreDir: *dir, Device: *dev,
		DeviceCommand: device, Lattigo: *lattigo, Dial: dial, Plaintext: *tls.plaintext,
		Progress: func(stage string, done, total int64) {
			if stage == "build" {
				bar.show(fmt.Sprintf("building the database: %s of %s", report.Bytes(done), report.Bytes(total)), done, total)
			} else {
				bar.show(stage, done, total)
			}
			if done == total {
				bar.clear()
			}
		},
		Log: bar.logf("bench pir")}
	rep, err := bench.RunPIR(ctx, opt)
	bar.done()
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(rep)
	}
	fmt.Printf("PIR over %s (%d records of %d B, %d × %d plaintexts, %s), %d queries: correct %v (measured here)\n",
		report.Bytes(rep.DBBytes), rep.Records, rep.RecordSize, rep.Rows, rep.Cols, rep.Params, rep.Queries, rep.Correct)
	fmt.Printf("  query        %.2f s mean (%.2f–%.2f), device %.2f s; scan %.2f GB/s vs raw read %.2f GB/s (O_DIRECT %v)\n",
		rep.QuerySeconds, rep.QueryMinSeconds, rep.QueryMaxSeconds, rep.DeviceSeconds, rep.ScanGBps, rep.RawReadGBps, rep.RawReadDirect)
	fmt.Printf("  memory       %.1f GB/s (STREAM triad, every core, this run)\n", rep.MemBandwidthGBps)
	fmt.Printf("  host↔device  %s per query vs %s host-only: %.0f× less\n", report.Bytes(rep.HostDeviceBytes), report.Bytes(rep.HostOnlyBytes), rep.Reduction)
	fmt.Printf("  device       peak RSS %s, run value memory %s, %d workers\n", report.Bytes(int64(rep.DevicePeakRSS)), report.Bytes(int64(rep.DeviceValuePeak)), rep.DeviceWorkers)
	if rep.LattigoHostOnlySeconds > 0 {
		fmt.Printf("  Lattigo host-only over the store: %.2f s (correct %v), %s read\n", rep.LattigoHostOnlySeconds, rep.LattigoCorrect, report.Bytes(rep.LattigoBytesRead))
	}
	return nil
}
