package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rosemary-fhe/rosemary/tools/bench"
	"github.com/rosemary-fhe/rosemary/tools/report"
)

// rosemary bench abuse: clients of one identity send oversized, malformed
// and table-filling requests to a device while its owner queries a small
// PIR database; the device's peak own memory against its limit and the
// owner's answered queries.
func runBenchAbuse(args []string) error {
	fs := flag.NewFlagSet("bench abuse", flag.ContinueOnError)
	duration := fs.Duration("duration", 2*time.Minute, "how long the attackers send")
	memLimit := fs.Int64("memory-limit-mb", 256, "the device daemon's --memory-limit-mb, which its peak RssAnon is reported against")
	attackers := fs.Int("attackers", 3, "attacking clients (one identity, a connection each)")
	size := fs.String("size", "1MiB", "the owner's database")
	recordSize := fs.Int("record-size", 256, "bytes per record")
	lweParams := fs.String("lwe-params", "default", "LWE parameter set of the owner's database (default: 128-bit; test: small, insecure)")
	seed := fs.Uint64("seed", 1, "seed of the records and the indices")
	dir := fs.String("dir", "", "directory for the run's store and certificates (default: rosemary-bench-abuse in the temporary directory; emptied)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	n, err := bench.ParseSize(*size)
	if err != nil {
		return err
	}
	if *dir == "" {
		*dir = filepath.Join(os.TempDir(), "rosemary-bench-abuse")
	}
	device, err := childDeviceCommand()
	if err != nil {
		return err
	}
	ctx, stop := untilInterrupted()
	defer stop()
	bar := newProgressBar()
	rep, err := bench.RunAbuse(ctx, bench.AbuseOptions{Dir: *dir, DeviceCommand: device, MemoryLimitMB: *memLimit, Duration: *duration,
		Attackers: *attackers, Size: n, RecordSize: *recordSize, LWEParams: *lweParams, Seed: *seed, Log: bar.logf("bench abuse")})
	bar.done()
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(rep)
	}
	fmt.Printf("abuse (%s, measured here, %.0f s, %d attackers of another identity):\n", rep.Transport, rep.DurationSeconds, rep.Attackers)
	fmt.Printf("  device RssAnon: %s before the attack, %s at most (%d samples) against a limit of %s: under the limit: %v (VmHWM %s)\n",
		report.Bytes(int64(rep.BaselineAnonBytes)), report.Bytes(int64(rep.PeakAnonBytes)), rep.Samples, report.Bytes(rep.MemoryLimitBytes),
		rep.UnderLimit, report.Bytes(int64(rep.DevicePeakRSSBytes)))
	fmt.Printf("  owner (%s database): %d queries, %d failed, %d wrong records; mean %.3f s, max %.3f s; sets a program after the attack: %v\n",
		report.Bytes(rep.DBBytes), rep.OwnerQueries, rep.OwnerFailures, rep.OwnerWrong, rep.OwnerMeanSeconds, rep.OwnerMaxSeconds, rep.OwnerSetAfter)
	for _, e := range rep.OwnerErrors {
		fmt.Printf("    owner error: %s\n", e)
	}
	for name, a := range rep.Attacks {
		fmt.Printf("  %-20s %6d sent (%s each): %v\n", name, a.Sent, report.Bytes(a.Bytes), a.Codes)
	}
	return nil
}
