package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/tools/report"
)

func init() {
	register(command{name: "compile", summary: "partition a workload between host and SSD (bare|tdap|full) and print the plan", run: runCompile})
}

func runCompile(args []string) error {
	fs := flag.NewFlagSet("compile", flag.ContinueOnError)
	w := fs.String("w", "pir", "workload (NAME or NAME:small; see --list)")
	loadArch := archFlags(fs)
	opt := new(compiler.OptLevel)
	*opt = compiler.OptFull
	fs.Var(opt, "opt", "optimisation: bare, tdap or full")
	out := fs.String("o", "", "write the full plan as JSON to this file")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	list := fs.Bool("list", false, "list the workloads")
	dump := fs.String("dump-after", "", "dump the IR after this pass")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *list {
		for _, wl := range workload.All() {
			fmt.Printf("%-10s %s\n", wl.Name, wl.Description)
		}
		return nil
	}
	o := compiler.Options{Opt: *opt, DumpAfter: compiler.PassName(*dump)}
	if *dump != "" {
		o.Dump = os.Stderr
	}
	plan, _, err := compileWorkload(*w, loadArch, o)
	if err != nil {
		return err
	}
	if *out != "" {
		b, err := json.MarshalIndent(plan, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*out, b, 0o644); err != nil {
			return err
		}
	}
	s := plan.Summary()
	if *asJSON {
		return printJSON(s)
	}
	fmt.Printf("workload %s on %s, --opt %s (estimates of the cost model)\n", s.Workload, s.Arch, s.Opt)
	fmt.Printf("  nodes %d: %d on the host, %d on the SSD; %d segments, %d transfers\n", s.Nodes, s.HostNodes, s.SSDNodes, s.Segments, s.Transfers)
	fmt.Printf("  bytes over PCIe: %s (host-only: %s)\n", report.Bytes(s.CutBytes), report.Bytes(s.HostOnlyBytes))
	if s.Opt == compiler.OptFull {
		fmt.Printf("  mProgram bytes: %s; spilled to LPDDR: %s (before CLCAO: %s)\n", report.Bytes(s.MProgramBytes), report.Bytes(s.SpilledBytes), report.Bytes(s.SpilledBefore))
	} else {
		fmt.Printf("  mProgram bytes: %s; spilled to LPDDR: %s\n", report.Bytes(s.MProgramBytes), report.Bytes(s.SpilledBytes))
	}
	fmt.Printf("  estimated latency: %.4g s\n", s.EstLatency)
	return nil
}

// compileWorkload compiles the named workload for the architecture that
// the flags choose (archFlags) and returns the plan and that architecture.
func compileWorkload(name string, loadArch func() (*arch.Arch, error), opt compiler.Options) (*compiler.Plan, *arch.Arch, error) {
	prog, err := workload.Program(name)
	if err != nil {
		return nil, nil, err
	}
	hw, err := loadArch()
	if err != nil {
		return nil, nil, err
	}
	plan, err := compiler.Compile(prog, hw, opt)
	return plan, hw, err
}
