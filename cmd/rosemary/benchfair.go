package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rosemary-fhe/rosemary/tools/bench"
)

// rosemary bench fair: one identity loops PIR queries over a large database
// while another queries a small one on the same device (TLS, two
// certificates); the small query's time alone and under that load.
func runBenchFair(args []string) error {
	fs := flag.NewFlagSet("bench fair", flag.ContinueOnError)
	size := fs.String("size", "4GiB", "the large database, looped by one identity")
	small := fs.String("small", "16MiB", "the small database, queried by another")
	recordSize := fs.Int("record-size", 256, "bytes per record")
	light := fs.Int("queries", 5, "small queries alone and under load")
	seed := fs.Uint64("seed", 1, "seed of the records and the indices")
	scheme := fs.String("scheme", "lwe", "both databases': lwe (hint-free LWE PIR, the default) or bgv")
	dir := fs.String("store", "", "store directory (default: rosemary-bench-pir-SCHEME-SIZE in the temporary directory, shared with bench pir)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	n, err := bench.ParseSize(*size)
	if err != nil {
		return err
	}
	m, err := bench.ParseSize(*small)
	if err != nil {
		return err
	}
	if *dir == "" {
		*dir = filepath.Join(os.TempDir(), "rosemary-bench-pir-"+*scheme+"-"+*size)
	}
	device, err := childDeviceCommand()
	if err != nil {
		return err
	}
	ctx, stop := untilInterrupted()
	defer stop()
	bar := newProgressBar()
	rep, err := bench.RunFair(ctx, bench.FairOptions{SmallSize: m, Light: *light, PIROptions: bench.PIROptions{Scheme: *scheme, Size: n,
		RecordSize: *recordSize, Seed: *seed, StoreDir: *dir, DeviceCommand: device, Log: bar.logf("bench fair"),
		Progress: func(stage string, done, total int64) { bar.show(stage, done, total) }}})
	bar.done()
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(rep)
	}
	fmt.Printf("fair admission (%s, %s, measured here): a %s query alone %.3f s (device %.3f s), while another identity loops %s queries %.3f s (device %.3f s): %.2f× (device %.2f×, medians %.2f×; cycles %s); %d large queries of %.2f s meanwhile; host cores alone: device %.2f, clients %.2f, other %.2f; under load: %.2f, %.2f, %.2f; records correct: %v\n",
		rep.Transport, rep.Scheme, *small, rep.LightAloneS, rep.LightAloneDeviceS, *size, rep.LightUnderLoadS, rep.LightUnderLoadDeviceS, rep.Ratio, rep.DeviceRatio,
		rep.MedianRatio, fmt.Sprintf("%.2f", rep.CycleRatios), rep.HeavyQueries, rep.HeavyMeanS, rep.CoresAlone.Device, rep.CoresAlone.Client, rep.CoresAlone.Other,
		rep.CoresUnderLoad.Device, rep.CoresUnderLoad.Client, rep.CoresUnderLoad.Other, rep.Correct)
	return nil
}
