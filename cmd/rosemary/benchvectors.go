package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rosemary-fhe/rosemary/tools/bench"
)

// rosemary bench vectors: one generated .fvecs file loaded as plain and as
// encrypted vectors (db create --encrypt-vectors) into one device process;
// load time, stored bytes and query time of each, the same queries checked
// against brute force.
func runBenchVectors(args []string) error {
	fs := flag.NewFlagSet("bench vectors", flag.ContinueOnError)
	vectors := fs.Int("vectors", 100000, "vectors in the generated .fvecs file")
	dim := fs.Int("dim", 96, "vector dimensions (96: Deep1B's)")
	queries := fs.Int("queries", 20, "nearest-neighbour queries asked of both databases")
	seed := fs.Uint64("seed", 1, "seed of the generated data and the queries")
	dir := fs.String("dir", filepath.Join(os.TempDir(), "rosemary-bench-vectors"), "work directory (generated file, store, keys)")
	asJSON := fs.Bool("json", false, "print JSON")
	plaintext := fs.Bool("insecure-plaintext", false, "the device serves plaintext on loopback (default: TLS 1.3 with client certificates made for the run)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	device, err := childDeviceCommand()
	if err != nil {
		return err
	}
	ctx, stop := untilInterrupted()
	defer stop()
	bar := newProgressBar()
	rep, err := bench.RunVectors(ctx, bench.VectorsOptions{Vectors: *vectors, Dim: *dim, Queries: *queries, Seed: *seed, Dir: *dir,
		Device: device, Plaintext: *plaintext, Log: bar.logf("bench vectors"),
		Progress: func(stage string, done, total int64) { bar.show(stage, done, total) }})
	bar.done()
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(rep)
	}
	for _, m := range []bench.VectorsMode{rep.Plain, rep.Encrypted} {
		fmt.Printf("encrypted=%v: %d × %d loaded in %.1f s, %d B stored; %.3f s per query (device %.3f s); top-1 = brute force on %d/%d\n",
			m.Encrypted, rep.Vectors, rep.Dim, m.LoadS, m.StoredBytes, m.QueryMeanS, m.DeviceMeanS, m.Top1Agree, rep.Queries)
	}
	fmt.Printf("encrypted / plain (%s, measured here): load %.2f×, stored bytes %.2f×, query %.2f×\n", rep.Transport, rep.LoadX, rep.StoredX, rep.QueryX)
	return nil
}
