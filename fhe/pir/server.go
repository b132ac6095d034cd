package pir

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// Server is the host-only reference evaluator of the protocol on Lattigo:
// it expands a query, scans a Database and returns the answer. It uses no
// randomness: the answer is a deterministic function of the query, the
// database and the keys, bit-identical for any number of workers. Answer
// may be called concurrently.
type Server struct {
	params  bgv.Parameters
	shape   Shape
	eval    *bgv.Evaluator // template: workers use shallow copies
	mono    []ring.Poly    // Monomials at the top level
	galEls  []uint64
	workers int
}

// NewServer returns a server for shape (NewShape's layout for params)
// that runs on workers goroutines. evk must hold the relinearization key
// and the Galois keys of shape.GaloisElements().
func NewServer(params bgv.Parameters, shape Shape, evk rlwe.EvaluationKeySet, workers int) (*Server, error) {
	if err := shape.check(params); err != nil {
		return nil, fmt.Errorf("pir: new server: %w", err)
	}
	if workers < 1 {
		return nil, fmt.Errorf("pir: new server: %d workers, need ≥ 1", workers)
	}
	if isNil(evk) {
		return nil, fmt.Errorf("pir: new server: %w: nil evaluation key set", ErrKeys)
	}
	rlk, err := evk.GetRelinearizationKey()
	if err != nil || rlk == nil {
		return nil, fmt.Errorf("pir: new server: %w: no relinearization key (%v)", ErrKeys, err)
	}
	if err := checkKey(params, &rlk.EvaluationKey); err != nil {
		return nil, fmt.Errorf("pir: new server: relinearization key: %w", err)
	}
	galEls := shape.GaloisElements()
	for _, g := range galEls {
		gk, err := evk.GetGaloisKey(g)
		if err != nil || gk == nil {
			return nil, fmt.Errorf("pir: new server: %w: no Galois key for %d (%v)", ErrKeys, g, err)
		}
		if gk.GaloisElement != g {
			return nil, fmt.Errorf("pir: new server: %w: Galois key for %d is for %d", ErrKeys, g, gk.GaloisElement)
		}
		if err := checkKey(params, &gk.EvaluationKey); err != nil {
			return nil, fmt.Errorf("pir: new server: Galois key %d: %w", g, err)
		}
	}
	return &Server{
		params:  params,
		shape:   shape,
		eval:    bgv.NewEvaluator(params, evk),
		mono:    Monomials(params, params.MaxLevel(), len(galEls)),
		galEls:  galEls,
		workers: workers,
	}, nil
}

// checkKey reports whether an evaluation key matches params (ring degree,
// levels and decomposition), so key switching cannot index out of range.
func checkKey(params bgv.Parameters, k *rlwe.EvaluationKey) error {
	v := k.Value
	if len(v) == 0 || len(v[0]) == 0 {
		return fmt.Errorf("%w: empty key", ErrKeys)
	}
	if k.LevelQ() != params.MaxLevelQ() || k.LevelP() != params.MaxLevelP() {
		return fmt.Errorf("%w: key at levels (Q %d, P %d), want (%d, %d)", ErrKeys, k.LevelQ(), k.LevelP(), params.MaxLevelQ(), params.MaxLevelP())
	}
	if k.BaseRNSDecompositionVectorSize() != params.BaseRNSDecompositionVectorSize(params.MaxLevelQ(), params.MaxLevelP()) {
		return fmt.Errorf("%w: key has %d RNS decomposition limbs, want %d", ErrKeys, k.BaseRNSDecompositionVectorSize(), params.BaseRNSDecompositionVectorSize(params.MaxLevelQ(), params.MaxLevelP()))
	}
	if v[0][0][0].Q.N() != params.N() {
		return fmt.Errorf("%w: key of ring degree %d, want %d", ErrKeys, v[0][0][0].Q.N(), params.N())
	}
	return nil
}

// Shape returns the server's database shape.
func (s *Server) Shape() Shape { return s.shape }

// Answer answers query (a degree-1 NTT-domain ciphertext at the top
// level) over db: the selections are expanded and rescaled, the rows
// scanned, Σ_r Relinearize(rowSum_r ⊗ rowSel_r) accumulated and rescaled
// once. The answer is at level top−2. Rows are split into as many
// contiguous ranges as there are workers; each worker expands its rows
// depth-first (O(depth) ciphertexts) and keeps one row-sum accumulator,
// and the Cols column selections are computed once and shared. Only
// plaintexts p < Plaintexts are read: the others are zero and contribute
// exactly nothing. The query's scale metadata is ignored (the protocol's
// query is at scale 1).
func (s *Server) Answer(ctx context.Context, query *rlwe.Ciphertext, db Database) (*rlwe.Ciphertext, error) {
	acc, eval, err := s.answer(ctx, query, db)
	if err != nil {
		return nil, err
	}
	out := bgv.NewCiphertext(s.params, 1, acc.Level())
	if err := eval.Rescale(acc, out); err != nil {
		return nil, fmt.Errorf("pir: answer: rescale: %w", err)
	}
	return out, nil
}

// root validates query and returns the expansion tree's root: a copy with
// the protocol's metadata (coefficient encoding, scale 1).
func (s *Server) root(ctx context.Context, query *rlwe.Ciphertext) (*rlwe.Ciphertext, error) {
	if ctx == nil {
		return nil, errors.New("pir: nil context")
	}
	if err := checkCiphertext(s.params, query, s.params.MaxLevel()); err != nil {
		return nil, fmt.Errorf("pir: query: %w", err)
	}
	if !query.IsNTT {
		return nil, fmt.Errorf("pir: query: %w: not in the NTT domain", ErrCiphertext)
	}
	root := query.CopyNew()
	root.IsBatched = false
	root.Scale = s.params.DefaultScale()
	return root, nil
}

// Expand returns every rescaled selection of query (level top−1): the
// column selections c = 0 … Cols−1 and the row selections r = 0 … Rows−1.
// It is a diagnostic (its memory grows with Rows); Answer never holds the
// row selections together.
func (s *Server) Expand(ctx context.Context, query *rlwe.Ciphertext) (cols, rows []*rlwe.Ciphertext, err error) {
	root, err := s.root(ctx, query)
	if err != nil {
		return nil, nil, err
	}
	exps := s.expanders(root, max(s.shape.Cols, s.shape.Rows))
	if cols, err = s.selections(ctx, exps, s.shape.Cols, true); err != nil {
		return nil, nil, err
	}
	if rows, err = s.selections(ctx, exps, s.shape.Rows, false); err != nil {
		return nil, nil, err
	}
	return cols, rows, nil
}

// expanders returns one expander (with its own evaluator) per worker that
// can be busy on n items.
func (s *Server) expanders(root *rlwe.Ciphertext, n int) []*expander {
	exps := make([]*expander, max(1, min(s.workers, n)))
	for k := range exps {
		exps[k] = newExpander(s.params, s.eval.ShallowCopy(), s.mono, s.galEls, root)
	}
	return exps
}

// selections returns the rescaled column (or row) selections 0 … n−1,
// the workers splitting them into contiguous ranges.
func (s *Server) selections(ctx context.Context, exps []*expander, n int, columns bool) ([]*rlwe.Ciphertext, error) {
	out := make([]*rlwe.Ciphertext, n)
	level := s.params.MaxLevel() - 1
	err := parallel(ctx, n, len(exps), func(ctx context.Context, k, lo, hi int) error {
		e := exps[k]
		for i := lo; i < hi; i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			var path []int
			if columns {
				path = e.colPath(i, s.shape.LogCols())
			} else {
				path = e.rowPath(i, s.shape.LogRows())
			}
			leaf, err := e.leaf(path)
			if err != nil {
				return err
			}
			sel := bgv.NewCiphertext(s.params, 1, level)
			if err := e.eval.Rescale(leaf, sel); err != nil {
				return fmt.Errorf("pir: rescale selection %d: %w", i, err)
			}
			out[i] = sel
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// answer is Answer before the final rescale (level top−1), with an
// evaluator to rescale it.
func (s *Server) answer(ctx context.Context, query *rlwe.Ciphertext, db Database) (*rlwe.Ciphertext, *bgv.Evaluator, error) {
	root, err := s.root(ctx, query)
	if err != nil {
		return nil, nil, err
	}
	if isNil(db) {
		return nil, nil, fmt.Errorf("pir: answer: %w: nil database", ErrDatabase)
	}
	sh := s.shape
	usedCols := min(sh.Cols, sh.Plaintexts)   // columns holding data
	usedRows := (sh.Plaintexts-1)/sh.Cols + 1 // rows holding data
	exps := s.expanders(root, max(usedCols, usedRows))

	colSel, err := s.selections(ctx, exps, usedCols, true)
	if err != nil {
		return nil, nil, err
	}

	params := s.params
	level := params.MaxLevel() - 1
	nw := min(len(exps), usedRows)
	partial := make([]*rlwe.Ciphertext, nw)
	err = parallel(ctx, usedRows, nw, func(ctx context.Context, k, lo, hi int) error {
		e := exps[k]
		eval := e.eval
		coeffs := make([]uint64, params.N())
		ecd := bgv.NewEncoder(params)
		pt := bgv.NewPlaintext(params, level)
		pt.IsBatched = false
		rowSum := bgv.NewCiphertext(params, 1, level)
		rowSel := bgv.NewCiphertext(params, 1, level)
		var acc *rlwe.Ciphertext
		for r := lo; r < hi; r++ {
			for c := 0; c < sh.Cols; c++ {
				p := r*sh.Cols + c
				if p >= sh.Plaintexts {
					break
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := db.Plaintext(ctx, p, coeffs); err != nil {
					return fmt.Errorf("pir: answer: %w: plaintext %d: %w", ErrDatabase, p, err)
				}
				if err := fhe.LiftCompactBGVWith(params, ecd, coeffs, pt); err != nil {
					return fmt.Errorf("pir: answer: %w: plaintext %d: %w", ErrDatabase, p, err)
				}
				if c == 0 {
					err = eval.Mul(colSel[c], pt, rowSum)
				} else {
					err = eval.MulThenAdd(colSel[c], pt, rowSum)
				}
				if err != nil {
					return fmt.Errorf("pir: answer: scan plaintext %d: %w", p, err)
				}
			}
			leaf, err := e.leaf(e.rowPath(r, sh.LogRows()))
			if err != nil {
				return err
			}
			if err := eval.Rescale(leaf, rowSel); err != nil {
				return fmt.Errorf("pir: answer: rescale row selection %d: %w", r, err)
			}
			if acc == nil {
				acc = bgv.NewCiphertext(params, 1, level)
				err = eval.MulRelin(rowSum, rowSel, acc)
			} else {
				err = eval.MulRelinThenAdd(rowSum, rowSel, acc)
			}
			if err != nil {
				return fmt.Errorf("pir: answer: row product %d: %w", r, err)
			}
		}
		partial[k] = acc
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	eval := exps[0].eval
	acc := partial[0]
	for _, p := range partial[1:] {
		if err := eval.Add(acc, p, acc); err != nil {
			return nil, nil, fmt.Errorf("pir: answer: sum partial answers: %w", err)
		}
	}
	return acc, eval, nil
}

// parallel runs fn on w goroutines, goroutine k on items [k·n/w,
// (k+1)·n/w), and returns the first error (cancelling the others).
func parallel(ctx context.Context, n, w int, fn func(ctx context.Context, k, lo, hi int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for k := 0; k < w; k++ {
		lo, hi := k*n/w, (k+1)*n/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(ctx, k, lo, hi); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// isNil reports whether v is nil or a nil pointer, map, slice, function,
// channel or interface inside an interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return r.IsNil()
	}
	return false
}
