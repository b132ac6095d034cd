package lower

import (
	"math/bits"

	"github.com/rosemary-fhe/rosemary/compiler/isa"
)

// keySwitch lowers Lattigo's GadgetProduct followed by ModDown for the input
// polynomial c (NTT domain, limbs q_0…q_level) and the key in NAND object
// objKey. It returns the two output polynomials over q_0…q_level.
func (l *lowering) keySwitch(c poly) (k0, k1 poly) {
	accQ, accP := l.gadgetProduct(c, objKey)
	for comp := 0; comp < 2; comp++ {
		l.modDown(accQ[comp], accP[comp])
	}
	return accQ[0], accQ[1]
}

// gadgetProduct is Lattigo's lazy GadgetProduct of c (NTT domain, limbs
// q_0…q_level) with the key in NAND object key: the two accumulators over
// q_0…q_level and p_0…p_{α−1}, before ModDown.
func (l *lowering) gadgetProduct(c poly, key int) (accQ, accP [2]poly) {
	cInv := l.allocRun(l.level + 1)
	for i := range cInv {
		l.intt(i, c[i], cInv[i])
	}
	accQ, accP = l.newAccQP()
	for d := 0; d < l.digits(l.level); d++ {
		qp, ext := l.digitQP(c, cInv, d)
		l.macKey(qp, d, key, accQ, accP)
		l.release(ext...)
	}
	l.release(cInv...)
	return accQ, accP
}

// newAccQP allocates two accumulators over q_0…q_level and p_0…p_{α−1}.
func (l *lowering) newAccQP() (accQ, accP [2]poly) {
	for comp := 0; comp < 2; comp++ {
		accQ[comp], accP[comp] = make(poly, l.level+1), make(poly, l.nP)
		for i := range accQ[comp] {
			accQ[comp][i] = l.alloc()
		}
		for k := range accP[comp] {
			accP[comp][k] = l.alloc()
		}
	}
	return accQ, accP
}

// digitQP is Lattigo's DecomposeSingleNTT for digit d of c (cInv: its
// limbs out of NTT form): the digit lifted (centered ModUp) to the other
// q_i and to P, in NTT form. qp lists the digit's limbs over
// q_0…q_level then p_0…p_{α−1} (its own limbs are c's); ext are the new
// slots, for the caller to release.
func (l *lowering) digitQP(c, cInv poly, d int) (qp, ext []isa.Addr) {
	level, alpha := l.level, l.nP
	Q := l.cfg.Moduli[:l.nQ]
	lo, hi := d*alpha, min((d+1)*alpha, level+1)
	// Targets of the ModUp: the other Q limbs, then all of P.
	var targets []uint8
	for j := 0; j <= level; j++ {
		if j < lo || j >= hi {
			targets = append(targets, uint8(j))
		}
	}
	for k := 0; k < alpha; k++ {
		targets = append(targets, uint8(l.pIdx(k)))
	}
	ext = l.allocRun(len(targets))
	digit := make([]uint8, 0, hi-lo)
	for i := lo; i < hi; i++ {
		digit = append(digit, uint8(i))
	}
	if hi-lo == 1 {
		// Lattigo lifts a one-prime digit by its centered representative.
		l.emit(isa.Instr{Op: isa.OpBConv, Flags: isa.FlagCenter, A: cInv[lo], B: l.basis(digit, targets), Out: ext[0]})
	} else {
		// Centered ModUp: add ⌊Q_d/2⌋, convert, subtract it again.
		tmp := l.allocRun(hi - lo)
		for i := lo; i < hi; i++ {
			l.op(isa.OpModAdd, i, isa.FlagScalarB, cInv[i], l.scalar(halfMod(Q[lo:hi], Q[i])), tmp[i-lo])
		}
		l.emit(isa.Instr{Op: isa.OpBConv, A: tmp[0], B: l.basis(digit, targets), Out: ext[0]})
		l.release(tmp...)
		for t, m := range targets {
			l.op(isa.OpModSub, int(m), isa.FlagScalarB, ext[t], l.scalar(halfMod(Q[lo:hi], l.cfg.Moduli[m])), ext[t])
		}
	}
	for t, m := range targets {
		l.ntt(int(m), ext[t], ext[t])
	}
	t := 0
	for j := 0; j <= level; j++ {
		if j < lo || j >= hi {
			qp = append(qp, ext[t])
			t++
		} else {
			qp = append(qp, c[j])
		}
	}
	return append(qp, ext[t:]...), ext
}

// macKey adds digit d's limbs (qp, as digitQP returns them) times the
// key's digit d into the accumulators (digit 0 assigns); keys are in
// Montgomery form.
func (l *lowering) macKey(qp []isa.Addr, d, key int, accQ, accP [2]poly) {
	level := l.level
	mac := func(m int, src isa.Addr, keyLimb int, acc [2]isa.Addr) {
		for comp := 0; comp < 2; comp++ {
			k := l.alloc()
			l.emit(isa.Instr{Op: isa.OpLD, Mod: uint8(m), Flags: isa.FlagKey,
				A: isa.Obj(isa.SpaceNAND, key, (2*d+comp)*(l.nQ+l.nP)+keyLimb), Out: k})
			code := isa.OpModMAC
			if d == 0 {
				code = isa.OpModMul
			}
			l.op(code, m, 0, src, k, acc[comp])
			l.release(k)
		}
	}
	for j := 0; j <= level; j++ {
		mac(j, qp[j], j, [2]isa.Addr{accQ[0][j], accQ[1][j]})
	}
	for k := 0; k < l.nP; k++ {
		mac(l.pIdx(k), qp[level+1+k], l.nQ+k, [2]isa.Addr{accP[0][k], accP[1][k]})
	}
}

// modDown replaces accQ by round(acc / P) over q_0…q_level (Lattigo's
// ModDownQPtoQNTT): INTT the P limbs, centered conversion to Q, NTT,
// subtract and multiply by P^{-1}.
func (l *lowering) modDown(accQ, accP poly) {
	level, alpha := l.level, l.nP
	P := l.cfg.Moduli[l.nQ:]
	x := l.allocRun(alpha)
	from := make([]uint8, alpha)
	for k := 0; k < alpha; k++ {
		from[k] = uint8(l.pIdx(k))
		l.intt(l.pIdx(k), accP[k], x[k])
		l.op(isa.OpModAdd, l.pIdx(k), isa.FlagScalarB, x[k], l.scalar(halfMod(P, P[k])), x[k])
	}
	to := make([]uint8, level+1)
	for i := range to {
		to[i] = uint8(i)
	}
	y := l.allocRun(level + 1)
	l.emit(isa.Instr{Op: isa.OpBConv, A: x[0], B: l.basis(from, to), Out: y[0]})
	for i := 0; i <= level; i++ {
		q := l.cfg.Moduli[i]
		l.op(isa.OpModSub, i, isa.FlagScalarB, y[i], l.scalar(halfMod(P, q)), y[i])
		l.ntt(i, y[i], y[i])
		l.op(isa.OpModSub, i, 0, accQ[i], y[i], accQ[i])
		pInv := uint64(1)
		for _, p := range P {
			pInv = mulModU(pInv, invMod(p, q), q)
		}
		l.op(isa.OpModMul, i, isa.FlagScalarB|isa.FlagPlain, accQ[i], l.scalar(pInv), accQ[i])
	}
	l.release(x...)
	l.release(y...)
	l.release(accP...)
}

// rescale divides each polynomial by the last prime q_level with rounding
// (Lattigo's DivRoundByLastModulusNTT) and returns limbs q_0…q_{level−1}.
func (l *lowering) rescale(a []poly) []poly {
	level := l.level
	ql := l.cfg.Moduli[level]
	half := (ql - 1) >> 1
	to := make([]uint8, level)
	for i := range to {
		to[i] = uint8(i)
	}
	out := make([]poly, len(a))
	for p := range a {
		x := l.alloc()
		l.intt(level, a[p][level], x)
		l.op(isa.OpModAdd, level, isa.FlagScalarB, x, l.scalar(half), x)
		y := l.allocRun(level)
		l.emit(isa.Instr{Op: isa.OpBConv, Flags: isa.FlagExact, A: x, B: l.basis([]uint8{uint8(level)}, to), Out: y[0]})
		for i := 0; i < level; i++ {
			q := l.cfg.Moduli[i]
			l.op(isa.OpModSub, i, isa.FlagScalarB, y[i], l.scalar(half%q), y[i])
			l.ntt(i, y[i], y[i])
			l.op(isa.OpModSub, i, 0, a[p][i], y[i], a[p][i])
			l.op(isa.OpModMul, i, isa.FlagScalarB|isa.FlagPlain, a[p][i], l.scalar(invMod(ql, q)), a[p][i])
		}
		l.release(x, a[p][level])
		l.release(y...)
		out[p] = a[p][:level]
	}
	return out
}

func mulModU(a, b, q uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	_, r := bits.Div64(hi%q, lo, q)
	return r
}
