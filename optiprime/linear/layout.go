package linear

import "fmt"

// Layout: where tensor entries go in plaintext polynomials and where the
// results come out. Shared by client, server and the counting engine.

// tileOrigin returns the padded-input origin of a tile.
func (pl *Plan) tileOrigin(tile int) (y0, x0 int) {
	th, tw := tile/pl.TilesW, tile%pl.TilesW
	return th * pl.Sh, tw * pl.Sw
}

// inputPoly returns the polynomial (mod 2^ℓ) of input block cb of a tile,
// from a CHW tensor share x (unpadded).
func (pl *Plan) inputPoly(x []uint64, tile, cb int) []uint64 {
	s := pl.Shape
	N := pl.Params.N()
	poly := make([]uint64, N)
	if pl.MatVec {
		for j := 0; j < pl.Nb; j++ {
			if col := cb*pl.Nb + j; col < s.Ci {
				poly[j] = x[col]
			}
		}
		return poly
	}
	y0, x0 := pl.tileOrigin(tile)
	hw := pl.Hb * pl.Wb
	st := s.Stride
	for c := 0; c < pl.Cb; c++ {
		ch := cb*pl.Cb + c
		if ch >= pl.Inner.Ci {
			break
		}
		// Inner channel ch is phase (a, b) of original channel oc.
		oc, a, b := ch/(st*st), ch%(st*st)/st, ch%st
		for li := 0; li < pl.Hb; li++ {
			y := (y0+li)*st + a - s.Pad
			if y < 0 || y >= s.H {
				continue
			}
			for lj := 0; lj < pl.Wb; lj++ {
				xx := (x0+lj)*st + b - s.Pad
				if xx < 0 || xx >= s.W {
					continue
				}
				v := x[(oc*s.H+y)*s.W+xx]
				if pl.Proto == Cheetah {
					poly[c*hw+li*pl.Wb+lj] = v
				} else {
					poly[(li*pl.Wb+lj)*pl.Cb+c] = v
				}
			}
		}
	}
	return poly
}

// liftWeight returns the centered lift of w mod 2^ℓ reduced mod 2^LogTp.
func (pl *Plan) liftWeight(w uint64) uint64 {
	l := uint(pl.Opt.LogT)
	w &= 1<<l - 1
	if w >= 1<<(l-1) {
		w = w - (1 << l) // negative, as two's complement
	}
	return w & (1<<uint(pl.LogTp) - 1)
}

// kernelPoly returns the plaintext (mod 2^LogTp) for output channel (or row
// block, for matrix-vector) o and input block cb; w is OIHW.
func (pl *Plan) kernelPoly(w []uint64, o, cb int) []uint64 {
	poly := make([]uint64, pl.Params.N())
	pl.kernelEach(w, o, cb, func(e int, v uint64) { poly[e] = v })
	return poly
}

// kernelEach calls fn for every (position, value) the kernel plaintext of
// (o, cb) sets; positions are distinct.
func (pl *Plan) kernelEach(w []uint64, o, cb int, fn func(e int, v uint64)) {
	s := pl.Shape
	N := pl.Params.N()
	mask := uint64(1)<<uint(pl.LogTp) - 1
	if pl.MatVec {
		for i := 0; i < pl.Mb; i++ {
			row := o*pl.Mb + i
			if row >= s.Co {
				break
			}
			for j := 0; j < pl.Nb; j++ {
				if col := cb*pl.Nb + j; col < s.Ci {
					fn(i*pl.Nb+pl.Nb-1-j, pl.liftWeight(w[row*s.Ci+col]))
				}
			}
		}
		return
	}
	in := pl.Inner
	st := s.Stride
	hw := pl.Hb * pl.Wb
	O := (pl.Cb-1)*hw + (in.Kh-1)*pl.Wb + in.Kw - 1
	O0 := ((in.Kh-1)*pl.Wb + in.Kw - 1) * pl.Cb
	for c := 0; c < pl.Cb; c++ {
		ch := cb*pl.Cb + c
		if ch >= in.Ci {
			break
		}
		oc, a, b := ch/(st*st), ch%(st*st)/st, ch%st
		for ki := 0; ki < in.Kh; ki++ {
			for kj := 0; kj < in.Kw; kj++ {
				ky, kx := ki*st+a, kj*st+b
				if ky >= s.Kh || kx >= s.Kw {
					continue
				}
				wi, ok := s.weightIndex(o, oc, ky, kx)
				if !ok {
					continue
				}
				v := pl.liftWeight(w[wi])
				if pl.Proto == Cheetah {
					fn(O-(c*hw+ki*pl.Wb+kj), v)
					continue
				}
				e := O0 - (ki*pl.Wb+kj)*pl.Cb - c
				if e >= 0 {
					fn(e, v)
				} else {
					fn(N+e, (-v)&mask) // X^e = -X^(N+e)
				}
			}
		}
	}
}

// outputMap returns, for output ciphertext 'group' of a tile, the
// coefficient positions the client reads and the index of each in the
// output tensor (CHW, or the output vector for matrix-vector).
func (pl *Plan) outputMap(tile, group int) (pos, dst []int) {
	s := pl.Shape
	if pl.MatVec {
		for i := 0; i < pl.Mb; i++ {
			row := group*pl.Mb + i
			if row >= s.Co {
				break
			}
			pos = append(pos, i*pl.Nb+pl.Nb-1)
			dst = append(dst, row)
		}
		return pos, dst
	}
	y0, x0 := pl.tileOrigin(tile)
	oh, ow := s.OutH(), s.OutW()
	in := pl.Inner
	hw := pl.Hb * pl.Wb
	O := (pl.Cb-1)*hw + (in.Kh-1)*pl.Wb + in.Kw - 1
	O0 := ((in.Kh-1)*pl.Wb + in.Kw - 1) * pl.Cb
	chans := []int{group}
	if pl.Proto != Cheetah {
		chans = chans[:0]
		for i := 0; i < pl.C() && group*pl.C()+i < s.Co; i++ {
			chans = append(chans, group*pl.C()+i)
		}
	}
	for i, o := range chans {
		for li := 0; li < pl.Sh; li++ {
			gy := y0 + li
			if gy >= oh {
				continue
			}
			for lj := 0; lj < pl.Sw; lj++ {
				gx := x0 + lj
				if gx >= ow {
					continue
				}
				if pl.Proto == Cheetah {
					pos = append(pos, O+li*pl.Wb+lj)
				} else {
					pos = append(pos, O0+(li*pl.Wb+lj)*pl.Cb+i)
				}
				dst = append(dst, (o*oh+gy)*ow+gx)
			}
		}
	}
	return pos, dst
}

// automorphPoly applies X -> X^g to a polynomial mod 2^logT.
func automorphPoly(a []uint64, g uint64, logT int) []uint64 {
	N := len(a)
	mask := uint64(1)<<uint(logT) - 1
	out := make([]uint64, N)
	m := uint64(2 * N)
	for i, v := range a {
		e := uint64(i) * g % m
		if e < uint64(N) {
			out[e] = (out[e] + v) & mask
		} else {
			out[e-uint64(N)] = (out[e-uint64(N)] - v) & mask
		}
	}
	return out
}

// bsgsPoly returns σ_{γ^{-uB}}(Σ_i X^i σ_{γ^{uB+v}}(K_{gC+i, cb})) mod 2^LogTp.
func (pl *Plan) bsgsPoly(w []uint64, group, u, v, cb int) []uint64 {
	return pl.bsgsPolyTerms(w, nil, group, u, v, cb)
}

// kernelTerm is one (position, value) of a kernel plaintext.
type kernelTerm struct {
	e int32
	v uint64
}

// kernelTerms lists, per (o, cb) at index o·Inputs()+cb, the terms of the
// kernel plaintext (kernelEach). A BSGS plaintext sums C kernels and every
// kernel enters C of them (one per baby and giant step), so listing the
// terms once saves a factor C of index arithmetic in weight encoding.
func (pl *Plan) kernelTerms(w []uint64) [][]kernelTerm {
	in := pl.Inputs()
	terms := make([][]kernelTerm, pl.Shape.Co*in)
	_ = forEach(Workers(), len(terms), func(_, k int) error {
		var ts []kernelTerm
		pl.kernelEach(w, k/in, k%in, func(e int, v uint64) { ts = append(ts, kernelTerm{int32(e), v}) })
		terms[k] = ts
		return nil
	})
	return terms
}

// bsgsPolyTerms is bsgsPoly reading the kernels from terms (kernelTerms;
// nil: computed here).
func (pl *Plan) bsgsPolyTerms(w []uint64, terms [][]kernelTerm, group, u, v, cb int) []uint64 {
	N := pl.Params.N()
	C := pl.C()
	m := uint64(2 * N) // a power of two
	sig := powMod(pl.gamma, u*pl.Baby+v, m)
	inv := powMod(pl.gamma, (C-u*pl.Baby)%C, m)
	mask := uint64(1)<<uint(pl.LogTp) - 1
	acc := make([]uint64, N)
	for i := 0; i < C; i++ {
		o := group*C + i
		if o >= pl.Shape.Co {
			break
		}
		// X^i·σ(K_o) term by term: X^e -> ±X^(e·sig mod N), then the shift.
		add := func(e int, v uint64) {
			f := int(uint64(e) * sig & (m - 1))
			if f >= N {
				f -= N
				v = -v
			}
			if f += i; f >= N {
				f -= N
				v = -v
			}
			acc[f] = (acc[f] + v) & mask
		}
		if terms == nil {
			pl.kernelEach(w, o, cb, add)
			continue
		}
		for _, t := range terms[o*pl.Inputs()+cb] {
			add(int(t.e), t.v)
		}
	}
	return automorphPoly(acc, inv, pl.LogTp)
}

// Plaintexts calls fn with every distinct weight plaintext (mod 2^LogTp,
// coefficient domain) the server multiplies with, in schedule order. limit
// > 0 stops after that many. They are the plaintexts OptiComp compresses.
func (pl *Plan) Plaintexts(w []uint64, limit int, fn func(poly []uint64) error) error {
	if len(w) != pl.Shape.WeightLen() {
		return fmt.Errorf("linear: %d weights, want %d", len(w), pl.Shape.WeightLen())
	}
	for i, ref := range pl.plainRefs() {
		if limit > 0 && i >= limit {
			break
		}
		if err := fn(pl.plainPoly(w, ref)); err != nil {
			return err
		}
	}
	return nil
}

// plainRefs lists the distinct plaintexts in schedule order.
func (pl *Plan) plainRefs() []plainRef {
	var refs []plainRef
	if pl.BSGS {
		for g := 0; g < pl.Groups(); g++ {
			for u := 0; u < pl.C()/pl.Baby; u++ {
				for v := 0; v < pl.Baby; v++ {
					for cb := 0; cb < pl.Inputs(); cb++ {
						if pl.groupTouches(g, cb) {
							refs = append(refs, plainRef{bsgs: true, group: g, u: u, v: v, cb: cb})
						}
					}
				}
			}
		}
		return refs
	}
	outs := pl.Shape.Co
	if pl.MatVec {
		outs = pl.NumRow
	}
	for o := 0; o < outs; o++ {
		for cb := 0; cb < pl.Inputs(); cb++ {
			if pl.touches(o, cb) {
				refs = append(refs, plainRef{o: o, cb: cb})
			}
		}
	}
	return refs
}

// plainPoly builds the plaintext polynomial of a reference.
func (pl *Plan) plainPoly(w []uint64, ref plainRef) []uint64 {
	return pl.plainPolyTerms(w, nil, ref)
}

// plainPolyTerms is plainPoly with the kernels' terms listed ahead
// (kernelTerms; nil: computed here; only BSGS reads them).
func (pl *Plan) plainPolyTerms(w []uint64, terms [][]kernelTerm, ref plainRef) []uint64 {
	if ref.bsgs {
		return pl.bsgsPolyTerms(w, terms, ref.group, ref.u, ref.v, ref.cb)
	}
	return pl.kernelPoly(w, ref.o, ref.cb)
}

// NumPlaintexts is the number of distinct weight plaintexts.
func (pl *Plan) NumPlaintexts() int {
	n := 0
	if pl.BSGS {
		for g := 0; g < pl.Groups(); g++ {
			for cb := 0; cb < pl.Inputs(); cb++ {
				if pl.groupTouches(g, cb) {
					n += pl.C()
				}
			}
		}
		return n
	}
	outs := pl.Shape.Co
	if pl.MatVec {
		outs = pl.NumRow
	}
	for o := 0; o < outs; o++ {
		for cb := 0; cb < pl.Inputs(); cb++ {
			if pl.touches(o, cb) {
				n++
			}
		}
	}
	return n
}

// touches reports whether output channel o (row block, for matrix-vector)
// uses input block cb (false only for grouped convolutions).
func (pl *Plan) touches(o, cb int) bool {
	if pl.MatVec || pl.Shape.groups() == 1 {
		return true
	}
	lo, hi := pl.Inner.groupChannels(o)
	return cb*pl.Cb < hi && (cb+1)*pl.Cb > lo
}

// groupTouches reports whether any output channel of packed group g uses
// input block cb.
func (pl *Plan) groupTouches(g, cb int) bool {
	for i := 0; i < pl.C() && g*pl.C()+i < pl.Shape.Co; i++ {
		if pl.touches(g*pl.C()+i, cb) {
			return true
		}
	}
	return false
}
