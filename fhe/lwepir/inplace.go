package lwepir

import (
	"context"
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"

	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// inPlaceBlock is how many slots of every baby step and sum the in-place
// products take at once: the B1 baby steps of a block (64 × 2 × 4 KiB at
// a 4 GiB database's layout) stay in a core's L2 while every diagonal's
// piece of the block streams past them once.
const inPlaceBlock = 512

// hornerInPlace is one output's giant steps over diagonals read in place:
// every sum S_g = Σ_j P(o,g,j)·rot_j(x) first, block by block of slots (the
// baby steps of a block stay in a core's L2 while each diagonal's piece of
// the block streams past once), as dot products over j reduced once per
// group of products (rns.MACMontSum); then Horner's rule
// T ← rot_B1(T) + S_g. Every sum is a canonical residue, so the result is
// the whole-diagonal path's bit for bit.
func (s *Server) hornerInPlace(ctx context.Context, l Layout, o int, diags DiagonalPieces, baby []*rlwe.Ciphertext,
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

// giantSums returns b ciphertexts at level for the in-place sums (pooled:
// 8 MiB at a 4 GiB database's layout).
func (s *Server) giantSums(b, level int) []*rlwe.Ciphertext {
	if v, ok := s.sums.Get().([]*rlwe.Ciphertext); ok && len(v) == b && v[0].Level() == level {
		return v
	}
	v := make([]*rlwe.Ciphertext, b)
	for g := range v {
		v[g] = bgv.NewCiphertext(s.bp, 1, level)
	}
	return v
}
