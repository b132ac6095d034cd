package edge

import (
	"fmt"
	"math"
	"unsafe"
)

// The CKKS canonical embedding with Lattigo's slot order. Write the
// plaintext m(X) = Σ c_j X^j (j < N) as the complex polynomial
// z(X) = Σ_{j<n} (c_j + i·c_{j+n}) X^j with n = N/2; for g ≡ 1 mod 4,
// m(ζ^g) = z(ζ^g) where ζ = e^{2πi/2N}. Slot k holds m(ζ^(5^k mod 2N)).
//
// z is evaluated at the n roots of X^n = ζ^n by a Cooley-Tukey split whose
// twiddles depend only on the block (like the negacyclic NTT): at depth s,
// block brev_s(k) uses e^{iπ(1+4k)/2^(s+2)}, and leaf i ends up holding
// z(ζ^(1+4·brev(i))). Twiddles are computed on the fly (one Sincos per
// block, n-1 in all), so the encoder needs no table either.

// floats views a word buffer as float64s (same size and alignment), so the
// encoder works inside a bank buffer instead of allocating its own.
func floats(b []uint64) []float64 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&b[0])), len(b))
}

func ints(b []uint64) []int64 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(&b[0])), len(b))
}

// slotIndex returns the leaf holding slot k's root for the exponent g = 5^k
// mod 2N: leaf brev((g-1)/4).
func slotLeaf(g uint64, logn int) int { return int(brev((g-1)/4, logn)) }

// twiddler yields e^{±iπ(1+4k)/2^(s+2)} for k = 0, 1, …: a complex
// recurrence w ← w·r, re-anchored with an exact Sincos every 16 steps so
// the rounding drift stays at a few ulps.
type twiddler struct {
	s      int
	conj   bool
	wr, wi float64
	rr, ri float64
}

func (t *twiddler) init(s int, conj bool) {
	t.s, t.conj = s, conj
	t.ri, t.rr = math.Sincos(math.Pi * 4 / float64(uint64(4)<<s))
	if conj {
		t.ri = -t.ri
	}
}

func (t *twiddler) next(k int) (float64, float64) {
	if k&15 == 0 {
		t.wi, t.wr = math.Sincos(math.Pi * float64(1+4*k) / float64(uint64(4)<<t.s))
		if t.conj {
			t.wi = -t.wi
		}
	} else {
		t.wr, t.wi = t.wr*t.rr-t.wi*t.ri, t.wr*t.ri+t.wi*t.rr
	}
	return t.wr, t.wi
}

// embedForward evaluates: (re, im) coefficients of z → leaf values.
func embedForward(re, im []float64, logn int) {
	n := 1 << logn
	re, im = re[:n], im[:n]
	for s, m, h := 0, 1, n>>1; m < n; s, m, h = s+1, m<<1, h>>1 {
		var tw twiddler
		tw.init(s, false)
		for k := 0; k < m; k++ {
			i := int(brev(uint64(k), s))
			wr, wi := tw.next(k)
			xr, xi := re[2*i*h:2*i*h+h], im[2*i*h:2*i*h+h]
			yr, yi := re[2*i*h+h:2*i*h+2*h], im[2*i*h+h:2*i*h+2*h]
			xi, yr, yi = xi[:len(xr)], yr[:len(xr)], yi[:len(xr)]
			for j := range xr {
				tr := yr[j]*wr - yi[j]*wi
				ti := yr[j]*wi + yi[j]*wr
				ar, ai := xr[j], xi[j]
				xr[j], xi[j] = ar+tr, ai+ti
				yr[j], yi[j] = ar-tr, ai-ti
			}
		}
	}
}

// embedInverse undoes embedForward up to a factor n (not divided).
func embedInverse(re, im []float64, logn int) {
	n := 1 << logn
	re, im = re[:n], im[:n]
	for s, m, h := logn-1, n>>1, 1; m >= 1; s, m, h = s-1, m>>1, h<<1 {
		var tw twiddler
		tw.init(s, true)
		for k := 0; k < m; k++ {
			i := int(brev(uint64(k), s))
			wr, wi := tw.next(k)
			xr, xi := re[2*i*h:2*i*h+h], im[2*i*h:2*i*h+h]
			yr, yi := re[2*i*h+h:2*i*h+2*h], im[2*i*h+h:2*i*h+2*h]
			xi, yr, yi = xi[:len(xr)], yr[:len(xr)], yi[:len(xr)]
			for j := range xr {
				ar, ai := xr[j], xi[j]
				br, bi := yr[j], yi[j]
				xr[j], xi[j] = ar+br, ai+bi
				dr, di := ar-br, ai-bi
				yr[j] = dr*wr - di*wi
				yi[j] = dr*wi + di*wr
			}
		}
	}
}

// maxCoeff bounds encoded coefficients so that adding errors and reducing
// with Modulus.ReduceSigned stays exact.
const maxCoeff = 1 << 61

// encodeInto writes round(Δ·m) for the real slot values into buf (len N)
// as signed 64-bit coefficients. buf doubles as the complex work area.
func encodeInto(buf []uint64, values []float64, scale float64, logN int) error {
	n := 1 << (logN - 1)
	if len(values) > n {
		return fmt.Errorf("edge: %d values exceed the %d slots", len(values), n)
	}
	if !(scale >= 1) || math.IsInf(scale, 0) {
		return fmt.Errorf("edge: scale %v out of range", scale)
	}
	f := floats(buf)
	re, im := f[:n], f[n:2*n]
	clear(f)
	twoN := uint64(1) << (logN + 1)
	g := uint64(1)
	for k, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("edge: slot %d is %v", k, v)
		}
		re[slotLeaf(g, logN-1)] = v
		g = g * 5 & (twoN - 1)
	}
	embedInverse(re, im, logN-1)
	c := scale / float64(n)
	out := ints(buf)
	for j, x := range f {
		y := math.Floor(x*c + 0.5) // Floor is a single instruction on amd64 (SSE4.1)
		if y >= maxCoeff || y <= -maxCoeff {
			return fmt.Errorf("edge: encoded coefficient %d = %g exceeds 2^61 (values too large for scale %g)", j, y, scale)
		}
		out[j] = int64(y)
	}
	return nil
}

// decodeFrom turns the real coefficients (already divided by Δ) held in buf
// (as float64, len N) into slot values.
func decodeFrom(buf []uint64, out []float64, logN int) error {
	n := 1 << (logN - 1)
	if len(out) > n {
		return fmt.Errorf("edge: %d outputs exceed the %d slots", len(out), n)
	}
	f := floats(buf)
	re, im := f[:n], f[n:2*n]
	embedForward(re, im, logN-1)
	twoN := uint64(1) << (logN + 1)
	g := uint64(1)
	for k := range out {
		out[k] = re[slotLeaf(g, logN-1)]
		g = g * 5 & (twoN - 1)
	}
	return nil
}
