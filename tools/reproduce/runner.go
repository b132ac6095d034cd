package reproduce

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"sync"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/sim/system"
)

// Workload is one evaluated program: a name (as in the figures), how to
// build its full-scale program and, for transformers, the batch of
// sequences one program run covers (1 otherwise).
type Workload struct {
	Name  string
	Batch int
	Build func() (*ir.Program, error)
}

// PIR databases of Rosemary §Workloads: "We evaluate on VCaLL (2^32
// entries, 96B records), Comm (2^30, 288B), and Fsys (2^17, 10MB) [44]."
var pirDatabases = []struct {
	name           string
	records, bytes int64
}{
	{"pir-vcall", 1 << 32, 96},
	{"pir-comm", 1 << 30, 288},
	{"pir-fsys", 1 << 17, 10 << 20},
}

func registered(name string) func() (*ir.Program, error) {
	return func() (*ir.Program, error) { return workload.Program(name) }
}

func pirBuild(name string, records, recBytes int64, batch int) func() (*ir.Program, error) {
	return func() (*ir.Program, error) {
		s, err := workload.PIRDatabase(name, "pir-bgv", records, recBytes)
		if err != nil {
			return nil, err
		}
		return s.Batched(batch)
	}
}

// pirWorkload is the PIR database name answering batch queries, named
// name-bN when batch > 1.
func pirWorkload(name string, batch int) (Workload, error) {
	for _, d := range pirDatabases {
		if d.name == name {
			w := Workload{Name: name, Batch: 1, Build: pirBuild(d.name, d.records, d.bytes, batch)}
			if batch > 1 {
				w.Name = fmt.Sprintf("%s-b%d", name, batch)
			}
			return w, nil
		}
	}
	return Workload{}, fmt.Errorf("reproduce: no PIR database %q", name)
}

func transformerBatch() int {
	n, err := workload.BERTBase.Batch()
	if err != nil || n < 1 {
		return 128
	}
	return n
}

// Workloads returns the evaluated workloads in figure order: the three PIR
// databases, the database workloads, ResNet-110 and the transformers.
func Workloads() []Workload {
	var ws []Workload
	for _, d := range pirDatabases {
		ws = append(ws, Workload{Name: d.name, Batch: 1, Build: pirBuild(d.name, d.records, d.bytes, 1)})
	}
	for _, n := range []string{"hevec", "vecdist", "vecsearch-vq1-s", "vecsearch-vq1-l", "vecsearch-vq2-s", "vecsearch-vq2-l", "resnet-uw", "resnet-ew"} {
		ws = append(ws, Workload{Name: n, Batch: 1, Build: registered(n)})
	}
	tb := transformerBatch()
	ws = append(ws, Workload{Name: "bert", Batch: tb, Build: registered("bert")},
		Workload{Name: "llama", Batch: tb, Build: registered("llama")})
	return ws
}

// Options tune a reproduction.
type Options struct {
	// Workloads restricts the figures to these names (see Workloads); nil
	// means all.
	Workloads []string
	// MaxTiles and TileBudget are passed to sim/system (0: 256 and 2^16,
	// coarse enough for a full run in minutes; the tile count sets only
	// pipeline fill and drain, see sim/system).
	MaxTiles, TileBudget int
	// CPUCores is the CPU baseline's core count (0: 32, the paper's
	// Threadripper 9970X, Rosemary §Baselines).
	CPUCores int
	// Progress, if set, is called after every simulation with the work done
	// and the work known so far, and what was just done.
	Progress func(done, total int, what string)
}

// Runner runs figures and caches programs, plans and reports.
type Runner struct {
	opt       Options
	workloads []Workload

	mu      sync.Mutex
	progs   map[string]*ir.Program
	plans   map[string]*compiler.Plan
	reports map[string]system.Report
	done    int
	total   int
}

// NewRunner checks the options and returns a runner.
func NewRunner(opt Options) (*Runner, error) {
	if opt.MaxTiles == 0 {
		opt.MaxTiles = 256
	}
	if opt.TileBudget == 0 {
		opt.TileBudget = 1 << 16
	}
	if opt.CPUCores == 0 {
		opt.CPUCores = 32
	}
	if opt.MaxTiles < 0 || opt.TileBudget < 0 || opt.CPUCores < 0 {
		return nil, fmt.Errorf("reproduce: negative option (max tiles %d, tile budget %d, cores %d)", opt.MaxTiles, opt.TileBudget, opt.CPUCores)
	}
	all := Workloads()
	r := &Runner{opt: opt, progs: map[string]*ir.Program{}, plans: map[string]*compiler.Plan{}, reports: map[string]system.Report{}}
	if opt.Workloads == nil {
		r.workloads = all
		return r, nil
	}
	for _, n := range opt.Workloads {
		found := false
		for _, w := range all {
			if w.Name == n {
				r.workloads = append(r.workloads, w)
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("reproduce: unknown workload %q", n)
		}
	}
	return r, nil
}

func (r *Runner) has(name string) bool {
	for _, w := range r.workloads {
		if w.Name == name {
			return true
		}
	}
	return false
}

// plan announces n more simulations to the progress callback.
func (r *Runner) expect(n int) {
	r.mu.Lock()
	r.total += n
	r.mu.Unlock()
}

func (r *Runner) step(what string) {
	r.mu.Lock()
	r.done++
	if r.done > r.total {
		r.total = r.done
	}
	d, t := r.done, r.total
	r.mu.Unlock()
	if r.opt.Progress != nil {
		r.opt.Progress(d, t, what)
	}
}

func archKey(a *arch.Arch) (string, error) {
	b, err := arch.Marshal(a)
	if err != nil {
		return "", fmt.Errorf("reproduce: arch %s: %w", a.Name, err)
	}
	h := sha256.Sum256(b)
	return a.Name + "/" + hex.EncodeToString(h[:8]), nil
}

func (r *Runner) program(w Workload) (*ir.Program, error) {
	r.mu.Lock()
	p, ok := r.progs[w.Name]
	r.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := w.Build()
	if err != nil {
		return nil, fmt.Errorf("reproduce: workload %s: %w", w.Name, err)
	}
	r.mu.Lock()
	r.progs[w.Name] = p
	r.mu.Unlock()
	return p, nil
}

// Plan compiles w for a at optimisation opt (cached).
func (r *Runner) Plan(w Workload, a *arch.Arch, opt string) (*compiler.Plan, error) {
	ak, err := archKey(a)
	if err != nil {
		return nil, err
	}
	key := w.Name + "|" + ak + "|" + opt
	r.mu.Lock()
	pl, ok := r.plans[key]
	r.mu.Unlock()
	if ok {
		return pl, nil
	}
	p, err := r.program(w)
	if err != nil {
		return nil, err
	}
	pl, err = compiler.Compile(p, a, compiler.Options{Opt: opt})
	if err != nil {
		return nil, fmt.Errorf("reproduce: compile %s on %s (%s): %w", w.Name, a.Name, opt, err)
	}
	r.mu.Lock()
	r.plans[key] = pl
	r.mu.Unlock()
	return pl, nil
}

// haAndRosemary simulates w with the full plan on the HA baseline and on
// Rosemary, the pair that Figures 9, 10 and 17 compare.
func (r *Runner) haAndRosemary(w Workload, a *arch.Arch) (ha, ros system.Report, err error) {
	if ha, err = r.Sim(w, a, "full", system.HA); err != nil {
		return ha, ros, err
	}
	ros, err = r.Sim(w, a, "full", system.Rosemary)
	return ha, ros, err
}

// Sim simulates w on system sys of architecture a with the plan compiled at
// opt (cached). A system whose simulated time overflows (a run of months on
// the CPU model) is reported as an error by sim/system; Sim returns it.
func (r *Runner) Sim(w Workload, a *arch.Arch, opt string, sys system.System) (system.Report, error) {
	ak, err := archKey(a)
	if err != nil {
		return system.Report{}, err
	}
	key := fmt.Sprintf("%s|%s|%s|%v", w.Name, ak, opt, sys)
	r.mu.Lock()
	rep, ok := r.reports[key]
	r.mu.Unlock()
	if ok {
		r.step(key)
		return rep, nil
	}
	pl, err := r.Plan(w, a, opt)
	if err != nil {
		return system.Report{}, err
	}
	res, err := system.Run(pl, a, sys, system.Options{MaxTiles: r.opt.MaxTiles, TileBudget: r.opt.TileBudget, CPUCores: r.opt.CPUCores})
	if err != nil {
		return system.Report{}, fmt.Errorf("reproduce: simulate %s on %v (%s, %s): %w", w.Name, sys, a.Name, opt, err)
	}
	r.mu.Lock()
	r.reports[key] = res.Report
	r.mu.Unlock()
	r.step(fmt.Sprintf("%s %v %s %s", w.Name, sys, a.Name, opt))
	return res.Report, nil
}

// ratio returns ours/paper, NaN when there is no paper value.
func ratio(ours, paper float64) float64 {
	if math.IsNaN(paper) || paper == 0 || math.IsNaN(ours) {
		return math.NaN()
	}
	return ours / paper
}

// differs reports whether ours and paper differ by more than 25%.
func differs(ours, paper float64) bool {
	q := ratio(ours, paper)
	return !math.IsNaN(q) && (q > 1.25 || q < 1/1.25)
}
