package lwepir

import (
	"context"
	"fmt"
	"sync"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// hintJob is one query's part of a ring stage: its rotator, its baby steps
// rot_j(x), its giant-step sums S_g and its outputs.
type hintJob struct {
	rot  Rotator
	eval *bgv.Evaluator // additions and the rescale (no keys; one per query, not shared)
	baby []*rlwe.Ciphertext
	sums []*rlwe.Ciphertext
	out  []*rlwe.Ciphertext
}

// EvaluateHintBatch is EvaluateHint for several queries over one
// generation's diagonals: keys[i] are the Galois keys of the client whose
// encrypted secret is xs[i] (every xs[i] a fresh query secret, at one
// level). It returns each query's hint ciphertexts, bit for bit those
// EvaluateHint returns for that query alone.
//
// Each query's key switches (its B1−1 baby steps, its giant steps and its
// sums: about 2·√R + log(N/R) of them, under its own keys) are its own;
// what the batch shares is the pass over the diagonals: each piece of a
// diagonal is read once and multiplied into every query's baby steps while
// it is in cache, so the diagonals (64 MiB at a 1 GiB database, 512 MiB at
// 4 GiB) cross the memory bus once a batch, not once a query. Up to
// Workers goroutines run: the queries' key-switch chains side by side,
// then the products split by slot ranges. Each rotation and each block of
// products holds a core of gate (nil: none); a query's hoisted baby steps
// hold one for all of them (one decomposition), about half the chain's
// time.
//
// Memory: (B1 + B2) ciphertexts of 2·len(HintLogQ)·HintSlots words per
// query (12 MiB at a 1 GiB database's layout, 24 MiB at 4 GiB), pooled
// between calls; a caller bounds its batches accordingly.
func (s *Server) EvaluateHintBatch(ctx context.Context, keys []*EvalKeys, xs []*rlwe.Ciphertext, diags Diagonals, gate Gate) ([][]*rlwe.Ciphertext, error) {
	return s.evaluateHints(ctx, keys, xs, diags, gate, s.Workers)
}

// evaluateHints is the ring stage of a batch on up to workers goroutines.
func (s *Server) evaluateHints(ctx context.Context, keys []*EvalKeys, xs []*rlwe.Ciphertext, diags Diagonals, gate Gate, workers int) ([][]*rlwe.Ciphertext, error) {
	l := s.shape.Layout(s.p)
	if len(xs) == 0 || len(keys) != len(xs) {
		return nil, fmt.Errorf("%w: %d encrypted secrets with %d key sets", ErrParams, len(xs), len(keys))
	}
	level := xs[0].Level()
	for i, x := range xs {
		if x == nil || x.Degree() != 1 || !x.IsNTT || x.Level() != level || x.Value[0].N() != s.bp.N() {
			return nil, fmt.Errorf("%w: encrypted secret %d of the wrong shape", ErrParams, i)
		}
		if err := s.CheckKeys(keys[i]); err != nil {
			return nil, err
		}
	}
	rotations := s.Rotations
	if rotations == nil {
		rotations = lattigoRotations
	}
	jobs := make([]*hintJob, len(xs))
	for i := range jobs {
		rot, err := rotations(s.bp, keys[i])
		if err != nil {
			return nil, err
		}
		jobs[i] = &hintJob{rot: rot, eval: bgv.NewEvaluator(s.bp, nil), out: make([]*rlwe.Ciphertext, l.Outputs)}
	}
	defer func() {
		for _, j := range jobs {
			if j.baby != nil {
				j.baby[0] = nil
				s.babies.Put(j.baby)
			}
			if j.sums != nil {
				s.sums.Put(j.sums)
			}
		}
	}()
	gated := func(step func() error) error {
		release, err := enter(ctx, gate)
		if err != nil {
			return err
		}
		defer release()
		if s.Guard != nil {
			return s.Guard(step)
		}
		return step()
	}
	workers = max(1, workers)
	// The baby steps rot_j(x), j < B1: hoisted from one decomposition of x
	// if the client's keys rotate by every j (Layout.HoistRotations) and
	// the rotator hoists, else by repeated rotation by one. Each query's on
	// one goroutine. (They are reused across outputs and
	// pooled across calls: fresh memory costs a page fault per 4 KiB, as
	// much as the rotations that fill it.)
	err := each(ctx, len(jobs), workers, func(i int) error {
		j := jobs[i]
		j.baby = s.babySteps(l.B1, level)
		j.baby[0] = xs[i]
		j.sums = s.giantSums(l.B2, level)
		if h, ok := j.rot.(HoistingRotator); ok && l.canHoist(keys[i]) {
			ks := make([]int, l.B1-1)
			for k := range ks {
				ks[k] = k + 1
			}
			if err := gated(func() error { return h.RotateColumnsHoisted(xs[i], ks, j.baby[1:]) }); err != nil {
				return fmt.Errorf("lwepir: hoisted baby steps: %w", err)
			}
			return nil
		}
		for k := 1; k < l.B1; k++ {
			if err := gated(func() error { return j.rot.RotateColumns(j.baby[k-1], 1, j.baby[k]) }); err != nil {
				return fmt.Errorf("lwepir: baby step %d: %w", k, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for o := 0; o < l.Outputs; o++ {
		if err := s.giantStepSums(ctx, l, o, jobs, diags, gated, workers); err != nil {
			return nil, err
		}
		err := each(ctx, len(jobs), workers, func(i int) error {
			out, err := s.finishOutput(ctx, l, jobs[i], gated)
			jobs[i].out[o] = out
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([][]*rlwe.Ciphertext, len(jobs))
	for i, j := range jobs {
		out[i] = j.out
	}
	return out, nil
}

// finishOutput applies Horner's rule over one query's giant-step sums,
// T ← rot_B1(T) + S_g, then the rotate-and-sum of the N/R partial sums of
// every row, and switches the result down to one prime.
func (s *Server) finishOutput(ctx context.Context, l Layout, j *hintJob, gated func(func() error) error) (*rlwe.Ciphertext, error) {
	acc := j.sums[l.B2-1].CopyNew()
	for g := l.B2 - 2; g >= 0; g-- {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		err := gated(func() error {
			if err := j.rot.RotateColumns(acc, l.B1, acc); err != nil {
				return fmt.Errorf("lwepir: giant step %d: %w", g, err)
			}
			return j.eval.Add(acc, j.sums[g], acc)
		})
		if err != nil {
			return nil, err
		}
	}
	err := gated(func() error {
		tmp := bgv.NewCiphertext(s.bp, 1, acc.Level())
		for k := l.R; k < l.N; k *= 2 {
			if err := j.rot.RotateColumns(acc, k, tmp); err != nil {
				return fmt.Errorf("lwepir: summing by %d: %w", k, err)
			}
			if err := j.eval.Add(acc, tmp, acc); err != nil {
				return err
			}
		}
		if err := j.eval.Rescale(acc, acc); err != nil {
			return fmt.Errorf("lwepir: switching modulus: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return acc, nil
}

// each runs f(i) for i < n on up to workers goroutines and returns the
// first error; after one, the goroutines take no new i.
func each(ctx context.Context, n, workers int, f func(i int) error) error {
	workers = max(1, min(workers, n))
	if workers == 1 {
		for i := range n {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := f(i); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		mu    sync.Mutex
		next  int
		first error
		wg    sync.WaitGroup
	)
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if first != nil || next >= n {
			return 0, false
		}
		if err := ctx.Err(); err != nil {
			first = err
			return 0, false
		}
		next++
		return next - 1, true
	}
	for range workers {
		wg.Go(func() {
			for {
				i, ok := take()
				if !ok {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}
