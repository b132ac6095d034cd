package video

// Frame is one 8-bit grayscale picture, row-major.
type Frame struct {
	W, H int
	Pix  []byte
}

// Standard resolutions of the paper's evaluation.
const (
	QQVGAWidth, QQVGAHeight = 160, 120
	QVGAWidth, QVGAHeight   = 320, 240
)

// SyntheticFrame draws frame t of a deterministic test sequence: a moving
// diagonal gradient with a bright disc and a noise-like texture, so every
// byte value and bit position occurs.
func SyntheticFrame(w, h, t int) Frame {
	f := Frame{W: w, H: h, Pix: make([]byte, w*h)}
	cx, cy := (w/2+3*t)%w, (h/2+2*t)%h
	r2 := (min(w, h) / 5) * (min(w, h) / 5)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := (x + y + 4*t) * 255 / (w + h)
			if (x-cx)*(x-cx)+(y-cy)*(y-cy) < r2 {
				v = 255 - v/4
			}
			v ^= (x * 31 * (y + t)) & 7
			f.Pix[y*w+x] = byte(v)
		}
	}
	return f
}
