package lwepir

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// ComputeHint returns H' = (D − 128)·A, Rows × N entries modulo 2^32
// row-major, reading each tile once (a HintBuilder over tiles).
func ComputeHint(ctx context.Context, p Params, shape Shape, seed [SeedSize]byte, tiles Tiles) ([]uint32, error) {
	if err := shape.Validate(p); err != nil {
		return nil, err
	}
	hb, err := NewHintBuilder(p, shape.Rows, seed)
	if err != nil {
		return nil, err
	}
	tile := make([]byte, shape.TileBytes(p))
	nb := tiles.Blocks()
	bb := len(tile) / nb
	n := p.N()
	for k := 0; k < shape.Tiles(p); k++ {
		for b := 0; b < nb; b++ {
			if err := tiles.VisitBlock(ctx, k, b, func(row int, rows []byte) { copy(tile[b*bb+row*n:], rows) }); err != nil {
				return nil, fmt.Errorf("lwepir: reading tile %d: %w", k, err)
			}
		}
		hb.AddTile(tile)
	}
	return hb.Finish(), nil
}

// HintBuilder computes H' tile by tile while a database is written (the
// loader has each tile in hand once). Row i of H' is the coefficient vector
// of h_i(X^{-1}) where h_i = Σ_k d_ik(X^{-1})·a_k(X) over the tiles k: the
// product of a row block with a negacyclic block of A is a polynomial
// product, done with NTTs. Memory: Rows NTT accumulators of N words,
// independent of the number of columns.
type HintBuilder struct {
	p    Params
	rows int
	seed [SeedSize]byte
	nc   *negacyclic
	acc  []ring.Poly
	a    []int64
	aNTT ring.Poly
	k    int
}

// NewHintBuilder starts the hint of a matrix of rows rows.
func NewHintBuilder(p Params, rows int, seed [SeedSize]byte) (*HintBuilder, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	nc, err := newNegacyclic(p)
	if err != nil {
		return nil, err
	}
	hb := &HintBuilder{p: p, rows: rows, seed: seed, nc: nc, acc: make([]ring.Poly, rows), a: make([]int64, p.N()), aNTT: nc.newPoly()}
	for i := range hb.acc {
		hb.acc[i] = nc.newPoly()
	}
	return hb, nil
}

// Tiles is how many tiles have been added.
func (hb *HintBuilder) Tiles() int { return hb.k }

// AddTile adds the next tile (Rows × N bytes, row-major). Its workers
// take every core the process has, so each yields after every row: a
// compaction builds its hint beside updates of the same client, whose
// calls (and the gRPC goroutines that carry them) otherwise waited for
// the scheduler to preempt a worker at each step: beside a compaction of
// 200,000 keys on 2 shared cores, the client's part of an update's two
// writes was 48 ms at the 99th percentile, 22 ms with the yield (a row's
// NTT and product take microseconds, a yield a fraction of one).
func (hb *HintBuilder) AddTile(tile []byte) {
	n, nc := hb.p.N(), hb.nc
	publicBlock(hb.seed, hb.k, hb.a)
	hb.k++
	nc.load(hb.aNTT, hb.a)
	nc.r.NTT(hb.aNTT, hb.aNTT)
	workers := min(runtime.GOMAXPROCS(0), hb.rows)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			d, dp := make([]int64, n), nc.newPoly()
			for i := w; i < hb.rows; i += workers {
				for t, b := range tile[i*n : (i+1)*n] {
					d[t] = int64(b) - centre
				}
				nc.loadReversed(dp, d)
				nc.r.NTT(dp, dp)
				nc.r.MulCoeffsBarrettThenAdd(dp, hb.aNTT, hb.acc[i])
				runtime.Gosched()
			}
		}(w)
	}
	wg.Wait()
}

// Finish returns H' (Rows × N, row-major). The builder is spent.
func (hb *HintBuilder) Finish() []uint32 {
	n, nc := hb.p.N(), hb.nc
	h := make([]uint32, hb.rows*n)
	for i := range hb.acc {
		nc.r.INTT(hb.acc[i], hb.acc[i])
		c := hb.acc[i].Coeffs[0]
		row := h[i*n : (i+1)*n]
		row[0] = nc.mod32(c[0])
		for j := 1; j < n; j++ {
			row[j] = -nc.mod32(c[n-j])
		}
		hb.acc[i] = ring.Poly{}
	}
	return h
}

// DiagonalCount is how many plaintexts EncodeDiagonals produces.
func DiagonalCount(p Params, shape Shape) int { return shape.Layout(p).Diagonals() }

// diagonalIndex orders the plaintexts as the evaluation reads them: for each
// output ciphertext o, giant step g, baby step j.
func (l Layout) diagonalIndex(o, g, j int) int { return (o*l.B2+g)*l.B1 + j }

// DiagonalWords is the length of one encoded diagonal in uint64 words.
func DiagonalWords(p Params) int {
	return len(p.HintLogQ) * p.HintSlots()
}

// EncodeDiagonals turns H' into the plaintexts of the evaluation (see
// Layout) and hands each to emit in index order. Plaintext (o, g, j) holds
// in slot (r, c) of the 2 × slots/2 slot matrix the entry of diagonal
// d = g·B1 + j for the slot c' = c − g·B1 (mod slots/2) it came from:
// H'[slotRow(o, c')][(c' + d) mod N], which is H'[slotRow(o, c')][(c + j) mod N]:
// diagonals pre-rotated by −g·B1 so that the giant-step rotations apply
// once to each sum (Horner's rule over g).
func EncodeDiagonals(p Params, shape Shape, h []uint32, emit func(i int, words []uint64) error) error {
	if err := shape.Validate(p); err != nil {
		return err
	}
	n := p.N()
	if len(h) != shape.Rows*n {
		return fmt.Errorf("%w: hint of %d entries for %d rows", ErrParams, len(h), shape.Rows)
	}
	bp, err := p.hintParams()
	if err != nil {
		return err
	}
	ecd := bgv.NewEncoder(bp)
	l := shape.Layout(p)
	half := l.Slots / 2
	t := p.HintT
	vals := make([]uint64, l.Slots)
	pt := bgv.NewPlaintext(bp, bp.MaxLevel())
	pt.IsMontgomery = true
	words := make([]uint64, DiagonalWords(p))
	for o := 0; o < l.Outputs; o++ {
		for g := 0; g < l.B2; g++ {
			for j := 0; j < l.B1; j++ {
				for v := range vals {
					r, c := v/half, v%half
					src := (c - g*l.B1%half + half) % half
					i := l.slotRow(o, r*half+src)
					if i >= shape.Rows {
						vals[v] = 0
						continue
					}
					x := int64(int32(h[i*n+(c+j)%n]))
					if x < 0 {
						vals[v] = t - uint64(-x)
					} else {
						vals[v] = uint64(x)
					}
				}
				// Not scaled by t^{-1} as encrypted plaintexts are: a
				// multiplicand keeps the ciphertext's representation.
				if err := ecd.EmbedScale(vals, false, pt.MetaData, pt.Value); err != nil {
					return err
				}
				for limb, c := range pt.Value.Coeffs {
					copy(words[limb*l.Slots:(limb+1)*l.Slots], c)
				}
				if err := emit(l.diagonalIndex(o, g, j), words); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
