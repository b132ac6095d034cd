package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/tools/run"
)

func init() {
	register(command{name: "run", summary: "run a workload end to end: host segments locally, device segments on the in-storage device", run: runRun})
}

func runRun(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var o run.Options
	fs.StringVar(&o.Workload, "w", "pir", "workload: pir (expanded-query PIR on bgv-13), vecdist or hevec (CKKS, preset hevec)")
	addr := fs.String("device", "", "device daemon address (default: an in-process device on a temporary store)")
	fs.StringVar(&o.Arch, "a", "rosemary", "architecture the compiler plans for")
	o.Opt = compiler.OptFull
	fs.Var(&o.Opt, "opt", "compiler optimisation level (bare, tdap, full)")
	fs.StringVar(&o.Placement, "placement", "plan", "plan (the compiler's placement) or device (every operation on the device)")
	fs.IntVar(&o.PIRRecords, "records", 1<<16, "PIR: records in the database")
	fs.IntVar(&o.PIRRecordSize, "record-size", 256, "PIR: bytes per record")
	fs.BoolVar(&o.Insecure, "insecure", false, "allow presets below 128-bit security (test rings)")
	fs.IntVar(&o.VecPlaintexts, "vectors", 8, "vecdist: stored plaintexts")
	fs.IntVar(&o.VecDim, "dim", 4, "vecdist: vector dimension (power of two)")
	fs.IntVar(&o.VecGroups, "groups", 2, "vecdist: score sums")
	queries := fs.Int("n", 1, "queries")
	asJSON := fs.Bool("json", false, "print JSON")
	tls := addTransportFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	var c *remote.Client
	if *addr != "" {
		dial, err := tls.dialOptions()
		if err != nil {
			return err
		}
		if c, err = remote.Dial(*addr, dial...); err != nil {
			return err
		}
		defer c.Close()
	}
	rep, err := run.Run(context.Background(), c, o, *queries)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Printf("%s on %s (%s placement, device segments %s): correct=%v  host↔device %d B/query, host-only %d B (%.1f×), device read %d B from store, setup %d B, %.2f s (measured here)\n",
		rep.Workload, rep.Params, rep.Placement, rep.Segments, rep.Correct, rep.HostDeviceBytes, rep.HostOnlyBytes, rep.Ratio, rep.DeviceStoreBytes, rep.SetupBytes, rep.WallSeconds)
	if !rep.Correct {
		return fmt.Errorf("run: wrong answer: %s", rep.Error)
	}
	return nil
}
