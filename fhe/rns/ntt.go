package rns

// Forward computes out = NTT(in) with coefficients in [0, q). in and out may
// alias (fully; partial overlap is not supported). Inputs must be below 4q
// (canonical or lazy values); larger inputs give unspecified results.
func (t *NTTTable) Forward(in, out []uint64) {
	if t.lean {
		t.leanForward(in, out, true)
		return
	}
	if t.accelerated() {
		checkLen(t.N, in, out)
		nttFast(t, in, out, true)
		return
	}
	t.ForwardLazy(in, out)
	reduce2q(out, t.Q)
}

// ForwardLazy computes out = NTT(in) with outputs in [0, 2q), congruent to
// Forward's (the fast paths may return a different representative than the
// Go code). Inputs must be below 4q.
func (t *NTTTable) ForwardLazy(in, out []uint64) {
	if t.lean {
		t.leanForward(in, out, false)
		return
	}
	checkLen(t.N, in, out)
	if t.accelerated() {
		nttFast(t, in, out, false)
		return
	}
	if &in[0] != &out[0] {
		copy(out[:t.N], in[:t.N])
	}
	nttGo(t, out)
}

// Backward computes out = INTT(in) with coefficients in [0, q); inputs below
// 4q, in and out may alias.
func (t *NTTTable) Backward(in, out []uint64) {
	if t.lean {
		t.leanBackward(in, out, true)
		return
	}
	if t.accelerated() {
		checkLen(t.N, in, out)
		inttFast(t, in, out, true)
		return
	}
	t.BackwardLazy(in, out)
	reduce2q(out, t.Q)
}

// BackwardLazy computes out = INTT(in) with outputs in [0, 2q), congruent to
// Backward's; inputs below 4q.
func (t *NTTTable) BackwardLazy(in, out []uint64) {
	if t.lean {
		t.leanBackward(in, out, false)
		return
	}
	checkLen(t.N, in, out)
	if t.accelerated() {
		inttFast(t, in, out, false)
		return
	}
	if &in[0] != &out[0] {
		copy(out[:t.N], in[:t.N])
	}
	inttGo(t, out)
}

// accelerated reports whether an assembly NTT serves this table: IFMA for
// q < 2^50, AVX-512F for larger q.
func (t *NTTTable) accelerated() bool {
	return (useIFMA && t.roots52 != nil) || (useAVX512 && t.fwdInner64[0] != nil)
}

func checkLen(n int, vs ...[]uint64) {
	for _, v := range vs {
		if len(v) < n {
			panic("rns: vector shorter than ring degree")
		}
	}
}

// nttGo is the portable Cooley–Tukey NTT with Harvey's lazy butterflies:
// values stay in [0, 4q) between stages; the output is in [0, 2q).
func nttGo(t *NTTTable, a []uint64) {
	n := t.N
	q := t.Q
	q2 := 2 * q
	a = a[:n]
	for i := range a {
		if a[i] >= q2 {
			a[i] -= q2
		}
	}
	half := n
	for m := 1; m < n; m <<= 1 {
		half >>= 1
		for i := 0; i < m; i++ {
			w, ws := t.Roots[m+i], t.rootsShoup[m+i]
			x := a[2*i*half : 2*i*half+half]
			y := a[2*i*half+half : 2*(i+1)*half]
			for j := range x {
				u := x[j]
				if u >= q2 {
					u -= q2
				}
				v := MulShoupLazy(y[j], w, ws, q)
				x[j] = u + v
				y[j] = u + q2 - v
			}
		}
	}
	for i := range a {
		if a[i] >= q2 {
			a[i] -= q2
		}
	}
}

// inttGo is the portable Gentleman–Sande inverse NTT; output in [0, 2q).
func inttGo(t *NTTTable, a []uint64) {
	n := t.N
	q := t.Q
	q2 := 2 * q
	a = a[:n]
	for i := range a {
		if a[i] >= q2 {
			a[i] -= q2
		}
	}
	span := 1
	for m := n; m > 1; m >>= 1 {
		h := m >> 1
		for i := 0; i < h; i++ {
			w, ws := t.RootsInv[h+i], t.rootsInvShoup[h+i]
			x := a[2*i*span : 2*i*span+span]
			y := a[2*i*span+span : 2*(i+1)*span]
			for j := range x {
				u, v := x[j], y[j]
				s := u + v
				if s >= q2 {
					s -= q2
				}
				x[j] = s
				y[j] = MulShoupLazy(u+q2-v, w, ws, q)
			}
		}
		span <<= 1
	}
	for i := range a {
		a[i] = MulShoupLazy(a[i], t.NInv, t.nInvShoup, q)
	}
}

func reduce2q(a []uint64, q uint64) {
	for i := range a {
		if a[i] >= q {
			a[i] -= q
		}
	}
}

// leanForward serves Forward and ForwardLazy for lean tables: the IFMA
// kernel when it runs, else a Go transform over the lean arrays.
func (t *NTTTable) leanForward(in, out []uint64, canonical bool) {
	if t.roots52 == nil {
		panic("rns: lean NTT table built without NTTForward")
	}
	checkLen(t.N, in, out)
	if useIFMA {
		nttFast(t, in, out, canonical)
		return
	}
	if &in[0] != &out[0] {
		copy(out[:t.N], in[:t.N])
	}
	nttLeanGo(t, out[:t.N])
}

// leanBackward is leanForward for the inverse transform.
func (t *NTTTable) leanBackward(in, out []uint64, canonical bool) {
	if t.rootsInv52 == nil {
		panic("rns: lean NTT table built without NTTBackward")
	}
	checkLen(t.N, in, out)
	if useIFMA {
		inttFast(t, in, out, canonical)
		return
	}
	if &in[0] != &out[0] {
		copy(out[:t.N], in[:t.N])
	}
	inttLeanGo(t, out[:t.N])
}

// nttLeanGo is nttGo reading the twiddles from a lean table (one Shoup
// quotient per block); output in [0, q).
func nttLeanGo(t *NTTTable, a []uint64) {
	n, q := t.N, t.Q
	q2 := 2 * q
	for i := range a { // inputs below 4q
		if a[i] >= q2 {
			a[i] -= q2
		}
	}
	half := n
	for m := 1; m < n; m <<= 1 {
		half >>= 1
		for i := 0; i < m; i++ {
			w := t.leanRoot(m+i, false)
			ws := shoupConstant64(w, q)
			x := a[2*i*half : 2*i*half+half]
			y := a[2*i*half+half : 2*(i+1)*half]
			for j := range x {
				u := x[j]
				if u >= q2 {
					u -= q2
				}
				v := MulShoupLazy(y[j], w, ws, q)
				x[j] = u + v
				y[j] = u + q2 - v
			}
		}
	}
	for i := range a { // [0, 4q) to [0, q)
		if a[i] >= q2 {
			a[i] -= q2
		}
		if a[i] >= q {
			a[i] -= q
		}
	}
}

// inttLeanGo is inttGo reading the twiddles from a lean table; output in
// [0, q).
func inttLeanGo(t *NTTTable, a []uint64) {
	n, q := t.N, t.Q
	q2 := 2 * q
	for i := range a { // inputs below 4q
		if a[i] >= q2 {
			a[i] -= q2
		}
	}
	span := 1
	for m := n; m > 1; m >>= 1 {
		h := m >> 1
		for i := 0; i < h; i++ {
			w := t.leanRoot(h+i, true)
			ws := shoupConstant64(w, q)
			x := a[2*i*span : 2*i*span+span]
			y := a[2*i*span+span : 2*(i+1)*span]
			for j := range x {
				u, v := x[j], y[j]
				s := u + v
				if s >= q2 {
					s -= q2
				}
				x[j] = s
				y[j] = MulShoupLazy(u+q2-v, w, ws, q)
			}
		}
		span <<= 1
	}
	nis := shoupConstant64(t.NInv, q)
	for i := range a {
		r := MulShoupLazy(a[i], t.NInv, nis, q)
		if r >= q {
			r -= q
		}
		a[i] = r
	}
}
