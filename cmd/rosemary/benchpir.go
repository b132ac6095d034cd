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
	dev := fs.String("device", "", "address of a running `rosemary device serve` on --store (default: start one as a child process); its mappings may keep the store cached, so a cold figure is labelled warm where the store stayed cached")
	lattigo := fs.Bool("lattigo", true, "bgv: also answer one query host-only with Lattigo reading the store")
	scheme := fs.String("scheme", "lwe", "lwe (hint-free LWE PIR, the default), bgv (a BGV query expanded on the device), or lwe,bgv: both, one after the other, on their own stores")
	lweParams := fs.String("lwe-params", "default", "lwe: parameter set (default: 128-bit; test: small, insecure)")
	lweMode := fs.String("lwe-mode", "packed", "lwe: packed (packing keys with each query, the answer packed; the default, as for databases) or ring (the device evaluates H·s under BGV with Galois keys uploaded once); the benchmark's store holds both")
	batch := fs.String("batch", "", "lwe: comma-separated numbers of concurrent queries to measure throughput at (e.g. 1,4,16,64)")
	logCols := fs.Int("log-cols", 0, "lwe: lay the database out below 2^N columns (0: the client's default, 18 in the packed mode: 4096 rows and 0.94 MB up at 1 GiB; 19: 2048 rows, 1.86 MB; 17: 8192 rows, 0.49 MB, four packs)")
	compare := fs.Bool("compare", false, "lwe: also run SimplePIR's mode on the same database (the client downloads the hint once; a query is the scan alone, our kernel) and report its server CPU a query beside the hint-free query's (hint_download_device_cpu_s)")
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
	if *lweMode != "ring" && *lweMode != "packed" {
		return fmt.Errorf("bench pir: --lwe-mode %q: want ring or packed", *lweMode)
	}
	ctx, stop := untilInterrupted()
	defer stop()
	bar := newProgressBar()
	opt := bench.PIROptions{Batches: batches, Scheme: *scheme, LWEParams: *lweParams, LWEPacked: *lweMode == "packed", LogCols: *logCols, Size: n, RecordSize: *recordSize, Queries: *queries, Seed: *seed, StoreDir: *dir, Device: *dev,
		DeviceCommand: device, Lattigo: *lattigo, Dial: dial, Plaintext: *tls.plaintext, Compare: *compare,
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
		printLWEReport(rep)
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

// printLWEReport prints an LWE report as text.
func printLWEReport(rep *bench.PIRReport) {
	fmt.Printf("LWE PIR over %s (%d records of %d B, a %d × %d byte matrix, %s; stored %s), %d queries: correct %v (measured here)\n",
		report.Bytes(rep.DBBytes), rep.Records, rep.RecordSize, rep.Rows, rep.Cols, rep.Params, report.Bytes(rep.StoredBytes), rep.Queries, rep.Correct)
	fmt.Printf("  warm query   %.3f s mean (%.3f–%.3f), device %.3f s: scan %.2f GB/s (device %.2f GB/s)\n",
		rep.QuerySeconds, rep.QueryMinSeconds, rep.QueryMaxSeconds, rep.DeviceSeconds, rep.ScanGBps, rep.DeviceScanGBps)
	stage, stageSeconds := "ring", rep.RingStageSeconds
	if rep.LWEMode == "packed" {
		stage, stageSeconds = "pack", rep.PackStageSeconds
	}
	fmt.Printf("  warm stages  scan %.3f s (%.2f GB/s) beside %s %.3f s on the device; the cached store read with no compute %.2f GB/s\n",
		rep.ScanStageSeconds, rep.ScanStageGBps, stage, stageSeconds, rep.CachedReadGBps)
	printDeviceCPU(rep)
	for _, run := range rep.ColdRuns {
		label := "cold"
		if run.Warm {
			label = "WARM, not cold" // the drop left the store cached: a device's mappings keep its pages
		}
		fmt.Printf("  %-12s %.3f s: scan %.2f GB/s vs raw read %.2f GB/s (%s; %s of %s cached at the start: %s)\n",
			label+" query", run.QuerySeconds, run.ScanGBps, run.RawReadGBps, run.Order, report.Bytes(run.CachedBytes), report.Bytes(run.StoreBytes), label)
	}
	fmt.Printf("  raw read     %.2f GB/s at best (%d requests in flight, O_DIRECT %v): %.2f before the first cold query, %.2f after the second; every pass:",
		rep.RawReadGBps, rep.RawReadInFlight, rep.RawReadDirect, rep.RawReadBeforeGBps, rep.RawReadAfterGBps)
	for _, r := range rep.RawReadSweeps {
		if r.Config != nil {
			kind := "direct"
			if r.Config.Buffered {
				kind = "readahead"
			}
			fmt.Printf(" %d×%d×%s %s %.2f;", r.Config.Readers, r.Config.Depth, report.Bytes(int64(r.Config.Block)), kind, r.GBps)
		}
	}
	fmt.Println(" GB/s (readers a file × requests a reader × request)")
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
}

// printDeviceCPU prints the device's CPU a warm query and, with --compare,
// SimplePIR's mode's beside it.
func printDeviceCPU(rep *bench.PIRReport) {
	dev := "unknown (a device not started here)"
	if rep.DeviceCPUPerQuery > 0 {
		dev = fmt.Sprintf("%.3f core-s", rep.DeviceCPUPerQuery)
	}
	hd := rep.HintDownload
	if hd == nil {
		fmt.Printf("  device CPU   %s a warm hint-free query\n", dev)
		return
	}
	fmt.Printf("  device CPU   %s a warm hint-free query; %.3f core-s in SimplePIR's mode (--compare: the hint downloaded, our scan alone)", dev, rep.HintDownloadDeviceCPUSeconds)
	if rep.HintFreeCPUOverhead > 0 {
		fmt.Printf(": hint-free costs the device %.2f× the CPU", rep.HintFreeCPUOverhead)
	}
	fmt.Println()
	fmt.Printf("  hint mode    scan %.3f s (%.2f GB/s), decode %.4f core-s on the client, correct %v; hint %s downloaded once (computed in %.1f s), %s up and %s down a query\n",
		hd.ScanSeconds, hd.ScanGBps, hd.ClientDecodeCPUSeconds, hd.Correct, report.Bytes(hd.HintBytes), hd.HintSeconds, report.Bytes(hd.QueryUpBytes), report.Bytes(hd.QueryDownBytes))
}
