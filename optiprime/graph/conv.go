package graph

import (
	"runtime"
	"sync"

	"github.com/rosemary-fhe/rosemary/optiprime/linear"
)

// number is the element type of the float calibration pass and the
// integer reference.
type number interface{ ~int64 | ~float64 }

// convolve computes out = conv(in; w) + b (OIHW weights, CHW tensors,
// zero padding, dense or grouped), output channels split over the CPUs.
// A nil b adds nothing.
func convolve[T number](s linear.ConvShape, w, b, in, out []T) {
	oh, ow := s.OutH(), s.OutW()
	g := max(1, s.Groups)
	cig, cog := s.Ci/g, s.Co/g
	chans := func(lo, hi int) {
		for o := lo; o < hi; o++ {
			op := out[o*oh*ow : (o+1)*oh*ow]
			var bias T
			if b != nil {
				bias = b[o]
			}
			for i := range op {
				op[i] = bias
			}
			grp := o / cog
			for cc := 0; cc < cig; cc++ {
				c := grp*cig + cc
				ip := in[c*s.H*s.W : (c+1)*s.H*s.W]
				for ky := 0; ky < s.Kh; ky++ {
					for kx := 0; kx < s.Kw; kx++ {
						wv := w[((o*cig+cc)*s.Kh+ky)*s.Kw+kx]
						if wv == 0 {
							continue
						}
						for y := 0; y < oh; y++ {
							iy := y*s.Stride + ky - s.Pad
							if iy < 0 || iy >= s.H {
								continue
							}
							row := ip[iy*s.W : (iy+1)*s.W]
							orow := op[y*ow : (y+1)*ow]
							for x := range orow {
								ix := x*s.Stride + kx - s.Pad
								if ix < 0 || ix >= s.W {
									continue
								}
								orow[x] += wv * row[ix]
							}
						}
					}
				}
			}
		}
	}
	workers := runtime.GOMAXPROCS(0)
	if workers == 1 || s.Co < 2 {
		chans(0, s.Co)
		return
	}
	var wg sync.WaitGroup
	step := (s.Co + workers - 1) / workers
	for lo := 0; lo < s.Co; lo += step {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			chans(lo, hi)
		}(lo, min(lo+step, s.Co))
	}
	wg.Wait()
}

// maxPool takes the maximum of each window (−1 entries are zero padding).
func maxPool[T number](idx []int, k2 int, in, out []T) {
	for o := range out {
		var m T
		for j, i := range idx[o*k2 : (o+1)*k2] {
			v := T(0)
			if i >= 0 {
				v = in[i]
			}
			if j == 0 || v > m {
				m = v
			}
		}
		out[o] = m
	}
}
