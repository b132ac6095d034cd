package nonlinear

import (
	"slices"
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/ot"
	"github.com/rosemary-fhe/rosemary/optiprime/share"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

func testPRG(t testing.TB) *share.PRG {
	g, err := share.NewPRG()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func mustRing(t testing.TB, bits int) share.Ring {
	r, err := share.NewRing(bits)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// both runs f0 (party 0, server) and f1 (party 1, client) concurrently.
func both[T any](t testing.TB, f0, f1 func() (T, error)) (T, T) {
	t.Helper()
	type res struct {
		v   T
		err error
	}
	c := make(chan res, 1)
	go func() { v, err := f0(); c <- res{v, err} }()
	v1, err1 := f1()
	r0 := <-c
	if r0.err != nil {
		t.Fatalf("party 0: %v", r0.err)
	}
	if err1 != nil {
		t.Fatalf("party 1: %v", err1)
	}
	return r0.v, v1
}

// pair connects two parties over an in-memory pipe.
func pair(t testing.TB, bits int) (*Party, *Party) {
	t.Helper()
	r := mustRing(t, bits)
	c, s := transport.Pipe()
	t.Cleanup(func() { c.Close(); s.Close() })
	// The small Ferret set (also 128-bit) keeps each test pair's pools at
	// ≈ 10 MB; NewParty's regular set runs in the two-process tests.
	return both(t, func() (*Party, error) { return newParty(s, r, ot.FerretSmall) }, func() (*Party, error) { return newParty(c, r, ot.FerretSmall) })
}

// signedInputs returns n random signed values of the ring, with the edge
// values 0, ±1, max, min, max-1, min+1 first.
func signedInputs(g *share.PRG, r share.Ring, n int) []uint64 {
	x := g.Uniform(r, n)
	edges := []int64{0, -1, 1, r.MaxSigned(), r.MinSigned(), r.MaxSigned() - 1, r.MinSigned() + 1, 4096, -4096}
	for i, e := range edges {
		if i < n {
			x[i] = r.FromSigned(e)
		}
	}
	return x
}

func xorBits(a, b []uint8) []uint8 {
	out := make([]uint8, len(a))
	for i := range a {
		out[i] = a[i] ^ b[i]
	}
	return out
}

func TestMillionaires(t *testing.T) {
	p0, p1 := pair(t, 37)
	g := testPRG(t)
	for _, k := range []int{1, 3, 4, 5, 8, 13, 36, 37, 64} {
		m := share.Mask(k)
		const n = 600
		a, b := make([]uint64, n), make([]uint64, n)
		for i := range a {
			a[i], b[i] = g.Uint64()&m, g.Uint64()&m
		}
		// Edges: equal, max vs 0, differing only in the lowest / highest bit,
		// equal high blocks with different low blocks.
		a[0], b[0] = 0, 0
		a[1], b[1] = m, 0
		a[2], b[2] = 0, m
		a[3], b[3] = m, m
		a[4], b[4] = b[5]|1, b[5]&^1
		a[5] = b[5]
		a[6], b[6] = m>>1, m>>1+1&m
		a[7], b[7] = a[8]^1, a[8]
		s0, s1 := both(t, func() ([]uint8, error) { return p0.Millionaires(a, k) }, func() ([]uint8, error) { return p1.Millionaires(b, k) })
		for i := range a {
			want := uint8(0)
			if a[i] > b[i] {
				want = 1
			}
			if s0[i]^s1[i] != want || s0[i] > 1 || s1[i] > 1 {
				t.Fatalf("k=%d: %d > %d: shares %d %d, want %d", k, a[i], b[i], s0[i], s1[i], want)
			}
		}
	}
}

func TestMillionairesRejectsWideInput(t *testing.T) {
	p0, _ := pair(t, 8)
	if _, err := p0.Millionaires([]uint64{16}, 4); err == nil {
		t.Error("5-bit value accepted for k=4")
	}
	if _, err := p0.Millionaires(nil, 65); err == nil {
		t.Error("k=65 accepted")
	}
}

func TestCarry(t *testing.T) {
	p0, p1 := pair(t, 37)
	g := testPRG(t)
	const k, n = 36, 1000
	r := mustRing(t, k)
	x0, x1 := g.Uniform(r, n), g.Uniform(r, n)
	x0[0], x1[0] = r.Mask(), 1 // exactly 2^k
	x0[1], x1[1] = r.Mask(), 0 // 2^k - 1
	s0, s1 := both(t, func() ([]uint8, error) { return p0.Carry(x0, k) }, func() ([]uint8, error) { return p1.Carry(x1, k) })
	for i := range x0 {
		want := uint8((x0[i] + x1[i]) >> k)
		if s0[i]^s1[i] != want {
			t.Fatalf("carry(%d + %d) = %d, want %d", x0[i], x1[i], s0[i]^s1[i], want)
		}
	}
}

func TestDReLUAndReLU(t *testing.T) {
	g := testPRG(t)
	for _, l := range []int{2, 8, 37, 44, 64} {
		p0, p1 := pair(t, l)
		r := p0.Ring()
		x := signedInputs(g, r, 1500)
		x0, x1 := r.Split(g, x)
		d0, d1 := both(t, func() ([]uint8, error) { return p0.DReLU(x0) }, func() ([]uint8, error) { return p1.DReLU(x1) })
		y0, y1 := both(t, func() ([]uint64, error) { return p0.ReLU(x0) }, func() ([]uint64, error) { return p1.ReLU(x1) })
		y, _ := r.Reconstruct(y0, y1)
		for i := range x {
			v := r.ToSigned(x[i])
			wantD, wantY := uint8(0), int64(0)
			if v >= 0 {
				wantD, wantY = 1, v
			}
			if d0[i]^d1[i] != wantD {
				t.Fatalf("ℓ=%d DReLU(%d) = %d", l, v, d0[i]^d1[i])
			}
			if r.ToSigned(y[i]) != wantY {
				t.Fatalf("ℓ=%d ReLU(%d) = %d", l, v, r.ToSigned(y[i]))
			}
		}
	}
}

func TestMuxAndB2A(t *testing.T) {
	p0, p1 := pair(t, 44)
	g := testPRG(t)
	r := p0.Ring()
	const n = 1000
	x := g.Uniform(r, n)
	x0, x1 := r.Split(g, x)
	d0, d1 := g.Bits(n), g.Bits(n)
	m0, m1 := both(t, func() ([]uint64, error) { return p0.Mux(d0, x0) }, func() ([]uint64, error) { return p1.Mux(d1, x1) })
	m, _ := r.Reconstruct(m0, m1)
	for i := range x {
		if want := r.Mul(uint64(d0[i]^d1[i]), x[i]); m[i] != want {
			t.Fatalf("mux %d: got %d want %d", i, m[i], want)
		}
	}
	for _, bits := range []int{1, 12, 44} {
		rb := mustRing(t, bits)
		a0, a1 := both(t, func() ([]uint64, error) { return p0.B2A(d0, rb) }, func() ([]uint64, error) { return p1.B2A(d1, rb) })
		a, _ := rb.Reconstruct(a0, a1)
		for i := range a {
			if a[i] != uint64(d0[i]^d1[i]) {
				t.Fatalf("B2A into %d bits: element %d = %d, want %d", bits, i, a[i], d0[i]^d1[i])
			}
		}
	}
}

func floorDiv(v int64, s int) int64 { return v >> uint(s) } // arithmetic shift = floor

func TestTruncate(t *testing.T) {
	g := testPRG(t)
	for _, tc := range []struct{ l, s int }{{37, 12}, {44, 12}, {64, 12}, {37, 1}, {37, 36}, {16, 12}} {
		p0, p1 := pair(t, tc.l)
		r := p0.Ring()
		x := signedInputs(g, r, 3000)
		x0, x1 := r.Split(g, x)
		y0, y1 := both(t, func() ([]uint64, error) { return p0.Truncate(x0, tc.s) }, func() ([]uint64, error) { return p1.Truncate(x1, tc.s) })
		y, _ := r.Reconstruct(y0, y1)
		exact, low := 0, 0
		for i := range x {
			v := r.ToSigned(x[i])
			want := floorDiv(v, tc.s)
			got := r.ToSigned(y[i])
			switch got {
			case want:
				exact++
			case want - 1:
				low++
			default:
				t.Fatalf("ℓ=%d s=%d: trunc(%d) = %d, want %d or %d", tc.l, tc.s, v, got, want, want-1)
			}
		}
		// Both outcomes occur (c is the carry of two random low halves).
		if tc.s > 4 && (exact == 0 || low == 0) {
			t.Errorf("ℓ=%d s=%d: %d exact, %d low: error distribution implausible", tc.l, tc.s, exact, low)
		}
	}
	p0, _ := pair(t, 16)
	if _, err := p0.Truncate([]uint64{1}, 16); err == nil {
		t.Error("truncation by the whole ring width accepted")
	}
}

// TestTruncateExact checks ⌊x/2^s⌋ exactly on random signed values and on
// the edges of the signed range and of the low s bits.
func TestTruncateExact(t *testing.T) {
	g := testPRG(t)
	for _, tc := range []struct{ l, s int }{{37, 12}, {44, 12}, {64, 12}, {37, 1}, {37, 36}, {16, 12}, {37, 5}} {
		p0, p1 := pair(t, tc.l)
		r := p0.Ring()
		x := signedInputs(g, r, 3000)
		for _, v := range []int64{0, 1, -1, int64(1)<<tc.s - 1, int64(1) << tc.s, -(int64(1) << tc.s), -(int64(1) << tc.s) + 1} {
			x = append(x, r.FromSigned(v))
		}
		if tc.l < 64 { // the signed range's ends
			x = append(x, r.FromSigned(int64(1)<<(tc.l-1)-1), r.FromSigned(-(int64(1) << (tc.l - 1))))
		}
		x0, x1 := r.Split(g, x)
		y0, y1 := both(t, func() ([]uint64, error) { return p0.TruncateExact(x0, tc.s) }, func() ([]uint64, error) { return p1.TruncateExact(x1, tc.s) })
		y, _ := r.Reconstruct(y0, y1)
		for i := range x {
			v := r.ToSigned(x[i])
			if got, want := r.ToSigned(y[i]), floorDiv(v, tc.s); got != want {
				t.Fatalf("ℓ=%d s=%d: exact trunc(%d) = %d, want %d", tc.l, tc.s, v, got, want)
			}
		}
	}
	p0, _ := pair(t, 16)
	if _, err := p0.TruncateExact([]uint64{1}, 0); err == nil {
		t.Error("truncation by 2^0 accepted")
	}
}

// TestTruncateNonneg checks the known-top-bit truncation exactly on random
// values of [0, 2^{ℓ-1}) and its edges, and that ReLU then TruncateNonneg
// equals TruncateExact then ReLU (how package e2e fuses them).
func TestTruncateNonneg(t *testing.T) {
	g := testPRG(t)
	for _, tc := range []struct{ l, s int }{{37, 12}, {44, 12}, {64, 12}, {37, 1}, {37, 35}, {37, 36}, {16, 12}} {
		p0, p1 := pair(t, tc.l)
		r := p0.Ring()
		top := uint64(1) << (tc.l - 1) // values below it
		x := g.Uniform(r, 3000)
		for i := range x {
			x[i] &= top - 1
		}
		x = append(x, 0, 1, 1<<tc.s-1, top-1)
		if tc.s < tc.l-1 {
			x = append(x, 1<<tc.s, 1<<tc.s+1, top-1<<tc.s, top-1<<tc.s-1)
		}
		x0, x1 := r.Split(g, x)
		y0, y1 := both(t, func() ([]uint64, error) { return p0.TruncateNonneg(x0, tc.s) }, func() ([]uint64, error) { return p1.TruncateNonneg(x1, tc.s) })
		y, _ := r.Reconstruct(y0, y1)
		for i := range x {
			if want := x[i] >> tc.s; y[i] != want {
				t.Fatalf("ℓ=%d s=%d: trunc(%d) = %d, want %d", tc.l, tc.s, x[i], y[i], want)
			}
		}
	}
	p0, p1 := pair(t, 37)
	r := p0.Ring()
	x := signedInputs(g, r, 2000)
	x0, x1 := r.Split(g, x)
	fused := func(p *Party, x []uint64) ([]uint64, error) {
		y, err := p.ReLU(x)
		if err != nil {
			return nil, err
		}
		return p.TruncateNonneg(y, 12)
	}
	y0, y1 := both(t, func() ([]uint64, error) { return fused(p0, x0) }, func() ([]uint64, error) { return fused(p1, x1) })
	y, _ := r.Reconstruct(y0, y1)
	for i := range x {
		v := r.ToSigned(x[i])
		if got, want := r.ToSigned(y[i]), max(floorDiv(v, 12), 0); got != want {
			t.Fatalf("trunc(ReLU(%d)) = %d, want ReLU(⌊x/2^12⌋) = %d", v, got, want)
		}
	}
	if _, err := p0.TruncateNonneg([]uint64{1}, 37); err == nil {
		t.Error("truncation by 2^ℓ accepted")
	}
}

// TestReLUTruncate checks the fused ReLU and truncation exactly against
// ⌊max(x, 0)/2^s⌋ on random signed values and the edges of both ranges,
// with leaf frames and AND batches made small so that its two
// comparisons share passes of several frames and split AND batches.
func TestReLUTruncate(t *testing.T) {
	g := testPRG(t)
	old, oldPass, oldAnd := millionairesChunk, millionairesPassOTs, andBatch
	millionairesChunk, millionairesPassOTs, andBatch = 100, 8000, 150
	defer func() { millionairesChunk, millionairesPassOTs, andBatch = old, oldPass, oldAnd }()
	for _, tc := range []struct{ l, s int }{{37, 12}, {44, 12}, {64, 12}, {37, 1}, {37, 35}, {37, 36}, {16, 12}, {37, 5}} {
		p0, p1 := pair(t, tc.l)
		r := p0.Ring()
		x := signedInputs(g, r, 700)
		for _, v := range []int64{0, 1, -1, int64(1)<<tc.s - 1, int64(1) << tc.s, -(int64(1) << tc.s), -(int64(1) << tc.s) + 1} {
			x = append(x, r.FromSigned(v))
		}
		if tc.l < 64 {
			x = append(x, r.FromSigned(int64(1)<<(tc.l-1)-1), r.FromSigned(-(int64(1) << (tc.l - 1))))
		}
		x0, x1 := r.Split(g, x)
		y0, y1 := both(t, func() ([]uint64, error) { return p0.ReLUTruncate(x0, tc.s) }, func() ([]uint64, error) { return p1.ReLUTruncate(x1, tc.s) })
		y, _ := r.Reconstruct(y0, y1)
		for i := range x {
			v := r.ToSigned(x[i])
			if got, want := r.ToSigned(y[i]), max(floorDiv(v, tc.s), 0); got != want {
				t.Fatalf("ℓ=%d s=%d: ⌊ReLU(%d)/2^s⌋ = %d, want %d", tc.l, tc.s, v, got, want)
			}
		}
	}
	p0, _ := pair(t, 37)
	for _, s := range []int{0, 37} {
		if _, err := p0.ReLUTruncate([]uint64{1}, s); err == nil {
			t.Errorf("truncation by 2^%d accepted", s)
		}
	}
}

// Fixed-point product then truncation: the usual use of Truncate.
func TestFixedPointMultiplyTruncate(t *testing.T) {
	p0, p1 := pair(t, 37)
	g := testPRG(t)
	r := p0.Ring()
	a, _ := r.EncodeVec([]float64{1.5, -2.25, 0.001, -100, 3.75}, share.Scale)
	w, _ := r.Encode(0.5, share.Scale)
	prod := r.ScaleVec(make([]uint64, len(a)), a, w) // scale 2^24
	x0, x1 := r.Split(g, prod)
	y0, y1 := both(t, func() ([]uint64, error) { return p0.Truncate(x0, share.Scale) }, func() ([]uint64, error) { return p1.Truncate(x1, share.Scale) })
	y, _ := r.Reconstruct(y0, y1)
	for i, want := range []float64{0.75, -1.125, 0.0005, -50, 1.875} {
		if got := r.Decode(y[i], share.Scale); got < want-2.0/4096 || got > want+1.0/4096 {
			t.Errorf("%v·0.5 = %v", r.Decode(a[i], share.Scale), got)
		}
	}
}

func TestMaxAndMaxPool(t *testing.T) {
	p0, p1 := pair(t, 37)
	g := testPRG(t)
	r := p0.Ring()
	const n = 600
	lim := uint64(1) << 34 // |x| < 2^{ℓ-3}
	rand := func() []uint64 {
		v := make([]uint64, n)
		for i := range v {
			v[i] = r.FromSigned(int64(g.Uint64()%(2*lim)) - int64(lim))
		}
		return v
	}
	x, y := rand(), rand()
	x[0], y[0] = 0, r.FromSigned(-1)
	x[1], y[1] = r.FromSigned(-5), r.FromSigned(-5)
	x0, x1 := r.Split(g, x)
	y0, y1 := r.Split(g, y)
	ge0, ge1 := both(t, func() ([]uint8, error) { return p0.GreaterEqual(x0, y0) }, func() ([]uint8, error) { return p1.GreaterEqual(x1, y1) })
	m0, m1 := both(t, func() ([]uint64, error) { return p0.Max(x0, y0) }, func() ([]uint64, error) { return p1.Max(x1, y1) })
	m, _ := r.Reconstruct(m0, m1)
	for i := range x {
		a, b := r.ToSigned(x[i]), r.ToSigned(y[i])
		if got := ge0[i] ^ ge1[i]; (got == 1) != (a >= b) {
			t.Fatalf("%d >= %d gave %d", a, b, got)
		}
		if got := r.ToSigned(m[i]); got != max(a, b) {
			t.Fatalf("max(%d, %d) = %d", a, b, got)
		}
	}
	for _, window := range []int{1, 2, 3, 4, 9} {
		xs := x[:n/window*window]
		s0, s1 := r.Split(g, xs)
		o0, o1 := both(t, func() ([]uint64, error) { return p0.MaxPool(s0, window) }, func() ([]uint64, error) { return p1.MaxPool(s1, window) })
		o, _ := r.Reconstruct(o0, o1)
		if len(o) != len(xs)/window {
			t.Fatalf("window %d: %d outputs", window, len(o))
		}
		for w := range o {
			want := r.ToSigned(xs[w*window])
			for _, v := range xs[w*window : (w+1)*window] {
				want = max(want, r.ToSigned(v))
			}
			if got := r.ToSigned(o[w]); got != want {
				t.Fatalf("window %d #%d: max-pool %d, want %d", window, w, got, want)
			}
		}
	}
	if _, err := p0.MaxPool(x[:5], 2); err == nil {
		t.Error("max-pool of 5 values in windows of 2 accepted")
	}
}

// TestMaxPoolNonneg: windows of values in [0, 2^bits) — a truncated
// ReLU's outputs — reduce to their maxima bit for bit with the narrower
// comparison, the range's edges (0, 2^bits − 1, equal neighbours) included,
// and out-of-range widths are refused.
func TestMaxPoolNonneg(t *testing.T) {
	const l = 37
	p0, p1 := pair(t, l)
	g := testPRG(t)
	r := p0.Ring()
	for _, bits := range []int{1, 2, 12, 24, l - 2} {
		top := uint64(1)<<bits - 1
		for _, window := range []int{1, 2, 3, 4, 9} {
			n := 90 * window
			xs := make([]uint64, n)
			for i := range xs {
				switch i % 7 {
				case 0:
					xs[i] = 0
				case 1:
					xs[i] = top
				case 2:
					xs[i] = top - uint64(i%3)&top
				default:
					xs[i] = g.Uint64() & top
				}
			}
			s0, s1 := r.Split(g, xs)
			o0, o1 := both(t, func() ([]uint64, error) { return p0.MaxPoolNonneg(s0, window, bits) },
				func() ([]uint64, error) { return p1.MaxPoolNonneg(s1, window, bits) })
			o, _ := r.Reconstruct(o0, o1)
			for w := range o {
				want := slices.Max(xs[w*window : (w+1)*window])
				if o[w] != want {
					t.Fatalf("bits %d window %d #%d: max-pool %d, want %d (%v)", bits, window, w, o[w], want, xs[w*window:(w+1)*window])
				}
			}
		}
	}
	for _, bits := range []int{0, l - 1, l} {
		if _, err := p0.MaxPoolNonneg(make([]uint64, 4), 2, bits); err == nil {
			t.Errorf("max-pool of values below 2^%d in a %d-bit ring accepted", bits, l)
		}
	}
}

// Batches larger than one leaf frame are split into frames, larger than
// one pass of leaves into passes, and a tree level's ANDs into batches;
// results must not depend on where the splits fall.
func TestMillionairesChunking(t *testing.T) {
	old, oldPass, oldAnd := millionairesChunk, millionairesPassOTs, andBatch
	millionairesChunk, millionairesPassOTs, andBatch = 64, 2*64*36, 100 // passes of two frames at 36 bits
	defer func() { millionairesChunk, millionairesPassOTs, andBatch = old, oldPass, oldAnd }()
	p0, p1 := pair(t, 37)
	g := testPRG(t)
	r := p0.Ring()
	x := signedInputs(g, r, 64*5+7)
	x0, x1 := r.Split(g, x)
	y0, y1 := both(t, func() ([]uint64, error) { return p0.ReLU(x0) }, func() ([]uint64, error) { return p1.ReLU(x1) })
	y, _ := r.Reconstruct(y0, y1)
	for i := range x {
		if v := r.ToSigned(x[i]); r.ToSigned(y[i]) != max(v, 0) {
			t.Fatalf("ReLU(%d) = %d", v, r.ToSigned(y[i]))
		}
	}
}

// Empty batches complete (and keep both parties in step).
func TestEmptyBatches(t *testing.T) {
	p0, p1 := pair(t, 37)
	y0, y1 := both(t, func() ([]uint64, error) { return p0.ReLU(nil) }, func() ([]uint64, error) { return p1.ReLU(nil) })
	if len(y0) != 0 || len(y1) != 0 {
		t.Fatal("outputs from empty input")
	}
	z0, z1 := both(t, func() ([]uint64, error) { return p0.Truncate(nil, 12) }, func() ([]uint64, error) { return p1.Truncate(nil, 12) })
	if len(z0) != 0 || len(z1) != 0 {
		t.Fatal("outputs from empty input")
	}
	// And the session still works afterwards.
	r := p0.Ring()
	g := testPRG(t)
	x0, x1 := r.Split(g, []uint64{r.FromSigned(-3), 5})
	y0, y1 = both(t, func() ([]uint64, error) { return p0.ReLU(x0) }, func() ([]uint64, error) { return p1.ReLU(x1) })
	if y, _ := r.Reconstruct(y0, y1); y[0] != 0 || y[1] != 5 {
		t.Fatalf("after empty batches: %v", y)
	}
}

func TestReveal(t *testing.T) {
	p0, p1 := pair(t, 44)
	g := testPRG(t)
	r := p0.Ring()
	x := signedInputs(g, r, 100)
	x0, x1 := r.Split(g, x)
	a, b := both(t, func() ([]uint64, error) { return p0.Reveal(x0) }, func() ([]uint64, error) { return p1.Reveal(x1) })
	for i := range x {
		if a[i] != x[i] || b[i] != x[i] {
			t.Fatalf("reveal %d: %d %d want %d", i, a[i], b[i], x[i])
		}
	}
	a, b = both(t, func() ([]uint64, error) { return p0.RevealTo(x0, 1) }, func() ([]uint64, error) { return p1.RevealTo(x1, 1) })
	if a != nil || len(b) != len(x) || b[5] != x[5] {
		t.Fatal("RevealTo client wrong")
	}
	// The client lies about the count: the server's decoder rejects it.
	if _, err := p1.RevealTo(x1, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := p0.RevealTo(x0[:99], 0); err == nil {
		t.Error("reveal with mismatched lengths accepted")
	}
	if _, err := p0.RevealTo(x0, 2); err == nil {
		t.Error("reveal to party 2 accepted")
	}
}
