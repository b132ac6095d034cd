package lwepir

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"

	"github.com/rosemary-fhe/rosemary/fhe/matvec"
	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// Server answers queries over one database generation: its shape, its tiles
// and the precomputed diagonals of its hint.
type Server struct {
	p      Params
	shape  Shape
	bp     bgv.Parameters
	mods   []rns.Modulus // the ring stage's primes, for its multiply-accumulates
	babies sync.Pool     // of []*rlwe.Ciphertext: the ring stage's baby steps
	sums   sync.Pool     // of []*rlwe.Ciphertext: its giant steps' sums (in place)
	// Workers is how many goroutines scan (default: GOMAXPROCS).
	Workers int
	// Rotations makes the column rotations of the ring stage for one
	// query's keys (default: Lattigo's evaluator). The device passes the
	// engine's, which runs them as mPrograms on the fhe/rns kernels.
	Rotations func(bp bgv.Parameters, keys *EvalKeys) (Rotator, error)
	// Guard, if set, runs each step of the ring stage on the goroutine
	// that takes it: a device reading diagonals in place from mapped files
	// turns a memory fault there into an error (a fault is per goroutine).
	Guard func(func() error) error
}

// babySteps returns b ciphertexts at level (from the pool when it holds
// ones of that shape); entry 0 is left for the caller's input.
func (s *Server) babySteps(b, level int) []*rlwe.Ciphertext {
	if v, ok := s.babies.Get().([]*rlwe.Ciphertext); ok && len(v) == b && (b < 2 || v[1].Level() == level) {
		return v
	}
	v := make([]*rlwe.Ciphertext, b)
	for j := 1; j < b; j++ {
		v[j] = bgv.NewCiphertext(s.bp, 1, level)
	}
	return v
}

// Rotator rotates the slot columns of a ring-stage ciphertext left by k
// (out may be in).
type Rotator interface {
	RotateColumns(in *rlwe.Ciphertext, k int, out *rlwe.Ciphertext) error
}

// NewServer returns a server for a database of the given shape.
func NewServer(p Params, shape Shape) (*Server, error) {
	if err := shape.Validate(p); err != nil {
		return nil, err
	}
	bp, err := p.hintParams()
	if err != nil {
		return nil, err
	}
	mods := make([]rns.Modulus, len(bp.Q()))
	for i, q := range bp.Q() {
		if mods[i], err = rns.NewModulus(q); err != nil {
			return nil, err
		}
	}
	return &Server{p: p, shape: shape, bp: bp, mods: mods, Workers: runtime.GOMAXPROCS(0), Rotations: lattigoRotations}, nil
}

// CheckQuery validates a query decoded from the wire before any work.
func (s *Server) CheckQuery(q *Query) error {
	if q == nil || len(q.Vector) != s.shape.Cols {
		return fmt.Errorf("%w: query vector of the wrong length", ErrParams)
	}
	ct := q.Secret
	if ct == nil || ct.Degree() != 1 || ct.Level() != s.bp.MaxLevel() || !ct.IsNTT || ct.Value[0].N() != s.bp.N() {
		return fmt.Errorf("%w: encrypted secret of the wrong shape", ErrParams)
	}
	return nil
}

// CheckKeys validates a client's Galois keys against the shape's layout
// (and the keys for hoisting, if it has them all): a device calls it
// before a query joins a batch, as EvaluateHintBatch refuses a whole batch
// for one query's bad keys.
func (s *Server) CheckKeys(keys *EvalKeys) error {
	l := s.shape.Layout(s.p)
	if err := keys.check(s.bp, l.Rotations()); err != nil {
		return err
	}
	if l.canHoist(keys) {
		return keys.check(s.bp, l.HoistRotations())
	}
	return nil
}

// Answer runs the scan D·q and the hint evaluation H·s; they share nothing
// and run side by side.
func (s *Server) Answer(ctx context.Context, keys *EvalKeys, q *Query, tiles Tiles, diags Diagonals) (*Answer, error) {
	if err := s.CheckQuery(q); err != nil {
		return nil, err
	}
	var (
		wg      sync.WaitGroup
		hint    []*rlwe.Ciphertext
		hintErr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		hint, hintErr = s.EvaluateHint(ctx, keys, q.Secret, diags, nil)
	}()
	col, err := s.Scan(ctx, []*matvec.Query{matvec.NewQuery(q.Vector)}, tiles, nil)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if hintErr != nil {
		return nil, hintErr
	}
	return &Answer{Column: col[0], Hint: hint}, nil
}

// Scan computes D·q for each query, reading every tile once: Workers
// goroutines take tiles in turn, each multiplies a block of rows while it
// is in cache (all queries at once: one pass over the database for a
// batch), into its own accumulators, summed at the end. Each block holds
// a core of gate (nil: none) while it is read and multiplied.
func (s *Server) Scan(ctx context.Context, qs []*matvec.Query, tiles Tiles, gate Gate) ([][]uint32, error) {
	for _, q := range qs {
		if q.Len() != s.shape.Cols {
			return nil, fmt.Errorf("%w: query vector of the wrong length", ErrParams)
		}
	}
	nt, nb := s.shape.Tiles(s.p), tiles.Blocks()
	if nb < 1 || s.shape.Rows%nb != 0 {
		return nil, fmt.Errorf("%w: tiles read in %d blocks of %d rows", ErrParams, nb, s.shape.Rows)
	}
	n, rowsPer := s.p.N(), s.shape.Rows/nb
	workers := max(1, min(s.Workers, nt))
	accs := make([][][]uint32, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range accs {
		accs[w] = make([][]uint32, len(qs))
		for b := range qs {
			accs[w][b] = make([]uint32, s.shape.Rows)
		}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			parts := sync.Pool{New: func() any { p := make([][]uint32, len(qs)); return &p }}
			for k := w; k < nt; k += workers {
				for blk := 0; blk < nb; blk++ {
					if err := ctx.Err(); err != nil {
						errs[w] = err
						return
					}
					release, err := enter(ctx, gate)
					if err != nil {
						errs[w] = err
						return
					}
					err = tiles.VisitBlock(ctx, k, blk, func(row int, rows []byte) {
						pp := parts.Get().(*[][]uint32)
						first := blk*rowsPer + row
						for b := range qs {
							(*pp)[b] = accs[w][b][first : first+len(rows)/n]
						}
						matvec.MulAddBatch(*pp, rows, qs, k*n)
						parts.Put(pp)
					})
					release()
					if err != nil {
						errs[w] = fmt.Errorf("lwepir: reading tile %d: %w", k, err)
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	for w := 1; w < workers; w++ {
		for b := range qs {
			for i, v := range accs[w][b] {
				accs[0][b][i] += v
			}
		}
	}
	return accs[0], nil
}

// EvaluateHint computes H'·s in the slots of the layout's outputs,
// switched down to one prime: a batch of one (see EvaluateHintBatch), on
// one goroutine (the device runs a query's ring stage beside its scan).
// The baby steps, each block of products, each giant step and each
// output's sum hold a core of gate (nil: none) in turn.
func (s *Server) EvaluateHint(ctx context.Context, keys *EvalKeys, x *rlwe.Ciphertext, diags Diagonals, gate Gate) ([]*rlwe.Ciphertext, error) {
	out, err := s.evaluateHints(ctx, []*EvalKeys{keys}, []*rlwe.Ciphertext{x}, diags, gate, 1)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}
