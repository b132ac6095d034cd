package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// Limbs is one instance of a value: Polys × Limbs limbs of N coefficients,
// poly-major (limb l of poly p at index p·Limbs + l).
type Limbs = [][]uint64

// StreamSource gives a stream run its operands. Values it returns are
// read, never modified.
type StreamSource interface {
	// Input returns instance k of the StreamInput node i.
	Input(i int, k int64) (Limbs, error)
	// Key returns an evaluation key object ("rlk", "gal:<element>") as
	// lower.Program key objects lay it out.
	Key(name string) (Limbs, error)
	// Stored opens a reader over the instances of the StreamStored node i
	// for one worker. A worker reads mostly in increasing order: a reader
	// may read ahead from the last instance asked for.
	Stored(ctx context.Context, i int) (StoredReader, error)
}

// StoredReader reads the instances of a stored node (a store object's
// polys, with read-ahead where the device has it).
type StoredReader interface {
	// Instance returns instance k; the limbs stay valid until the next call.
	Instance(k int64) (Limbs, error)
	Close() error
}

// ErrStreamMemory is returned when a run would hold more than its limit.
var ErrStreamMemory = errors.New("stream run exceeds its memory limit")

// StreamStats counts what a stream run did.
type StreamStats struct {
	Instructions, MicroOps int64
	Bodies                 int64 // body programs run
	StoredInstances        int64 // stored instances read
	// PeakBytes is the most value memory the run held at once (cached
	// instances, accumulators, expansion paths, buffers in use).
	PeakBytes int64
}

// Stream runs a lower.StreamProgram. Prepare once per program; Run is
// safe for concurrent use (each run has its own workers).
type Stream struct {
	sp   *lower.StreamProgram
	n    int
	mods []rns.Modulus // q_0 … q_L
	// monomials[level][j] is NTT(X^(−2^j)) over q_0 … q_level, the
	// constant of expansion step j.
	monomials map[int]Limbs
	// slots is the most SRAM slots a body uses: the size of the slot set
	// a worker's interpreters share.
	slots int
}

// NewStream prepares a validated stream program.
func NewStream(sp *lower.StreamProgram) (*Stream, error) {
	if err := sp.Validate(); err != nil {
		return nil, err
	}
	s := &Stream{sp: sp, n: 1 << sp.Ring.LogN, monomials: map[int]Limbs{}}
	for _, q := range sp.Ring.Q {
		t, err := nttTable(s.n, q)
		if err != nil {
			return nil, err
		}
		s.mods = append(s.mods, t.Modulus)
	}
	for _, sn := range sp.Nodes {
		// The bodies the run interprets with the shared slots (Validate
		// allows a body only where the kind runs one).
		switch sn.Kind {
		case lower.StreamOp:
			s.slots = max(s.slots, sn.Body.Program.Config.SRAMSlots)
		case lower.StreamSum:
			if sn.MAC == nil {
				s.slots = max(s.slots, sn.Body.Program.Config.SRAMSlots)
			}
		case lower.StreamExpand:
			for _, st := range sn.Steps {
				s.slots = max(s.slots, st.Program.Config.SRAMSlots)
			}
		}
		if sn.Kind != lower.StreamExpand {
			continue
		}
		level := sn.Limbs - 1
		depth := len(sn.Steps)
		if have := s.monomials[level]; len(have) >= depth*(level+1) {
			continue
		}
		var m Limbs
		for j := 0; j < depth; j++ {
			for i := 0; i <= level; i++ {
				t, err := nttTable(s.n, sp.Ring.Q[i])
				if err != nil {
					return nil, err
				}
				v := make([]uint64, s.n)
				v[s.n-1<<j] = sp.Ring.Q[i] - 1 // X^(−2^j) = −X^(N−2^j)
				t.Forward(v, v)
				m = append(m, v)
			}
		}
		s.monomials[level] = m
	}
	return s, nil
}

// Program returns the stream program.
func (s *Stream) Program() *lower.StreamProgram { return s.sp }

// StreamOptions tune a run.
type StreamOptions struct {
	Workers int // goroutines (≥ 1)
	// MaxBytes bounds the value memory of the run (0: no bound).
	MaxBytes int64
	// Gate, if set, is taken around every body a worker runs: a device
	// shares its cores between the runs of several callers this way
	// (package device/admit's Cores), body by body.
	Gate Gate
}

// Gate grants a core for one chunk of work: Acquire waits for it and
// returns the function that gives it back. A chunk holding a core never
// waits for another chunk.
type Gate interface {
	Acquire(ctx context.Context) (release func(), err error)
}

// Run evaluates the program over src and returns the instances of every
// Out node, by stream node index.
func (s *Stream) Run(ctx context.Context, src StreamSource, opt StreamOptions) (map[int][]Limbs, StreamStats, error) {
	if opt.Workers < 1 {
		opt.Workers = 1
	}
	r := &run{s: s, ctx: ctx, src: src, opt: opt, cache: make([][]Limbs, len(s.sp.Nodes)), keys: map[string]Limbs{}}
	for i := 0; i < opt.Workers; i++ {
		r.workers = append(r.workers, r.newWorker())
	}
	defer func() {
		for _, w := range r.workers {
			w.close()
		}
	}()
	out := map[int][]Limbs{}
	err := r.runAll(out)
	var st StreamStats
	for _, w := range r.workers {
		st.Instructions += w.st.Instructions
		st.MicroOps += w.st.MicroOps
		st.Bodies += w.bodies
		st.StoredInstances += w.stored
	}
	st.PeakBytes = r.peak
	if err != nil {
		return nil, st, err
	}
	return out, st, nil
}

// run is one evaluation of a stream program.
type run struct {
	s       *Stream
	ctx     context.Context
	src     StreamSource
	opt     StreamOptions
	workers []*worker
	cache   [][]Limbs // Cache nodes' instances

	mu         sync.Mutex
	keys       map[string]Limbs
	held, peak int64
}

// charge accounts bytes of value memory (negative to release).
func (r *run) charge(b int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held += b
	if r.held > r.peak {
		r.peak = r.held
	}
	if b > 0 && r.opt.MaxBytes > 0 && r.held > r.opt.MaxBytes {
		return fmt.Errorf("engine: %w: %d bytes held, limit %d", ErrStreamMemory, r.held, r.opt.MaxBytes)
	}
	return nil
}

func (r *run) key(name string) (Limbs, error) {
	r.mu.Lock()
	k, ok := r.keys[name]
	r.mu.Unlock()
	if ok {
		return k, nil
	}
	k, err := r.src.Key(name)
	if err != nil {
		return nil, fmt.Errorf("engine: key %s: %w", name, err)
	}
	// Bodies read key limbs in place (the kernels index N coefficients):
	// a key of another ring degree is an error here, not a read past a
	// limb.
	for l, limb := range k {
		if len(limb) != r.s.n {
			return nil, fmt.Errorf("engine: key %s: limb %d of %d coefficients, want %d", name, l, len(limb), r.s.n)
		}
	}
	r.mu.Lock()
	r.keys[name] = k
	r.mu.Unlock()
	return k, nil
}

func (r *run) runAll(out map[int][]Limbs) error {
	sp := r.s.sp
	// Held nodes first, in order: each instance computed once.
	for i, sn := range sp.Nodes {
		if !sn.Cache || sn.Kind == lower.StreamInput || sn.Kind == lower.StreamStored {
			continue
		}
		vals, err := r.all(i)
		if err != nil {
			return err
		}
		r.cache[i] = vals
	}
	for i, sn := range sp.Nodes {
		if !sn.Out {
			continue
		}
		if sn.Cache {
			out[i] = r.cache[i]
			continue
		}
		vals, err := r.all(i)
		if err != nil {
			return err
		}
		out[i] = vals
	}
	return nil
}

// all evaluates every instance of node i, spread over the workers. The
// values are the run's own (charged to its memory while it holds them).
func (r *run) all(i int) ([]Limbs, error) {
	vals := make([]Limbs, r.s.sp.Nodes[i].Count)
	err := r.parallel(int64(len(vals)), func(w *worker, k int64) error {
		v, owned, err := w.eval(i, k)
		if err != nil {
			return err
		}
		if !owned {
			c, err := w.alloc(len(v))
			if err != nil {
				return err
			}
			for l := range v {
				copy(c[l], v[l])
			}
			v = c
		}
		vals[k] = v
		return nil
	})
	return vals, err
}

// parallel runs f over [0, count), in contiguous ranges, one per worker.
// With fewer instances than workers the first worker runs them all (a Sum
// below may still spread its inputs).
func (r *run) parallel(count int64, f func(w *worker, k int64) error) error {
	ws := r.workers
	if count < int64(len(ws)) {
		ws = ws[:1]
	}
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	for wi, w := range ws {
		first, last := split(count, wi, len(ws)), split(count, wi+1, len(ws))
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.top = len(ws) == 1
			for k := first; k < last; k++ {
				if err := r.ctx.Err(); err != nil {
					errs[wi] = err
					return
				}
				if err := f(w, k); err != nil {
					errs[wi] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (r *run) bytes(sn lower.StreamNode) int64 {
	return int64(sn.Polys) * int64(sn.Limbs) * int64(r.s.n) * WordBytes
}
