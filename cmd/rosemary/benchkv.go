package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/tools/bench"
	"github.com/rosemary-fhe/rosemary/tools/report"
)

func runBenchKV(args []string) error {
	fs := flag.NewFlagSet("bench kv", flag.ContinueOnError)
	records := fs.String("records", "1M", "keys in the generated CSV (K, M suffixes: ×1000)")
	valueSize := fs.Int("value-size", 256, "bytes per value (also the database's maximum value)")
	lookups := fs.Int("lookups", 100, "lookups of present keys, and as many of absent keys")
	updates := fs.Int("updates", 1000, "puts and deletes after the lookups, each checked by a later lookup")
	many := fs.Int("many", 64, "GetMany batch against as many Gets on a PIR database of the same values (0: skip it)")
	deltaMax := fs.Int("delta-max", 0, fmt.Sprintf("bound on the delta of updates, bytes (0: %d; at most %d)", client.DefaultDeltaMax, client.MaxDeltaMax))
	compactAt := fs.Int("compact-at", 0, "delta size at which an update starts a compaction in the background (0: half of --delta-max)")
	params := fs.String("lwe-params", "", "LWE parameter set (default; test is small and insecure)")
	seed := fs.Uint64("seed", 1, "seed of the generated data and the keys looked up")
	dir := fs.String("dir", filepath.Join(os.TempDir(), "rosemary-bench-kv"), "work directory (generated CSV, store, keys)")
	asJSON := fs.Bool("json", false, "print JSON")
	plaintext := fs.Bool("insecure-plaintext", false, "the device serves plaintext on loopback (default: TLS 1.3 with client certificates made for the run)")
	longTail := fs.Bool("long-tail", false, "issue 40's keyword set instead: values of 0.1 KB to --max-value with a long tail (median 0.7 KB), one database per --layouts, fresh-process lookups and LookupMany, every answer checked")
	maxValue := fs.Int("max-value", 80000, "--long-tail: the largest value (and the databases' maximum)")
	layouts := fs.String("layouts", "heap,cuckoo", "--long-tail: the kv layouts measured, in order")
	fresh := fs.Int("fresh", 9, "--long-tail: lookups from a fresh process each (heap layout)")
	freshOld := fs.Int("fresh-old", 3, "--long-tail: lookups from a fresh process each (cuckoo layout)")
	manyKeys := fs.Int("many-keys", 16, "--long-tail: keys of one LookupMany (heap layout; 0: skip)")
	manyOld := fs.Int("many-old", 4, "--long-tail: keys of one LookupMany (cuckoo layout; 0: skip)")
	warm := fs.Int("warm", 3, "--long-tail: in-process lookups of the largest value, with the device's CPU (heap layout)")
	warmOld := fs.Int("warm-old", 1, "--long-tail: the same for the cuckoo layout")
	heapRows := fs.Int("heap-rows", 0, "--long-tail: stored bytes of a heap column (0: the default, N or 2N by --max-value and the data)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	n, err := parseCount(*records)
	if err != nil {
		return err
	}
	device, err := childDeviceCommand()
	if err != nil {
		return err
	}
	ctx, stop := untilInterrupted()
	defer stop()
	bar := newProgressBar()
	if *longTail {
		rep, err := bench.RunKVLarge(ctx, bench.KVLargeOptions{Records: n, MaxValue: *maxValue, Layouts: strings.Split(*layouts, ","),
			Fresh: *fresh, FreshOld: *freshOld, Many: *manyKeys, ManyOld: *manyOld, Warm: *warm, WarmOld: *warmOld, HeapRows: *heapRows, LWEParams: *params, Seed: *seed,
			Dir: *dir, Device: device, Exe: device[0], Plaintext: *plaintext, Log: bar.logf("bench kv"),
			Progress: func(stage string, done, total int64) { bar.show(stage, done, total) }})
		bar.done()
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(rep)
		}
		fmt.Printf("kv --long-tail: %d keys, %d B of values (min %d, median %d, p99 %d, max %d), %s, load average %s\n",
			rep.Records, rep.DataBytes, rep.ValueMin, rep.ValueMed, rep.ValueP99, rep.ValueMax, rep.Transport, rep.LoadAvg)
		for _, l := range rep.Layouts {
			fmt.Printf("%s: load %.1f s, %d B stored (%.2f× the data), %d queries a lookup; fresh-process lookup median %.3f s (%d/%d right); warm %.3f s, device CPU %.2f s; LookupMany of %d: %.3f s (%.1f× the fresh median), %d right; load average %s\n",
				l.Layout, l.LoadS, l.StoredBytes, l.StoredOverData, l.QueriesPerLookup, l.FreshMedianS, l.FreshCorrect, len(l.FreshS), l.WarmS, l.DeviceCPUPerS, l.ManyKeys, l.ManyS, l.ManyOverFresh, l.ManyCorrect, l.LoadAvgAtLookups)
		}
		fmt.Println("(measured here)")
		return nil
	}
	rep, err := bench.RunKV(ctx, bench.KVOptions{Records: n, ValueSize: *valueSize, Lookups: *lookups, Updates: *updates, Many: *many, DeltaMax: *deltaMax, CompactAt: *compactAt,
		LWEParams: *params, Seed: *seed, Dir: *dir, Device: device, Plaintext: *plaintext,
		Log:      bar.logf("bench kv"),
		Progress: func(stage string, done, total int64) { bar.show(stage, done, total) }})
	bar.done()
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(rep)
	}
	fmt.Printf("kv: %d keys of %d B values, loaded in %.1f s (%d buckets of %d B, %d B stored, %s)\n", rep.Records, rep.ValueSize, rep.LoadS, rep.Buckets, rep.BucketBytes, rep.StoredBytes, rep.Transport)
	fmt.Printf("lookups: present %d/%d exact, %.3f s; absent %d/%d not found, %.3f s; %d queries each; %d B on the wire (%d B with the full delta)\n",
		rep.PresentCorrect, rep.Lookups, rep.PresentMeanS, rep.AbsentNotFound, rep.Lookups, rep.AbsentMeanS, rep.QueriesPerLookup, rep.WireBytesPerLookup, rep.WireBytesPerLookupDelta)
	fmt.Printf("updates: %d, %.4f s mean, %.4f s p99, %.4f s max, %d over 100 ms; %d background compactions (%.1f s), %d stalls; %d verified; compaction %.1f s with %d lookups meanwhile (%d failed, %d wrong)\n",
		rep.Updates, rep.UpdateMeanS, rep.UpdateP99S, rep.UpdateMaxS, rep.UpdatesOver100ms, rep.BackgroundCompactions, rep.BackgroundCompactS, rep.UpdateStalls, rep.UpdatesVerified, rep.CompactS, rep.LookupsDuringCompct, rep.FailedDuringCompact, rep.WrongDuringCompact)
	fmt.Printf("updates beside a background compaction: %d, %.4f s max, %d over 100 ms\n",
		rep.UpdatesBesideCompaction, rep.UpdateMaxBesideCompactionS, rep.UpdatesOver100msBesideCompaction)
	if rep.Many > 0 {
		fmt.Printf("%d Gets: %.2f s device CPU (%.2f s wall); GetMany: %.2f s device CPU (%.2f s wall); right: %v\n",
			rep.Many, rep.GetsDeviceCPUS, rep.GetsWallS, rep.GetManyDeviceCPUS, rep.GetManyWallS, rep.ManyCorrect)
	}
	fmt.Printf("peak resident set: device %s (own memory %s at most, mapped store pages %s), client %s\n", report.Bytes(int64(rep.DevicePeakRSS)),
		report.Bytes(int64(rep.DevicePeakAnonRSS)), report.Bytes(int64(rep.DevicePeakFileRSS)), report.Bytes(int64(rep.ClientPeakRSS)))
	fmt.Println("(measured here)")
	return nil
}

// parseCount reads a count with an optional K or M suffix (×1000, ×10^6).
func parseCount(s string) (int, error) {
	mult := 1
	switch {
	case len(s) > 1 && (s[len(s)-1] == 'M' || s[len(s)-1] == 'm'):
		mult, s = 1_000_000, s[:len(s)-1]
	case len(s) > 1 && (s[len(s)-1] == 'K' || s[len(s)-1] == 'k'):
		mult, s = 1_000, s[:len(s)-1]
	}
	var n int
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil || n < 1 {
		return 0, fmt.Errorf("bench kv: --records %q (a count, e.g. 1M)", s)
	}
	return n * mult, nil
}
