package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/sim/scaleout"
	"github.com/rosemary-fhe/rosemary/sim/system"
	"github.com/rosemary-fhe/rosemary/tools/report"
)

func init() {
	register(command{name: "simulate", summary: "compile a workload and simulate it on cpu|ha|inspire|rosemary (latency, traffic, utilization, energy)", run: runSimulate})
}

func runSimulate(args []string) error {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	w := fs.String("w", "pir", "workload (NAME or NAME:small)")
	loadArch := archFlags(fs)
	sysName := fs.String("system", "rosemary", "system: cpu, ha, inspire or rosemary")
	opt := new(compiler.OptLevel)
	*opt = compiler.OptFull
	fs.Var(opt, "opt", "compiler optimisation: bare, tdap or full")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	tlPath := fs.String("timeline", "", "write per-resource busy intervals as CSV to this file")
	maxTiles := fs.Int("max-tiles", 0, "tiles per node at most (0: default)")
	cores := fs.Int("cpu-cores", 0, "cores for the CPU baseline (0: 1, the calibration)")
	ssds := fs.Int("ssds", 1, "SSDs behind one host, the database split over them (pir, hevec, vecdist; system rosemary): projected by sim/scaleout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *ssds > 1 {
		return simulateScaleOut(*w, *ssds, loadArch, *asJSON)
	}
	sys, err := system.ParseSystem(*sysName)
	if err != nil {
		return err
	}
	plan, hw, err := compileWorkload(*w, loadArch, compiler.Options{Opt: *opt})
	if err != nil {
		return err
	}
	res, err := system.Run(plan, hw, sys, system.Options{MaxTiles: *maxTiles, CPUCores: *cores, Timeline: *tlPath != ""})
	if err != nil {
		return err
	}
	if *tlPath != "" {
		f, err := os.Create(*tlPath)
		if err != nil {
			return err
		}
		if err := res.Timeline.WriteCSV(f); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	r := res.Report
	if *asJSON {
		return printJSON(r)
	}
	u := r.Utilization
	fmt.Printf("%s on %s, system %s, --opt %s (simulated)\n", r.Workload, r.Arch, r.System, r.Opt)
	fmt.Printf("  latency: %.4g s\n", r.LatencyS)
	fmt.Printf("  bytes: PCIe %s, NAND %s, LPDDR %s, host memory %s\n", report.Bytes(r.PCIeBytes), report.Bytes(r.NANDBytes), report.Bytes(r.DRAMBytes), report.Bytes(r.HostMem))
	fmt.Printf("  utilization: host %.1f%%, NAND %.1f%%, LPDDR %.1f%%, engine %.1f%%, PCIe %.1f%%\n",
		100*u.Host, 100*u.NAND, 100*u.DRAM, 100*u.Engine, 100*u.PCIe)
	fmt.Printf("  energy: %.4g J; area: %.1f mm2\n", r.EnergyJ, r.AreaMM2)
	fmt.Printf("  simulator: %d events in %.3f s (%.3g events/s), %d tiles\n", r.SimEvents, r.SimWallS, r.EventsPerS, r.Tiles)
	for _, n := range r.Notes {
		fmt.Printf("  note: %s\n", n)
	}
	return nil
}

// simulateScaleOut projects a workload over k SSDs (and over one, the
// baseline of the speedup).
func simulateScaleOut(name string, k int, loadArch func() (*arch.Arch, error), asJSON bool) error {
	hw, err := loadArch()
	if err != nil {
		return err
	}
	for _, w := range scaleout.Workloads() {
		if w.Name != name {
			continue
		}
		ps, err := scaleout.Project(w, hw, []int{1, k}, system.Options{})
		if err != nil {
			return err
		}
		if asJSON {
			return printJSON(map[string]any{"workload": name, "points": ps, "provenance": "simulated"})
		}
		for _, p := range ps {
			fmt.Printf("%s on %d SSD(s) (simulated): %.4g s (shard %.4g s, host link %.4g s, aggregation %.3g s), speedup %.2f×, efficiency %.2f, bound by the %s\n",
				name, p.K, p.TotalS, p.ShardS, p.LinkS, p.AggregateS, p.Speedup, p.Efficiency, p.Binding)
		}
		return nil
	}
	return fmt.Errorf("simulate: --ssds projects pir, hevec or vecdist, not %q", name)
}
