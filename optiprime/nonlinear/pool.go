package nonlinear

import "fmt"

// GreaterEqual returns boolean shares of 1{x_i ≥ y_i} for shared signed x
// and y with |x_i|, |y_i| < 2^{ℓ-2} (so that x − y does not overflow).
func (p *Party) GreaterEqual(x, y []uint64) ([]uint8, error) {
	if len(x) != len(y) {
		return nil, fmt.Errorf("nonlinear: compare %d with %d values", len(x), len(y))
	}
	return p.DReLU(p.ring.SubVec(make([]uint64, len(x)), x, y))
}

// Max returns shares of max(x_i, y_i) = y + ReLU(x − y), under the same
// range condition as GreaterEqual.
func (p *Party) Max(x, y []uint64) ([]uint64, error) {
	return p.maxLow(x, y, p.ring.Bits())
}

// maxLow is Max with the comparison over the low w bits of x − y (see
// dreluLow): exact when x − y lies in [−2^{w−1}, 2^{w−1}).
func (p *Party) maxLow(x, y []uint64, w int) ([]uint64, error) {
	if len(x) != len(y) {
		return nil, fmt.Errorf("nonlinear: max of %d and %d values", len(x), len(y))
	}
	diff := p.ring.SubVec(make([]uint64, len(x)), x, y)
	d, err := p.dreluLow(diff, w)
	if err != nil {
		return nil, fmt.Errorf("nonlinear: max: %w", err)
	}
	r, err := p.Mux(d, diff)
	if err != nil {
		return nil, fmt.Errorf("nonlinear: max: %w", err)
	}
	return p.ring.AddVec(r, r, y), nil
}

// MaxPool returns the maximum of each window of `window` consecutive shares
// in x (len(x) must be a multiple of window), reducing all windows at once
// in ⌈log2 window⌉ batched Max steps.
func (p *Party) MaxPool(x []uint64, window int) ([]uint64, error) {
	return p.maxPool(x, window, p.ring.Bits())
}

// MaxPoolNonneg is MaxPool for values known to lie in [0, 2^bits), bits <
// ℓ − 1 (a truncated ReLU's output: below 2^{ℓ−1−s}). The difference of
// two such values lies in (−2^bits, 2^bits), so each Max compares bits
// bits instead of ℓ − 1: at ℓ = 37 and ResNet's s = 8 (bits = 28), 7
// leaves in three tree levels instead of 9 in four — two flights fewer a
// Max and 19% fewer bytes. The result is exact for inputs in range;
// out of range it is not (an output of ReLUTruncate is in range by
// construction).
func (p *Party) MaxPoolNonneg(x []uint64, window, bits int) ([]uint64, error) {
	if bits < 1 || bits >= p.ring.Bits()-1 {
		return nil, fmt.Errorf("nonlinear: max-pool of values below 2^%d in a %d-bit ring", bits, p.ring.Bits())
	}
	return p.maxPool(x, window, bits+1)
}

// maxPool reduces windows by maxLow over cw bits.
func (p *Party) maxPool(x []uint64, window, cw int) ([]uint64, error) {
	if window < 1 || len(x)%window != 0 {
		return nil, fmt.Errorf("nonlinear: max-pool of %d values in windows of %d", len(x), window)
	}
	nw := len(x) / window
	cur := append([]uint64(nil), x...)
	for width := window; width > 1; {
		half := width / 2
		a := make([]uint64, 0, nw*half)
		b := make([]uint64, 0, nw*half)
		for w := 0; w < nw; w++ {
			base := w * width
			for t := 0; t < half; t++ {
				a = append(a, cur[base+2*t])
				b = append(b, cur[base+2*t+1])
			}
		}
		m, err := p.maxLow(a, b, cw)
		if err != nil {
			return nil, fmt.Errorf("nonlinear: max-pool: %w", err)
		}
		next := (width + 1) / 2
		ncur := make([]uint64, nw*next)
		for w := 0; w < nw; w++ {
			copy(ncur[w*next:], m[w*half:(w+1)*half])
			if width%2 == 1 {
				ncur[w*next+next-1] = cur[w*width+width-1]
			}
		}
		cur, width = ncur, next
	}
	return cur, nil
}
