package reproduce

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
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

// lwePIR is the hint-free LWE PIR, the device's default scheme (workload
// pir-lwe): ours, not one of the paper's workloads, so only Figure 13
// shows it, beside the paper's PIR rows.
var lwePIR = Workload{Name: "pir-lwe", Batch: 1, Build: registered("pir-lwe")}

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
	// Parallel bounds the compilations and simulations that run at once
	// (0: GOMAXPROCS).
	Parallel int
	// Cache, if set, keeps plans and reports on disk between runs.
	Cache *Cache
	// Progress, if set, is called after every simulation with the work done
	// and the work known so far, and what was just done. Calls may come
	// from several goroutines, one at a time.
	Progress func(done, total int, what string)
}

// Runner runs figures and caches programs, plans and reports: each is
// computed once per run, by the first figure that asks for it, while the
// others wait for it. At most Options.Parallel compilations and
// simulations run at once.
type Runner struct {
	opt       Options
	workloads []Workload
	slots     chan struct{}

	mu       sync.Mutex
	progs    map[string]*once[builtProgram] // by workload name
	expanded map[contentKey]*once[*ir.Program]
	plans    map[contentKey]*once[*compiler.Plan]
	reports  map[contentKey]*once[storedReport]
	done     int
	total    int
	stats    Stats

	progressMu sync.Mutex // Progress is called one at a time
}

// Stats counts where a run's plans and reports came from.
type Stats struct {
	Compiled, PlansLoaded      int // compiled here; read from the disk cache
	Simulated, ReportsLoaded   int
	PlansShared, ReportsShared int // asked for again in this run (memory)
}

// builtProgram is a workload's program and its content key.
type builtProgram struct {
	prog *ir.Program
	key  contentKey
}

// once is a value computed by the first caller who asks for it; later
// callers wait for it.
type once[T any] struct {
	done chan struct{}
	val  T
	err  error
}

// flight returns m[key], computing it with f when nobody has; fresh says
// whether this call computed it.
func flight[T any](mu *sync.Mutex, m map[contentKey]*once[T], key contentKey, f func() (T, error)) (val T, fresh bool, err error) {
	mu.Lock()
	e, ok := m[key]
	if !ok {
		e = &once[T]{done: make(chan struct{})}
		m[key] = e
	}
	mu.Unlock()
	if ok {
		<-e.done
		return e.val, false, e.err
	}
	defer close(e.done)
	e.val, e.err = f()
	return e.val, true, e.err
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
	if opt.Parallel == 0 {
		opt.Parallel = runtime.GOMAXPROCS(0)
	}
	if opt.MaxTiles < 0 || opt.TileBudget < 0 || opt.CPUCores < 0 || opt.Parallel < 0 {
		return nil, fmt.Errorf("reproduce: negative option (max tiles %d, tile budget %d, cores %d, parallel %d)", opt.MaxTiles, opt.TileBudget, opt.CPUCores, opt.Parallel)
	}
	all := Workloads()
	r := &Runner{opt: opt, slots: make(chan struct{}, opt.Parallel), progs: map[string]*once[builtProgram]{},
		expanded: map[contentKey]*once[*ir.Program]{}, plans: map[contentKey]*once[*compiler.Plan]{}, reports: map[contentKey]*once[storedReport]{}}
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

// Stats returns the counts so far.
func (r *Runner) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

func (r *Runner) has(name string) bool {
	for _, w := range r.workloads {
		if w.Name == name {
			return true
		}
	}
	return false
}

// expect announces n more simulations to the progress callback.
func (r *Runner) expect(n int) {
	r.mu.Lock()
	r.total += n
	r.mu.Unlock()
}

func (r *Runner) step(what string) {
	r.progressMu.Lock()
	defer r.progressMu.Unlock()
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

// work runs f in one of the runner's slots: f is CPU-bound work (a build,
// a compilation, a simulation) and must not wait for other work.
func (r *Runner) work(f func() error) error {
	r.slots <- struct{}{}
	defer func() { <-r.slots }()
	return f()
}

func (r *Runner) program(w Workload) (builtProgram, error) {
	r.mu.Lock()
	e, ok := r.progs[w.Name]
	if !ok {
		e = &once[builtProgram]{done: make(chan struct{})}
		r.progs[w.Name] = e
	}
	r.mu.Unlock()
	if ok {
		<-e.done
		return e.val, e.err
	}
	defer close(e.done)
	e.err = r.work(func() error {
		p, err := w.Build()
		if err != nil {
			return fmt.Errorf("reproduce: workload %s: %w", w.Name, err)
		}
		k, err := programKey(p)
		e.val = builtProgram{prog: p, key: k}
		return err
	})
	return e.val, e.err
}

// expandedProgram is the program with its bootstrappings expanded, once
// per program rather than once per compilation (compiler.Compile expands
// them first, in every variant it tries; an expanded program has no
// bootstrapping left to expand, and expanding is deterministic, so the
// plans are the same).
func (r *Runner) expandedProgram(bp builtProgram) (*ir.Program, error) {
	x, _, err := flight(&r.mu, r.expanded, bp.key, func() (*ir.Program, error) {
		if !slices.ContainsFunc(bp.prog.Nodes, func(n ir.Node) bool { return n.Op == ir.OpBoot }) {
			return bp.prog, nil
		}
		var x *ir.Program
		err := r.work(func() error {
			var err error
			x, err = compiler.ExpandBoot(bp.prog)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("reproduce: expand %s: %w", bp.prog.Name, err)
		}
		return x, nil
	})
	return x, err
}

// planKeyOf is the content key of w's plan on a at opt.
func (r *Runner) planKeyOf(w Workload, a *arch.Arch, opt compiler.OptLevel) (builtProgram, contentKey, error) {
	bp, err := r.program(w)
	if err != nil {
		return bp, "", err
	}
	ak, err := archContentKey(a)
	if err != nil {
		return bp, "", err
	}
	return bp, planKey(bp.key, ak, opt.String()), nil
}

// Plan compiles w for a at optimisation opt (cached by content: see
// keys.go). Plans are shared: callers must not modify them.
func (r *Runner) Plan(w Workload, a *arch.Arch, opt compiler.OptLevel) (*compiler.Plan, error) {
	bp, key, err := r.planKeyOf(w, a, opt)
	if err != nil {
		return nil, err
	}
	pl, fresh, err := flight(&r.mu, r.plans, key, func() (*compiler.Plan, error) {
		if c := r.opt.Cache; c != nil {
			pl, ok, err := c.loadPlan(key)
			if err != nil {
				return nil, err
			}
			if ok {
				r.count(func(s *Stats) { s.PlansLoaded++ })
				return pl, nil
			}
		}
		x, err := r.expandedProgram(bp)
		if err != nil {
			return nil, err
		}
		var pl *compiler.Plan
		err = r.work(func() error {
			var err error
			pl, err = compiler.Compile(x, a, compiler.Options{Opt: opt})
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("reproduce: compile %s on %s (%s): %w", w.Name, a.Name, opt, err)
		}
		r.count(func(s *Stats) { s.Compiled++ })
		if c := r.opt.Cache; c != nil {
			if err := c.storePlan(key, pl); err != nil {
				return nil, err
			}
		}
		return pl, nil
	})
	if err != nil {
		return nil, err
	}
	if !fresh {
		r.count(func(s *Stats) { s.PlansShared++ })
	}
	if pl.Arch != a.Name {
		// The same parameters under another name: the plan is the same but
		// for the name it carries.
		c := *pl
		c.Arch = a.Name
		pl = &c
	}
	return pl, nil
}

func (r *Runner) count(f func(*Stats)) {
	r.mu.Lock()
	f(&r.stats)
	r.mu.Unlock()
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

func (r *Runner) simOptions() system.Options {
	return system.Options{MaxTiles: r.opt.MaxTiles, TileBudget: r.opt.TileBudget, CPUCores: r.opt.CPUCores}
}

// simJob is one simulation a figure needs.
type simJob struct {
	w   Workload
	a   *arch.Arch
	opt compiler.OptLevel
	sys system.System
}

// outcome is the simulation of job j: its report, or in Err the
// simulator's own error; err is an error on the way there (building,
// compiling, the cache).
func (r *Runner) outcome(j simJob) (storedReport, error) {
	_, pk, err := r.planKeyOf(j.w, j.a, j.opt)
	if err != nil {
		return storedReport{}, err
	}
	so := r.simOptions()
	key := reportKey(pk, j.a.Name, j.sys, so)
	s, fresh, err := flight(&r.mu, r.reports, key, func() (storedReport, error) {
		if c := r.opt.Cache; c != nil {
			s, ok, err := c.loadReport(key)
			if err != nil {
				return s, err
			}
			if ok {
				r.count(func(s *Stats) { s.ReportsLoaded++ })
				return s, nil
			}
		}
		pl, err := r.Plan(j.w, j.a, j.opt)
		if err != nil {
			return storedReport{}, err
		}
		var s storedReport
		_ = r.work(func() error {
			res, err := system.Run(pl, j.a, j.sys, so)
			if err != nil {
				s.Err = err.Error()
			} else {
				s.Report = res.Report
			}
			return nil
		})
		r.count(func(s *Stats) { s.Simulated++ })
		if c := r.opt.Cache; c != nil {
			if err := c.storeReport(key, s); err != nil {
				return s, err
			}
		}
		return s, nil
	})
	if err == nil && !fresh {
		r.count(func(s *Stats) { s.ReportsShared++ })
	}
	return s, err
}

// prefetch starts the simulations of jobs in the background, so that the
// figure asking for them one by one finds them done or under way.
func (r *Runner) prefetch(jobs []simJob) {
	for _, j := range jobs {
		go func() { _, _ = r.outcome(j) }()
	}
}

// Sim simulates w on system sys of architecture a with the plan compiled at
// opt (cached). A system whose simulated time overflows (a run of months on
// the CPU model) is reported as an error by sim/system; Sim returns it.
func (r *Runner) Sim(w Workload, a *arch.Arch, opt compiler.OptLevel, sys system.System) (system.Report, error) {
	s, err := r.outcome(simJob{w, a, opt, sys})
	if err != nil {
		return system.Report{}, err
	}
	r.step(fmt.Sprintf("%s %v %s %s", w.Name, sys, a.Name, opt))
	if s.Err != "" {
		return system.Report{}, fmt.Errorf("reproduce: simulate %s on %v (%s, %s): %w", w.Name, sys, a.Name, opt, errors.New(s.Err))
	}
	return s.Report, nil
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
