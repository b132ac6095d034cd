package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
	lattigo := fs.Bool("lattigo", true, "bgv: also answer one query host-only with Lattigo reading the store")
	scheme := fs.String("scheme", "lwe", "lwe (hint-free LWE PIR, the default), bgv (a BGV query expanded on the device), or lwe,bgv: both, one after the other, on their own stores")
	lweParams := fs.String("lwe-params", "default", "lwe: parameter set (default: 128-bit; test: small, insecure)")
	batch := fs.String("batch", "", "lwe: comma-separated numbers of concurrent queries to measure throughput at (e.g. 1,4,16,64)")
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
	device, err := childDeviceCommand()
	if err != nil {
		return err
	}
	var batches []int
	for _, f := range strings.FieldsFunc(*batch, func(r rune) bool { return r == ',' }) {
		b, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || b < 1 {
			return fmt.Errorf("bench pir: --batch %q: want numbers ≥ 1", *batch)
		}
		batches = append(batches, b)
	}
	ctx, stop := untilInterrupted()
	defer stop()
	bar := newProgressBar()
	opt := bench.PIROptions{Batches: batches, Scheme: *scheme, LWEParams: *lweParams, Size: n, RecordSize: *recordSize, Queries: *queries, Seed: *seed, StoreDir: *dir, Device: *dev,
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
	var reps []*bench.PIRReport
	for _, sc := range strings.Split(*scheme, ",") {
		o := opt
		o.Scheme = strings.TrimSpace(sc)
		switch {
		case *dir == "":
			o.StoreDir = filepath.Join(os.TempDir(), "rosemary-bench-pir-"+o.Scheme+"-"+*size)
		case strings.Contains(*scheme, ","):
			o.StoreDir = filepath.Join(*dir, o.Scheme)
		}
		rep, err := bench.RunPIR(ctx, o)
		if err != nil {
			bar.done()
			return err
		}
		reps = append(reps, rep)
	}
	bar.done()
	if *asJSON {
		if len(reps) == 1 {
			return printJSON(reps[0])
		}
		return printJSON(reps)
	}
	for _, rep := range reps {
		printPIRReport(rep)
	}
	return nil
}

// printPIRReport prints one scheme's report as text.
func printPIRReport(rep *bench.PIRReport) {
	if rep.Scheme == "lwe" {
		fmt.Printf("LWE PIR over %s (%d records of %d B, a %d × %d byte matrix, %s; stored %s), %d queries: correct %v (measured here)\n",
			report.Bytes(rep.DBBytes), rep.Records, rep.RecordSize, rep.Rows, rep.Cols, rep.Params, report.Bytes(rep.StoredBytes), rep.Queries, rep.Correct)
		fmt.Printf("  warm query   %.3f s mean (%.3f–%.3f), device %.3f s: scan %.2f GB/s (device %.2f GB/s)\n",
			rep.QuerySeconds, rep.QueryMinSeconds, rep.QueryMaxSeconds, rep.DeviceSeconds, rep.ScanGBps, rep.DeviceScanGBps)
		fmt.Printf("  warm stages  scan %.3f s (%.2f GB/s) beside ring %.3f s on the device; the cached store read with no compute %.2f GB/s\n",
			rep.ScanStageSeconds, rep.ScanStageGBps, rep.RingStageSeconds, rep.CachedReadGBps)
		cold := "cold query  "
		if rep.ColdIsWarm {
			cold = "first query " // the daemon's mappings may keep the store's pages: not a cold figure
		}
		fmt.Printf("  %s %.3f s: scan %.2f GB/s vs raw read %.2f GB/s (the better of before %.2f and after %.2f; %d requests in flight, O_DIRECT %v)\n",
			cold, rep.ColdQuerySeconds, rep.ColdScanGBps, rep.RawReadGBps, rep.RawReadBeforeGBps, rep.RawReadAfterGBps, rep.RawReadInFlight, rep.RawReadDirect)
		if rep.ColdIsWarm {
			fmt.Println("               (--device: the daemon's long-lived mappings keep pages that dropping the cache does not evict; the first query may find the store cached)")
		}
		fmt.Printf("  per query    %s up, %s down (on the connection); keys and program once: %s\n",
			report.Bytes(rep.QueryUpBytes), report.Bytes(rep.QueryDownBytes), report.Bytes(rep.SetupBytes))
		if rep.BuildSeconds > 0 {
			fmt.Printf("  load         %.1f s (tiles and hint preprocessing)\n", rep.BuildSeconds)
		}
		for _, b := range rep.Batches {
			fmt.Printf("  batch %-3d    %.2f queries/s (%d queries in %.2f s, %.1f per scan pass, correct %v)\n", b.B, b.QueriesPerS, b.Queries, b.Seconds, b.MeanPass, b.Correct)
		}
		fmt.Printf("  memory       %.2f GB/s read-only sweep (a scan's ceiling), %.2f GB/s STREAM triad (every core, this run)\n", rep.MemReadGBps, rep.MemBandwidthGBps)
		if rep.ScanRoofQueryGBps > 0 {
			fmt.Printf("  compute      %.1f query-GB/s: the scan's multiply-adds alone allow %.2f queries/s at any batch (every core, this run)\n",
				rep.ScanRoofQueryGBps, rep.BatchRoofQueriesPerS)
		}
		fmt.Printf("  device       peak RSS %s (own memory %s at most; mapped store pages %s), %d workers\n", report.Bytes(int64(rep.DevicePeakRSS)),
			report.Bytes(int64(rep.DevicePeakAnonRSS)), report.Bytes(int64(rep.DevicePeakFileRSS)), rep.DeviceWorkers)
		return
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
}
