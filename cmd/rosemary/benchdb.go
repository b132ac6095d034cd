package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rosemary-fhe/rosemary/tools/bench"
)

func runBenchDB(args []string) error {
	fs := flag.NewFlagSet("bench db", flag.ContinueOnError)
	size := fs.String("records", "1GiB", "size of the generated record file")
	recordSize := fs.Int("record-size", 256, "bytes per record")
	gets := fs.Int("gets", 20, "records read back at random indices (first and last included)")
	vectors := fs.Int("vectors", 1000000, "vectors in the generated .fvecs file")
	dim := fs.Int("dim", 96, "vector dimensions (96: Deep1B's)")
	queries := fs.Int("queries", 200, "nearest-neighbour queries checked against brute force")
	seed := fs.Uint64("seed", 1, "seed of the generated data and the queries")
	dir := fs.String("dir", filepath.Join(os.TempDir(), "rosemary-bench-db"), "work directory (generated files, store, keys)")
	asJSON := fs.Bool("json", false, "print JSON")
	plaintext := fs.Bool("insecure-plaintext", false, "the device serves plaintext on loopback (default: TLS 1.3 with client certificates made for the run)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	n, err := bench.ParseSize(*size)
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
	rep, err := bench.RunDB(ctx, bench.DBOptions{RecordBytes: n, RecordSize: *recordSize, Gets: *gets, Vectors: *vectors, Dim: *dim,
		Queries: *queries, Seed: *seed, Dir: *dir, Device: device, Plaintext: *plaintext,
		Log:      bar.logf("bench db"),
		Progress: func(stage string, done, total int64) { bar.show(stage, done, total) }})
	bar.done()
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(rep)
	}
	fmt.Printf("records: %d B file, %d records loaded in %.1f s; %d/%d read back exactly (%.2f s each)\n",
		rep.RecordFileBytes, rep.Records, rep.RecordLoadS, rep.GetsCorrect, rep.Gets, rep.GetMeanS)
	fmt.Printf("vectors: %d × %d (%d B file) loaded in %.1f s; top-1 = brute force on %d/%d queries (%.1f%%), %.2f s each (measured here)\n",
		rep.Vectors, rep.Dim, rep.VectorFileBytes, rep.VectorLoadS, rep.Top1Agree, rep.Queries, 100*rep.Top1Rate, rep.QueryMeanS)
	return nil
}
