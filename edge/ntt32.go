package edge

// Fast paths for q < 2^30 (the SEAL-Embedded / RISE primes): every lazy
// value stays below 4q < 2^32, so Shoup and Montgomery products need only
// 64-bit multiplications (no 128-bit high words).

const small30 = 1 << 30

// shoup32 returns floor(w·2^32/q).
func shoup32(w, q uint64) uint64 { return (w << 32) / q }

// shoupMul32 returns a·w mod q in [0, 2q) for a < 2^32.
func shoupMul32(a, w, ws, q uint64) uint64 {
	return a*w - ((a*ws)>>32)*q
}

// mred32 returns x·y·2^-32 mod q in (0, 2q) for x·y < q·2^32; qInv32 =
// q^-1 mod 2^32.
func mred32(x, y, q, qInv32 uint64) uint64 {
	p := x * y
	t := uint64(uint32(p) * uint32(qInv32))
	return p>>32 + q - (t*q)>>32
}

func (t *TableNTT) forward32(p []uint64) {
	n, q := t.n, t.mod.Q
	p = p[:n]
	q2 := 2 * q
	m, h := 1, n>>1
	for ; h > 1; m, h = m<<1, h>>1 {
		for i := 0; i < m; i++ {
			w, ws := t.w[m+i], t.ws32[m+i]
			x := p[2*i*h : 2*i*h+h]
			y := p[2*i*h+h : 2*i*h+2*h]
			y = y[:len(x)]
			for j := range x {
				u := x[j]
				u -= q2 & ctGeq(u, q2)
				v := shoupMul32(y[j], w, ws, q)
				x[j] = u + v
				y[j] = u - v + q2
			}
		}
	}
	w, ws := t.w[m:2*m], t.ws32[m:2*m]
	ws = ws[:len(w)]
	for i := range w {
		u := p[2*i]
		u -= q2 & ctGeq(u, q2)
		v := shoupMul32(p[2*i+1], w[i], ws[i], q)
		p[2*i] = condSub(condSub(u+v, q2), q)
		p[2*i+1] = condSub(condSub(u-v+q2, q2), q)
	}
}

func (t *TableNTT) inverse32(p []uint64) {
	n, q := t.n, t.mod.Q
	p = p[:n]
	q2 := 2 * q
	for m, h := n>>1, 1; m >= 1; m, h = m>>1, h<<1 {
		for i := 0; i < m; i++ {
			w, ws := t.iw[m+i], t.iws32[m+i]
			x := p[2*i*h : 2*i*h+h]
			y := p[2*i*h+h : 2*i*h+2*h]
			y = y[:len(x)]
			for j := range x {
				u, v := x[j], y[j]
				s := u + v
				x[j] = s - q2&ctGeq(s, q2)
				y[j] = shoupMul32(u-v+q2, w, ws, q)
			}
		}
	}
	ni, nis := t.nInv, shoup32(t.nInv, q)
	for j := range p {
		p[j] = condSub(shoupMul32(p[j], ni, nis, q), q)
	}
}

func (f *FlyNTT) forward32(p []uint64) {
	n, q := f.n, f.mod.Q
	qi := f.mod.QInv
	p = p[:n]
	q2 := 2 * q
	for s, m, h := 0, 1, n>>1; m < n; s, m, h = s+1, m<<1, h>>1 {
		lh := f.logN - 1 - s
		w, step := f.pow32[lh], f.pow32[lh+1]
		if h == 1 {
			for k := 0; k < m; k++ {
				i := int(brev(uint64(k), s))
				u := p[2*i]
				u -= q2 & ctGeq(u, q2)
				v := mred32(p[2*i+1], w, q, qi)
				p[2*i] = condSub(condSub(u+v, q2), q)
				p[2*i+1] = condSub(condSub(u-v+q2, q2), q)
				w = condSub(mred32(w, step, q, qi), q)
			}
			break
		}
		for k := 0; k < m; k++ {
			i := int(brev(uint64(k), s))
			x := p[2*i*h : 2*i*h+h]
			y := p[2*i*h+h : 2*i*h+2*h]
			y = y[:len(x)]
			for j := range x {
				u := x[j]
				u -= q2 & ctGeq(u, q2)
				v := mred32(y[j], w, q, qi)
				x[j] = u + v
				y[j] = u - v + q2
			}
			w = condSub(mred32(w, step, q, qi), q)
		}
	}
}

func (f *FlyNTT) inverse32(p []uint64) {
	n, q := f.n, f.mod.Q
	qi := f.mod.QInv
	p = p[:n]
	q2 := 2 * q
	s := f.logN - 1
	for m, h := n>>1, 1; m >= 1; m, h = m>>1, h<<1 {
		lh := f.logN - 1 - s
		w, step := f.ipow32[lh], f.ipow32[lh+1]
		for k := 0; k < m; k++ {
			i := int(brev(uint64(k), s))
			x := p[2*i*h : 2*i*h+h]
			y := p[2*i*h+h : 2*i*h+2*h]
			y = y[:len(x)]
			for j := range x {
				u, v := x[j], y[j]
				t := u + v
				x[j] = t - q2&ctGeq(t, q2)
				y[j] = mred32(u-v+q2, w, q, qi)
			}
			w = condSub(mred32(w, step, q, qi), q)
		}
		s--
	}
	for j := range p {
		p[j] = condSub(mred32(p[j], f.nInv32, q, qi), q)
	}
}
