package lwepir

import (
	"context"
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"

	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// EvaluateHintOld exports the old ring stage to the external benchmarks.
func (s *Server) EvaluateHintOld(ctx context.Context, keys *EvalKeys, x *rlwe.Ciphertext, diags Diagonals, gate Gate) ([]*rlwe.Ciphertext, error) {
	return s.evaluateHintOld(ctx, keys, x, diags, gate)
}

// evaluateHintOld is EvaluateHint as it was before the batched ring stage
// (commit 699d140), kept for the comparisons: it computes H'·s in the slots of the layout's outputs,
// switched down to one prime: baby steps rot_j(x) for j < B1 by repeated
// rotation by one; for each output, Horner's rule over the giant steps,
// T ← rot_B1(T) + Σ_j P(o,g,j)·rot_j(x); then the rotate-and-sum of the
// N/R partial sums of every row. The baby steps, each giant step and
// each output's sum hold a core of gate (nil: none) in turn.
func (s *Server) evaluateHintOld(ctx context.Context, keys *EvalKeys, x *rlwe.Ciphertext, diags Diagonals, gate Gate) ([]*rlwe.Ciphertext, error) {
	l := s.shape.Layout(s.p)
	if err := keys.check(s.bp, l.Rotations()); err != nil {
		return nil, err
	}
	rotations := s.Rotations
	if rotations == nil {
		rotations = lattigoRotations
	}
	rot, err := rotations(s.bp, keys)
	if err != nil {
		return nil, err
	}
	// gated runs one step of the evaluation holding a core.
	gated := func(step func() error) error {
		release, err := enter(ctx, gate)
		if err != nil {
			return err
		}
		defer release()
		return step()
	}
	eval := bgv.NewEvaluator(s.bp, nil) // additions and the rescale: no keys
	mods := s.mods[:x.Level()+1]
	// The baby steps (B1 ciphertexts, 16 MiB at a 4 GiB database's
	// layout) are reused across queries: fresh memory costs a page fault per
	// 4 KiB, as much as the rotations that fill it.
	baby := s.babySteps(l.B1, x.Level())
	defer func() { baby[0] = nil; s.babies.Put(baby) }()
	baby[0] = x
	for j := 1; j < l.B1; j++ {
		if err := gated(func() error { return rot.RotateColumns(baby[j-1], 1, baby[j]) }); err != nil {
			return nil, fmt.Errorf("lwepir: baby step %d: %w", j, err)
		}
	}
	out := make([]*rlwe.Ciphertext, l.Outputs)
	tmp := bgv.NewCiphertext(s.bp, 1, x.Level())
	pieces, inPlace := diags.(DiagonalPieces)
	// The whole-diagonal path's buffers (a diagonal, a giant step's sum):
	// the in-place path reads no diagonal into memory and keeps its sums
	// in giantSums.
	var (
		words []uint64
		sum   *rlwe.Ciphertext
	)
	if !inPlace {
		words = make([]uint64, DiagonalWords(s.p))
		sum = bgv.NewCiphertext(s.bp, 1, x.Level())
	}
	for o := range out {
		var acc *rlwe.Ciphertext
		if inPlace {
			var err error
			if acc, err = s.hornerInPlaceOld(ctx, l, o, pieces, baby, rot, eval, gated); err != nil {
				return nil, err
			}
		}
		for g := l.B2 - 1; g >= 0 && !inPlace; g-- {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			err := gated(func() error {
				for k := range sum.Value {
					for i := range sum.Value[k].Coeffs {
						clear(sum.Value[k].Coeffs[i])
					}
				}
				for j := 0; j < l.B1; j++ {
					if err := diags.ReadDiagonal(ctx, l.diagonalIndex(o, g, j), words); err != nil {
						return fmt.Errorf("lwepir: reading diagonal: %w", err)
					}
					// The diagonals are in Montgomery form: acc += d·c·2^{-64}
					// is the product (Lattigo's MulCoeffsMontgomeryThenAdd, bit
					// for bit, on the AVX-512 kernels).
					for i := range mods {
						d := words[i*l.Slots : (i+1)*l.Slots]
						rns.MACMont(d, baby[j].Value[0].Coeffs[i], sum.Value[0].Coeffs[i], &mods[i])
						rns.MACMont(d, baby[j].Value[1].Coeffs[i], sum.Value[1].Coeffs[i], &mods[i])
					}
				}
				if acc == nil {
					acc = sum.CopyNew()
					return nil
				}
				if err := rot.RotateColumns(acc, l.B1, acc); err != nil {
					return fmt.Errorf("lwepir: giant step %d: %w", g, err)
				}
				return eval.Add(acc, sum, acc)
			})
			if err != nil {
				return nil, err
			}
		}
		err := gated(func() error {
			for k := l.R; k < l.N; k *= 2 {
				if err := rot.RotateColumns(acc, k, tmp); err != nil {
					return fmt.Errorf("lwepir: summing by %d: %w", k, err)
				}
				if err := eval.Add(acc, tmp, acc); err != nil {
					return err
				}
			}
			if err := eval.Rescale(acc, acc); err != nil {
				return fmt.Errorf("lwepir: switching modulus: %w", err)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		out[o] = acc
	}
	return out, nil
}

// hornerInPlaceOld is one output's giant steps over diagonals read in place:
// every sum S_g = Σ_j P(o,g,j)·rot_j(x) first, block by block of slots (the
// baby steps of a block stay in a core's L2 while each diagonal's piece of
// the block streams past once), as dot products over j reduced once per
// group of products (rns.MACMontSum); then Horner's rule
// T ← rot_B1(T) + S_g. Every sum is a canonical residue, so the result is
// the whole-diagonal path's bit for bit.
func (s *Server) hornerInPlaceOld(ctx context.Context, l Layout, o int, diags DiagonalPieces, baby []*rlwe.Ciphertext,
	rot Rotator, eval *bgv.Evaluator, gated func(func() error) error) (*rlwe.Ciphertext, error) {
	level := baby[0].Level()
	mods := s.mods[:level+1]
	// pieces[(g·B1+j)·L + limb]: the diagonal's pieces of that limb.
	pieces := make([][][]uint64, l.B2*l.B1*len(mods))
	pw := 0
	for g := 0; g < l.B2; g++ {
		for j := 0; j < l.B1; j++ {
			for li := range mods {
				ps, err := diags.DiagonalPieces(ctx, l.diagonalIndex(o, g, j), li)
				if err != nil {
					return nil, fmt.Errorf("lwepir: reading diagonal: %w", err)
				}
				if pw == 0 && len(ps) > 0 {
					pw = len(ps[0])
				}
				if pw == 0 || l.Slots%pw != 0 || len(ps) != l.Slots/pw {
					return nil, fmt.Errorf("%w: diagonal in %d pieces, not %d-word pieces covering %d slots", ErrParams, len(ps), pw, l.Slots)
				}
				for _, p := range ps {
					if len(p) != pw {
						return nil, fmt.Errorf("%w: diagonal pieces of %d and %d words", ErrParams, pw, len(p))
					}
				}
				pieces[(g*l.B1+j)*len(mods)+li] = ps
			}
		}
	}
	sums := s.giantSums(l.B2, level)
	defer s.sums.Put(sums)
	for _, sum := range sums {
		for k := range sum.Value {
			for i := range sum.Value[k].Coeffs {
				clear(sum.Value[k].Coeffs[i])
			}
		}
	}
	sb := min(pw, inPlaceBlock)
	ds := make([][]uint64, l.B1)
	b0s, b1s := make([][]uint64, l.B1), make([][]uint64, l.B1)
	for li := range mods {
		m := &mods[li]
		for k := 0; k < l.Slots/pw; k++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			err := gated(func() error {
				for off := 0; off < pw; off += sb {
					lo, hi := k*pw+off, k*pw+off+sb
					for j := range l.B1 {
						b0s[j], b1s[j] = baby[j].Value[0].Coeffs[li][lo:hi], baby[j].Value[1].Coeffs[li][lo:hi]
					}
					for g, sum := range sums {
						for j := range l.B1 {
							ds[j] = pieces[(g*l.B1+j)*len(mods)+li][k][off : off+sb]
						}
						rns.MACMontSum(ds, b0s, sum.Value[0].Coeffs[li][lo:hi], m)
						rns.MACMontSum(ds, b1s, sum.Value[1].Coeffs[li][lo:hi], m)
					}
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	acc := sums[l.B2-1].CopyNew()
	for g := l.B2 - 2; g >= 0; g-- {
		err := gated(func() error {
			if err := rot.RotateColumns(acc, l.B1, acc); err != nil {
				return fmt.Errorf("lwepir: giant step %d: %w", g, err)
			}
			return eval.Add(acc, sums[g], acc)
		})
		if err != nil {
			return nil, err
		}
	}
	return acc, nil
}
