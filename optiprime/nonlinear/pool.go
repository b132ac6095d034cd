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
	if len(x) != len(y) {
		return nil, fmt.Errorf("nonlinear: max of %d and %d values", len(x), len(y))
	}
	diff := p.ring.SubVec(make([]uint64, len(x)), x, y)
	r, err := p.ReLU(diff)
	if err != nil {
		return nil, fmt.Errorf("nonlinear: max: %w", err)
	}
	return p.ring.AddVec(r, r, y), nil
}

// MaxPool returns the maximum of each window of `window` consecutive shares
// in x (len(x) must be a multiple of window), reducing all windows at once
// in ⌈log2 window⌉ batched Max steps.
func (p *Party) MaxPool(x []uint64, window int) ([]uint64, error) {
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
		m, err := p.Max(a, b)
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
