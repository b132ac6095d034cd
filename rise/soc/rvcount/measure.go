package rvcount

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/rosemary-fhe/rosemary/rise/edge"
)

// Measurement is one program's per-phase instruction counts at one ring
// degree.
type Measurement struct {
	Software string            `json:"software"` // "edge" or "seal-embedded"
	N        int               `json:"n"`
	Limbs    int               `json:"limbs"`
	Phases   map[string]uint64 `json:"instructions"` // per phase (edge.Phase names)
	Total    uint64            `json:"total"`        // the whole run, every thread (setup, keys, warm-up included)
}

// Tools are the programs a measurement needs.
type Tools struct {
	Qemu  string // qemu-riscv64
	CC    string // host C compiler (the plugin)
	Go    string // go (cross-builds the edge driver)
	Cross string // riscv64-linux-gnu-gcc (SEAL-Embedded)
}

// FindTools looks the tools up on PATH; a missing one is named in the
// error (cross is only needed for SEAL-Embedded).
func FindTools(cross bool) (Tools, error) {
	var t Tools
	var missing []string
	look := func(dst *string, names ...string) {
		for _, n := range names {
			if p, err := exec.LookPath(n); err == nil {
				*dst = p
				return
			}
		}
		missing = append(missing, names[0])
	}
	look(&t.Qemu, "qemu-riscv64")
	look(&t.CC, "cc", "gcc", "clang")
	look(&t.Go, "go")
	if cross {
		look(&t.Cross, "riscv64-linux-gnu-gcc")
	}
	if len(missing) > 0 {
		return t, fmt.Errorf("rvcount: %s not found on PATH (Debian: qemu-user, gcc, golang, gcc-riscv64-linux-gnu)", strings.Join(missing, ", "))
	}
	return t, nil
}

// NewQemu builds the plugin into dir.
func NewQemu(ctx context.Context, t Tools, dir string) (Qemu, error) {
	so, err := BuildPlugin(ctx, t.CC, dir)
	if err != nil {
		return Qemu{}, err
	}
	return Qemu{Path: t.Qemu, Plugin: so, Dir: dir}, nil
}

// ModuleRoot returns the directory of the rosemary module around the
// working directory (the edge driver is built from source).
func ModuleRoot(ctx context.Context, goTool string) (string, error) {
	out, err := exec.CommandContext(ctx, goTool, "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("rvcount: go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("rvcount: run inside the rosemary source tree (no go.mod here)")
	}
	return filepath.Dir(mod), nil
}

// MeasureEdge cross-builds rise/edge/internal/rvphases for riscv64 and measures
// one encryption and decryption at each ring degree (an edge preset).
func MeasureEdge(ctx context.Context, t Tools, q Qemu, ns []int) ([]Measurement, error) {
	root, err := ModuleRoot(ctx, t.Go)
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(q.Dir, "rvphases")
	build := exec.CommandContext(ctx, t.Go, "build", "-o", bin, "./rise/edge/internal/rvphases")
	build.Dir = root
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=riscv64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("rvcount: riscv64 build of rvphases: %v\n%s", err, out)
	}
	var ms []Measurement
	for _, n := range ns {
		p, err := edge.Preset(n)
		if err != nil {
			return nil, err
		}
		l, _, err := q.Run(ctx, bin, "-n", strconv.Itoa(n), "-mark", strconv.Itoa(MarkSyscall))
		if err != nil {
			return nil, err
		}
		m, err := EdgeMeasurement(l, n, len(p.Q))
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// EdgeMeasurement names the phases of an rvphases log (edge.Phase ids).
func EdgeMeasurement(l Log, n, limbs int) (Measurement, error) {
	ph, err := l.Phases()
	if err != nil {
		return Measurement{}, err
	}
	m := Measurement{Software: "edge", N: n, Limbs: limbs, Phases: map[string]uint64{}, Total: l.Total}
	for id, c := range ph {
		p := edge.Phase(id)
		if _, err := edge.ParsePhase(p.String()); err != nil || id > 255 {
			return Measurement{}, fmt.Errorf("rvcount: rvphases marked unknown phase %d", id)
		}
		m.Phases[p.String()] = c
	}
	for _, p := range edge.Phases {
		if _, ok := m.Phases[p.String()]; !ok {
			return Measurement{}, fmt.Errorf("rvcount: N=%d: phase %s was not marked", n, p)
		}
	}
	return m, nil
}

// PhaseNames returns m's phases in edge's order (then any others sorted).
func (m Measurement) PhaseNames() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range edge.Phases {
		if _, ok := m.Phases[p.String()]; ok {
			out = append(out, p.String())
			seen[p.String()] = true
		}
	}
	var rest []string
	for k := range m.Phases {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// QemuVersion returns the first line of qemu's --version (for sources).
func QemuVersion(ctx context.Context, qemu string) string {
	out, err := exec.CommandContext(ctx, qemu, "--version").Output()
	if err != nil {
		return "qemu-riscv64"
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(line)
}
