package reproduce

import (
	"bytes"
	"encoding/gob"
	"os"
	"path/filepath"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/sim/system"
)

func gobBytes(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func mustArch(t *testing.T, name string, aus int, edramMB int) *arch.Arch {
	t.Helper()
	a, err := arch.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	if aus > 0 {
		if a, err = arch.WithAUs(a, aus); err != nil {
			t.Fatal(err)
		}
	}
	if edramMB >= 0 {
		if a, err = arch.WithEDRAM(a, int64(edramMB)<<20); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// TestArchContentKey: the figures' architectures that are the rosemary
// preset under another name share its key; any changed parameter does
// not. And the premise: the same program compiled on two of them gives
// the same plan but for the architecture's name.
func TestArchContentKey(t *testing.T) {
	key := func(a *arch.Arch) contentKey {
		k, err := archContentKey(a)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	base := mustArch(t, "rosemary", 0, -1)
	same := []*arch.Arch{mustArch(t, "rosemary", 16, -1), mustArch(t, "rosemary", 0, 64), mustArch(t, "ssd-medium", 16, -1)}
	for _, a := range same {
		if a.Name == base.Name {
			t.Fatalf("%s: the test needs another name", a.Name)
		}
		if key(a) != key(base) {
			t.Errorf("%s: key differs from the rosemary preset's", a.Name)
		}
	}
	different := []*arch.Arch{mustArch(t, "rosemary", 64, -1), mustArch(t, "rosemary", 0, 32), mustArch(t, "ssd-small", 16, -1),
		mustArch(t, "ssd-large", 16, -1), mustArch(t, "ssd-medium", 64, -1)}
	seen := map[contentKey]string{key(base): base.Name}
	for _, a := range different {
		k := key(a)
		if other, dup := seen[k]; dup && !(a.Name == "ssd-medium+aus=64" && other == "rosemary+aus=64") {
			t.Errorf("%s has the key of %s", a.Name, other)
		}
		seen[k] = a.Name
	}
	if key(mustArch(t, "ssd-medium", 64, -1)) != key(mustArch(t, "rosemary", 64, -1)) {
		t.Error("ssd-medium at 64 AUs is rosemary at 64 AUs but keys differ")
	}

	prog, err := workload.Program("vecsearch-vq1-s:small")
	if err != nil {
		t.Fatal(err)
	}
	p1, err := compiler.Compile(prog, base, compiler.Options{Opt: "full"})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := compiler.Compile(prog, same[2], compiler.Options{Opt: "full"})
	if err != nil {
		t.Fatal(err)
	}
	if p2.Arch != same[2].Name {
		t.Fatalf("plan arch %q", p2.Arch)
	}
	p2.Arch = p1.Arch
	if !bytes.Equal(gobBytes(t, p1), gobBytes(t, p2)) {
		t.Error("the same program on the same parameters under two names compiled to different plans")
	}
}

// TestExpandedCompileSame: compiling the program with its bootstrappings
// expanded beforehand gives the plan compiling the program gives, at
// every level, and leaves the expanded program as it was (the runner
// shares it between compilations).
func TestExpandedCompileSame(t *testing.T) {
	a := mustArch(t, "rosemary", 0, -1)
	for _, build := range []func() (*ir.Program, error){workload.SHARPBootstrapping, workload.SHARPResNet20} {
		prog, err := build()
		if err != nil {
			t.Fatal(err)
		}
		boots := 0
		for _, n := range prog.Nodes {
			if n.Op == ir.OpBoot {
				boots++
			}
		}
		if boots == 0 {
			t.Fatalf("%s has no bootstrapping to expand", prog.Name)
		}
		x, err := compiler.ExpandBoot(prog)
		if err != nil {
			t.Fatal(err)
		}
		before := gobBytes(t, x)
		for _, opt := range []string{"bare", "tdap", "full"} {
			want, err := compiler.Compile(prog, a, compiler.Options{Opt: compiler.OptLevel(opt)})
			if err != nil {
				t.Fatal(err)
			}
			got, err := compiler.Compile(x, a, compiler.Options{Opt: compiler.OptLevel(opt)})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(gobBytes(t, want), gobBytes(t, got)) {
				t.Errorf("%s %s: the plan of the expanded program differs", prog.Name, opt)
			}
		}
		if !bytes.Equal(before, gobBytes(t, x)) {
			t.Errorf("%s: compiling modified the expanded program", prog.Name)
		}
	}
}

// withoutWallTime drops the simulator's own run time from reports.
func withoutWallTime(reps []system.Report) []system.Report {
	out := make([]system.Report, len(reps))
	for i, r := range reps {
		r.SimWallS, r.EventsPerS = 0, 0
		out[i] = r
	}
	return out
}

// smallWorkload is a fast program for runner tests.
func smallWorkload(name string) Workload {
	return Workload{Name: name, Batch: 1, Build: func() (*ir.Program, error) { return workload.Program(name + ":small") }}
}

// TestDiskCacheWarm: a second runner on the same cache compiles and
// simulates nothing, and returns the reports the first computed; a plan
// read back simulates to the same report as the plan compiled; a torn
// entry is recomputed; another version key sees nothing.
func TestDiskCacheWarm(t *testing.T) {
	dir := t.TempDir()
	a := mustArch(t, "rosemary", 0, -1)
	b := mustArch(t, "ssd-medium", 16, -1) // same parameters, another name
	ws := []Workload{smallWorkload("vecsearch-vq1-s"), smallWorkload("pir")}
	type job struct {
		a   *arch.Arch
		sys system.System
	}
	jobs := []job{{a, system.HA}, {a, system.Rosemary}, {b, system.Rosemary}, {a, system.CPU}}
	run := func(version string) (*Runner, []system.Report) {
		c, err := OpenCache(dir, version)
		if err != nil {
			t.Fatal(err)
		}
		r, err := NewRunner(Options{Workloads: []string{}, MaxTiles: 16, TileBudget: 1 << 10, Cache: c})
		if err != nil {
			t.Fatal(err)
		}
		var reps []system.Report
		for _, w := range ws {
			for _, j := range jobs {
				rep, err := r.Sim(w, j.a, "full", j.sys)
				if err != nil {
					t.Fatal(err)
				}
				reps = append(reps, rep)
			}
		}
		return r, reps
	}
	r1, cold := run("v1")
	if s := r1.Stats(); s.Compiled != len(ws) || s.Simulated != len(ws)*len(jobs) || s.PlansLoaded != 0 || s.ReportsLoaded != 0 {
		t.Fatalf("cold run: %+v (want %d compilations: one per workload, both names share it)", s, len(ws))
	}
	for i, rep := range cold {
		if j := jobs[i%len(jobs)]; rep.Arch != j.a.Name {
			t.Errorf("report %d names arch %q, simulated on %q", i, rep.Arch, j.a.Name)
		}
	}
	r2, warm := run("v1")
	if s := r2.Stats(); s.Compiled != 0 || s.Simulated != 0 || s.ReportsLoaded != len(ws)*len(jobs) {
		t.Fatalf("warm run: %+v", s)
	}
	if !bytes.Equal(gobBytes(t, cold), gobBytes(t, warm)) {
		t.Fatal("warm reports differ from the cold run's")
	}
	// A plan read from the disk simulates as the compiled one did.
	fresh, err := r1.Plan(ws[0], a, "full")
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := r2.Plan(ws[0], a, "full")
	if err != nil {
		t.Fatal(err)
	}
	if s := r2.Stats(); s.PlansLoaded != 1 || s.Compiled != 0 {
		t.Fatalf("plan not read from the cache: %+v", s)
	}
	for _, sys := range []system.System{system.HA, system.Rosemary, system.INSPIRE} {
		x, err := system.Run(fresh, a, sys, r1.simOptions())
		if err != nil {
			t.Fatal(err)
		}
		y, err := system.Run(loaded, a, sys, r1.simOptions())
		if err != nil {
			t.Fatal(err)
		}
		x.Report.SimWallS, y.Report.SimWallS, x.Report.EventsPerS, y.Report.EventsPerS = 0, 0, 0, 0
		if !bytes.Equal(gobBytes(t, x.Report), gobBytes(t, y.Report)) {
			t.Errorf("%v: the plan read back simulates to %+v, compiled %+v", sys, y.Report, x.Report)
		}
	}
	// Tear every report: they are recomputed, equal.
	c, err := OpenCache(dir, "v1")
	if err != nil {
		t.Fatal(err)
	}
	torn, err := filepath.Glob(filepath.Join(c.dir, "reports", "*.gob"))
	if err != nil || len(torn) != len(ws)*len(jobs) {
		t.Fatalf("%d report files (%v)", len(torn), err)
	}
	for _, f := range torn {
		if err := os.WriteFile(f, []byte("torn"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r3, again := run("v1")
	if s := r3.Stats(); s.Simulated != len(ws)*len(jobs) || s.Compiled != 0 || s.PlansLoaded != len(ws) {
		t.Fatalf("after tearing the reports: %+v", s)
	}
	if !bytes.Equal(gobBytes(t, withoutWallTime(cold)), gobBytes(t, withoutWallTime(again))) {
		t.Fatal("recomputed reports differ")
	}
	r4, _ := run("v2")
	if s := r4.Stats(); s.PlansLoaded != 0 || s.ReportsLoaded != 0 {
		t.Fatalf("another version read entries: %+v", s)
	}
}
