package lwepir

import (
	"context"
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// inPlaceBlock is how many slots of every baby step and sum the products
// take at once. Within a block, for each query, every giant step's
// diagonal pieces stream past the query's B1 baby steps: a block's pieces
// of all R diagonals (R·8·inPlaceBlock bytes, 512 KiB at a 1 GiB
// database's layout) stay in a server core's L2 while the batch's queries
// take them in turn, beside one query's baby steps of the block (64 KiB).
// (Where the products are compute-bound, 128 and 512 measure the same.)
const inPlaceBlock = 128

// productChunk is how many slots one work item of the products covers
// (the unit the workers share and a gate's core is held for).
const productChunk = 1024

// giantStepSums sets every query's sums S_g = Σ_j P(o,g,j)·rot_j(x) of
// output o. Diagonals readable in place are multiplied piece by piece,
// none copied; others are read a giant step's B1 diagonals at a time.
// Every sum is a canonical residue: the result does not depend on the
// order of the products, the batch or the pieces.
func (s *Server) giantStepSums(ctx context.Context, l Layout, o int, jobs []*hintJob, diags Diagonals,
	gated func(func() error) error, workers int) error {
	limbs := jobs[0].baby[0].Level() + 1
	for _, j := range jobs {
		for _, sum := range j.sums {
			for k := range sum.Value {
				for i := range sum.Value[k].Coeffs {
					clear(sum.Value[k].Coeffs[i])
				}
			}
		}
	}
	if pieces, ok := diags.(DiagonalPieces); ok {
		src, pw, err := inPlacePieces(ctx, l, o, limbs, pieces)
		if err != nil {
			return err
		}
		piece := func(g, j, li, k int) []uint64 { return src[(g*l.B1+j)*limbs+li][k] }
		return s.products(ctx, l, jobs, 0, l.B2, limbs, pw, piece, gated, workers)
	}
	bufs := make([][]uint64, l.B1)
	for j := range bufs {
		bufs[j] = make([]uint64, DiagonalWords(s.p))
	}
	piece := func(_, j, li, _ int) []uint64 { return bufs[j][li*l.Slots : (li+1)*l.Slots] }
	for g := 0; g < l.B2; g++ {
		err := gated(func() error {
			for j := range bufs {
				if err := diags.ReadDiagonal(ctx, l.diagonalIndex(o, g, j), bufs[j]); err != nil {
					return fmt.Errorf("lwepir: reading diagonal: %w", err)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := s.products(ctx, l, jobs, g, g+1, limbs, l.Slots, piece, gated, workers); err != nil {
			return err
		}
	}
	return nil
}

// inPlacePieces gathers the pieces of output o's diagonals, indexed
// [(g·B1+j)·limbs + limb][piece], and their common length, checking that
// they cover the slots in pieces of one length.
func inPlacePieces(ctx context.Context, l Layout, o, limbs int, diags DiagonalPieces) ([][][]uint64, int, error) {
	src := make([][][]uint64, l.B2*l.B1*limbs)
	pw := 0
	for g := 0; g < l.B2; g++ {
		for j := 0; j < l.B1; j++ {
			for li := range limbs {
				ps, err := diags.DiagonalPieces(ctx, l.diagonalIndex(o, g, j), li)
				if err != nil {
					return nil, 0, fmt.Errorf("lwepir: reading diagonal: %w", err)
				}
				if pw == 0 && len(ps) > 0 {
					pw = len(ps[0])
				}
				if pw == 0 || l.Slots%pw != 0 || len(ps) != l.Slots/pw {
					return nil, 0, fmt.Errorf("%w: diagonal in %d pieces, not %d-word pieces covering %d slots", ErrParams, len(ps), pw, l.Slots)
				}
				for _, p := range ps {
					if len(p) != pw {
						return nil, 0, fmt.Errorf("%w: diagonal pieces of %d and %d words", ErrParams, pw, len(p))
					}
				}
				src[(g*l.B1+j)*limbs+li] = ps
			}
		}
	}
	return src, pw, nil
}

// products adds Σ_j piece(g, j, limb, k)·rot_j(x) into S_g of every query
// for giant steps g0 ≤ g < g1, over the given limbs. piece returns piece k
// (pw words, covering slots [k·pw, (k+1)·pw)) of a diagonal's limb. Work
// items are (limb, range of productChunk slots within a piece), taken by
// up to workers goroutines, each holding a core of its gate; within an
// item, block by block of inPlaceBlock slots, the queries take the same
// pieces in turn.
func (s *Server) products(ctx context.Context, l Layout, jobs []*hintJob, g0, g1, limbs, pw int,
	piece func(g, j, li, k int) []uint64, gated func(func() error) error, workers int) error {
	chunk := min(pw, productChunk)
	sb := min(chunk, inPlaceBlock)
	per := l.Slots / chunk
	return each(ctx, limbs*per, workers, func(it int) error {
		li, first := it/per, it%per*chunk
		k := first / pw
		base := k * pw
		m := &s.mods[li]
		ds := make([][]uint64, l.B1)
		b0s, b1s := make([][]uint64, l.B1), make([][]uint64, l.B1)
		hi, lo := make([]uint64, sb), make([]uint64, sb)
		return gated(func() error {
			for off := first; off < first+chunk; off += sb {
				for _, job := range jobs {
					for j := range l.B1 {
						b0s[j] = job.baby[j].Value[0].Coeffs[li][off : off+sb]
						b1s[j] = job.baby[j].Value[1].Coeffs[li][off : off+sb]
					}
					for g := g0; g < g1; g++ {
						for j := range l.B1 {
							ds[j] = piece(g, j, li, k)[off-base : off-base+sb]
						}
						sum := job.sums[g]
						dotMont(ds, b0s, sum.Value[0].Coeffs[li][off:off+sb], hi, lo, m)
						dotMont(ds, b1s, sum.Value[1].Coeffs[li][off:off+sb], hi, lo, m)
					}
				}
			}
			return nil
		})
	})
}

// giantSums returns b ciphertexts at level for the giant-step sums
// (pooled: 8 MiB a query at a 4 GiB database's layout).
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
