package edge

// Fully lazy butterflies for q < 2^40 (covering the 27/30-bit edge primes):
// no reduction inside the transform at all. Forward (Cooley-Tukey) outputs
// grow by 2q per stage, so after log N ≤ 16 stages values stay below 33q;
// inverse (Gentleman-Sande) sums double per stage, staying below 2^17·q.
// Both bounds fit 64-bit words for q < 2^40, and Shoup / Montgomery
// products accept such inputs. One Barrett reduction per coefficient at the
// end brings the result into [0, q).

const lazyLimit = 1 << 40

func (t *TableNTT) forwardLazy(p []uint64) {
	n, q := t.n, t.mod.Q
	p = p[:n]
	q2 := 2 * q
	for m, h := 1, n>>1; m < n; m, h = m<<1, h>>1 {
		if h == 1 {
			w, ws := t.w[m:2*m], t.ws[m:2*m]
			ws = ws[:len(w)]
			for i := range w {
				u := p[2*i]
				v := shoupMulLazy(p[2*i+1], w[i], ws[i], q)
				p[2*i] = t.mod.Reduce(u + v)
				p[2*i+1] = t.mod.Reduce(u - v + q2)
			}
			return
		}
		for i := 0; i < m; i++ {
			w, ws := t.w[m+i], t.ws[m+i]
			x := p[2*i*h : 2*i*h+h]
			y := p[2*i*h+h : 2*i*h+2*h]
			y = y[:len(x)]
			for j := range x {
				u := x[j]
				v := shoupMulLazy(y[j], w, ws, q)
				x[j] = u + v
				y[j] = u - v + q2
			}
		}
	}
}

func (t *TableNTT) inverseLazy(p []uint64) {
	n, q := t.n, t.mod.Q
	p = p[:n]
	b := q // bound on inputs of the current stage
	for m, h := n>>1, 1; m >= 1; m, h = m>>1, h<<1 {
		for i := 0; i < m; i++ {
			w, ws := t.iw[m+i], t.iws[m+i]
			x := p[2*i*h : 2*i*h+h]
			y := p[2*i*h+h : 2*i*h+2*h]
			y = y[:len(x)]
			for j := range x {
				u, v := x[j], y[j]
				x[j] = u + v
				y[j] = shoupMulLazy(u-v+b, w, ws, q)
			}
		}
		b *= 2
	}
	for j := range p {
		p[j] = condSub(shoupMulLazy(p[j], t.nInv, t.nInvS, q), q)
	}
}

func (f *FlyNTT) forwardLazy(p []uint64) {
	n, q := f.n, f.mod.Q
	p = p[:n]
	q2 := 2 * q
	mod := &f.mod
	for s, m, h := 0, 1, n>>1; m < n; s, m, h = s+1, m<<1, h>>1 {
		lh := f.logN - 1 - s
		w, step := f.pow[lh], f.pow[lh+1]
		if h == 1 {
			for k := 0; k < m; k++ {
				i := int(brev(uint64(k), s))
				u := p[2*i]
				v := mod.mredLazy(p[2*i+1], w)
				p[2*i] = mod.Reduce(u + v)
				p[2*i+1] = mod.Reduce(u - v + q2)
				w = mod.MRed(w, step)
			}
			return
		}
		for k := 0; k < m; k++ {
			i := int(brev(uint64(k), s))
			x := p[2*i*h : 2*i*h+h]
			y := p[2*i*h+h : 2*i*h+2*h]
			y = y[:len(x)]
			for j := range x {
				u := x[j]
				v := mod.mredLazy(y[j], w)
				x[j] = u + v
				y[j] = u - v + q2
			}
			w = mod.MRed(w, step)
		}
	}
}

func (f *FlyNTT) inverseLazy(p []uint64) {
	n, q := f.n, f.mod.Q
	p = p[:n]
	mod := &f.mod
	s := f.logN - 1
	b := q
	for m, h := n>>1, 1; m >= 1; m, h = m>>1, h<<1 {
		lh := f.logN - 1 - s
		w, step := f.ipow[lh], f.ipow[lh+1]
		for k := 0; k < m; k++ {
			i := int(brev(uint64(k), s))
			x := p[2*i*h : 2*i*h+h]
			y := p[2*i*h+h : 2*i*h+2*h]
			y = y[:len(x)]
			for j := range x {
				u, v := x[j], y[j]
				x[j] = u + v
				y[j] = mod.mredLazy(u-v+b, w)
			}
			w = mod.MRed(w, step)
		}
		b *= 2
		s--
	}
	for j := range p {
		p[j] = mod.MRed(mod.Reduce(p[j]), f.nInvM)
	}
}
