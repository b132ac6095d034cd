package nonlinear

import (
	"fmt"
	"testing"
)

// TestSplitWidths runs the millionaires' comparison, ReLU, the fused ReLU
// and truncation, the exact truncation and max-pool with their local loops
// cut into 1, 2, 3, 5 and 8 ranges (every loop split, whatever its size:
// splitMin 1), on batch sizes odd, prime, and smaller than the width, and
// checks each result against the plaintext. With leaf frames, passes and
// AND batches made small, the ranges also fall across frames and batches.
func TestSplitWidths(t *testing.T) {
	oldW, oldMin := splitWidth, splitMin
	old, oldPass, oldAnd := millionairesChunk, millionairesPassOTs, andBatch
	millionairesChunk, millionairesPassOTs, andBatch = 97, 9000, 131
	defer func() {
		splitWidth, splitMin = oldW, oldMin
		millionairesChunk, millionairesPassOTs, andBatch = old, oldPass, oldAnd
	}()
	splitMin = 1
	const l, s = 37, 12
	p0, p1 := pair(t, l)
	g := testPRG(t)
	r := p0.Ring()
	for _, w := range []int{1, 2, 3, 5, 8} {
		splitWidth = w
		for _, n := range []int{1, 2, 3, 7, 255, 1001} {
			name := fmt.Sprintf("width %d, %d values", w, n)
			x := signedInputs(g, r, n)
			x0, x1 := r.Split(g, x)

			// Millionaires on ℓ−1 bits: party 0's a against party 1's b.
			a, b := g.Uniform(mustRing(t, l-1), n), g.Uniform(mustRing(t, l-1), n)
			if n > 1 {
				b[1] = a[1] // equal values: not greater
			}
			c0, c1 := both(t, func() ([]uint8, error) { return p0.Millionaires(a, l-1) }, func() ([]uint8, error) { return p1.Millionaires(b, l-1) })
			for i := range a {
				if got, want := c0[i]^c1[i], a[i] > b[i]; (got == 1) != want {
					t.Fatalf("%s: 1{%d > %d} = %d", name, a[i], b[i], got)
				}
			}

			y0, y1 := both(t, func() ([]uint64, error) { return p0.ReLU(x0) }, func() ([]uint64, error) { return p1.ReLU(x1) })
			y, _ := r.Reconstruct(y0, y1)
			for i := range x {
				if got, want := r.ToSigned(y[i]), max(r.ToSigned(x[i]), 0); got != want {
					t.Fatalf("%s: ReLU(%d) = %d", name, r.ToSigned(x[i]), got)
				}
			}

			y0, y1 = both(t, func() ([]uint64, error) { return p0.ReLUTruncate(x0, s) }, func() ([]uint64, error) { return p1.ReLUTruncate(x1, s) })
			y, _ = r.Reconstruct(y0, y1)
			for i := range x {
				v := r.ToSigned(x[i])
				if got, want := r.ToSigned(y[i]), max(floorDiv(v, s), 0); got != want {
					t.Fatalf("%s: ⌊ReLU(%d)/2^%d⌋ = %d, want %d", name, v, s, got, want)
				}
			}

			y0, y1 = both(t, func() ([]uint64, error) { return p0.TruncateExact(x0, s) }, func() ([]uint64, error) { return p1.TruncateExact(x1, s) })
			y, _ = r.Reconstruct(y0, y1)
			for i := range x {
				v := r.ToSigned(x[i])
				if got, want := r.ToSigned(y[i]), floorDiv(v, s); got != want {
					t.Fatalf("%s: ⌊%d/2^%d⌋ = %d, want %d", name, v, s, got, want)
				}
			}

			// Max-pool over windows of 3 of values in Max's range.
			m := make([]uint64, 3*n)
			for i := range m {
				m[i] = r.FromSigned(int64(g.Uint64()%(1<<34)) - 1<<33)
			}
			m0, m1 := r.Split(g, m)
			o0, o1 := both(t, func() ([]uint64, error) { return p0.MaxPool(m0, 3) }, func() ([]uint64, error) { return p1.MaxPool(m1, 3) })
			o, _ := r.Reconstruct(o0, o1)
			for j := range o {
				want := max(r.ToSigned(m[3*j]), r.ToSigned(m[3*j+1]), r.ToSigned(m[3*j+2]))
				if got := r.ToSigned(o[j]); got != want {
					t.Fatalf("%s: max-pool window %d = %d, want %d", name, j, got, want)
				}
			}
		}
	}
}

// TestSplitRanges: the ranges cover [0, n) in order, without overlap, at
// most the width of them, one range below splitMin or at width 1.
func TestSplitRanges(t *testing.T) {
	oldW, oldMin := splitWidth, splitMin
	defer func() { splitWidth, splitMin = oldW, oldMin }()
	splitMin = 4
	for _, w := range []int{1, 2, 3, 5, 8} {
		splitWidth = w
		for _, n := range []int{0, 1, 3, 4, 5, 7, 8, 9, 1001} {
			rs := splitRanges(n)
			next := 0
			for _, r := range rs {
				if r[0] != next || r[1] <= r[0] && n > 0 {
					t.Fatalf("width %d, n %d: ranges %v", w, n, rs)
				}
				next = r[1]
			}
			if next != n || len(rs) > max(w, 1) || (n < splitMin || w == 1) && len(rs) != 1 {
				t.Fatalf("width %d, n %d: ranges %v", w, n, rs)
			}
		}
	}
}
