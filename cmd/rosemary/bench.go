package main

import (
	"flag"
	"fmt"

	"github.com/rosemary-fhe/rosemary/fhe/rns"
	"github.com/rosemary-fhe/rosemary/tools/bench/rnsbench"
	"github.com/rosemary-fhe/rosemary/tools/crosscheck"
)

func init() {
	register(command{name: "bench", summary: "measure against a baseline in the same run: kernels|ops (ours vs Lattigo), pir (GiB-scale in-storage PIR vs a raw read and Lattigo host-only), db (your own data through the client library: a record file and an .fvecs file loaded, read back, searched), fair (a small query beside another identity's looping large ones), vectors (plain vs encrypted stored vectors), kv (keyword PIR: lookups, updates, compaction, GetMany), abuse (another identity's oversized, malformed and table-filling requests beside an owner's queries: the device's peak memory and the owner's answers)", run: runBench})
}

// benchRow is one comparison line (measured here, single-threaded).
type benchRow struct {
	Kernel    string  `json:"kernel"`
	LogN      int     `json:"logN"`
	QBits     int     `json:"q_bits,omitempty"`
	Levels    int     `json:"levels,omitempty"`
	Path      string  `json:"path,omitempty"`
	OursNs    float64 `json:"ours_ns"`
	LattigoNs float64 `json:"lattigo_ns"`
	Speedup   float64 `json:"speedup"`
}

func runBench(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: rosemary bench kernels|ops|pir|db|fair|vectors|kv|abuse [--json] ...")
	}
	what := args[0]
	switch what {
	case "pir":
		return runBenchPIR(args[1:])
	case "db":
		return runBenchDB(args[1:])
	case "fair":
		return runBenchFair(args[1:])
	case "vectors":
		return runBenchVectors(args[1:])
	case "kv":
		return runBenchKV(args[1:])
	case "abuse":
		return runBenchAbuse(args[1:])
	}
	fs := flag.NewFlagSet("bench "+what, flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	logN := fs.Int("logn", 16, "log2 of the ring degree for the kernel rows")
	iters := fs.Int("iters", 20, "timed calls per kernel (median)")
	opIters := fs.Int("op-iters", 3, "timed runs per whole operation (mean)")
	preset := fs.String("preset", "ckks-16", "CKKS preset for the whole-operation rows")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	var rows []benchRow
	switch what {
	case "kernels":
		ks, err := rnsbench.BenchKernels(*logN, *iters)
		if err != nil {
			return err
		}
		for _, k := range ks {
			rows = append(rows, benchRow{Kernel: k.Kernel, LogN: k.LogN, QBits: k.QBits, Path: k.Path, OursNs: k.OursNs, LattigoNs: k.LattigoNs, Speedup: k.Speedup})
		}
		fallthrough
	case "ops":
		ops, err := crosscheck.TimeOps(*preset, *opIters)
		if err != nil {
			return err
		}
		for _, o := range ops {
			rows = append(rows, benchRow{Kernel: o.Op, LogN: o.LogN, Levels: o.Levels, Path: rns.Accelerated() + "+interpreter", OursNs: o.OursNs, LattigoNs: o.LattigoNs, Speedup: o.Speedup})
		}
	default:
		return fmt.Errorf("unknown bench %q (kernels, ops, pir)", what)
	}
	if *asJSON {
		return printJSON(map[string]any{"measured": "here, single goroutine, same run for ours and Lattigo v6.1.1", "results": rows})
	}
	fmt.Printf("%-20s %5s %5s %-24s %14s %14s %8s\n", "kernel", "logN", "bits", "path", "ours ns", "lattigo ns", "speedup")
	for _, r := range rows {
		fmt.Printf("%-20s %5d %5d %-24s %14.0f %14.0f %7.2fx\n", r.Kernel, r.LogN, r.QBits, r.Path, r.OursNs, r.LattigoNs, r.Speedup)
	}
	fmt.Println("(measured here, single goroutine; ours and Lattigo in the same run)")
	return nil
}
