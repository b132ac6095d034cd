package lwepir

import (
	"context"
	"fmt"
	"math/bits"

	"github.com/tuneinsight/lattigo/v6/ring"
)

// Packing with two keys (PackV3), after InspiRING in Akhavan Mahdavi,
// Patel, Seo and Yeo, "InsPIRe: Communication-Efficient PIR with
// Server-side Preprocessing" (2025).
//
// Row i's LWE ciphertext, read as a ring element ã_i (leaf: N^{-1}
// included), carries ⟨h_i, s⟩ in the constant coefficient of ã_i·s. The
// field trace Tr = Σ_t τ_t over the N automorphisms X → X^t (t odd mod 2N)
// keeps N times the constant coefficient and kills the rest, so the packed
// a-side is
//
//	Σ_i X^(c_i)·Tr(ã_i·s) = Σ_t τ_t(A_t·s),  A_t = Σ_i τ_t^{-1}(X^(c_i))·ã_i
//
// (c_i: row i's coefficient). The group is {±5^k : k < N/2}, so with
// B_k = A_(5^k), B'_k = A_(−5^k) this is V + τ_(−1)(V'), V = Σ_k τ_5^k(B_k·s),
// evaluated as Horner does a polynomial: W = B_(N/2−1), then N/2 − 1 times
// W ← B_k + τ_5(W), each τ_5 key-switched back to s with the one key of
// τ_5; V' likewise, then one switching with the key of τ_(−1). Every
// a-part on the way is a function of H' and the keys' public a-parts (the
// database seed's), so the server runs the whole a-side when it loads the
// database and stores each switching's gadget digits D. A query's b-side
// is then Σ over the 2(N/2 − 1) + 1 switchings of σ(D·K0), σ the
// automorphism the switching is carried through to the root: in the NTT
// domain an automorphism only permutes, so the stored digits are permuted
// ahead and the b-side is one dot product a coefficient, of N − 1 terms a
// digit, against the query's two keys read at shifted offsets (slots in
// orbit order, below, make every σ a shift). That is N·Digits products
// a coefficient for N rows, as the tree's stored nodes cost, but with two
// keys instead of log N, the lower noise of a sum instead of a product of
// levels (each switching's error is added once, not doubled at every
// level above it), which lets one digit do; so half PackV2's products and
// factors and a ninth of its key bytes.
//
// A pack of γ < N rows (at a stride of N/γ) needs less: their
// coefficients are those of X^stride, which the automorphisms fixing
// X^stride leave alone, so the trace over γ coset representatives of
// those (±5^k, k < γ/2) keeps each row's constant coefficient, times γ,
// and kills its other multiples of the stride, while every other
// coefficient stays off the rows (t odd keeps a power's 2-adic valuation)
// as garbage the client does not read. Chains of γ/2 then: γ − 1
// switchings a pack, none for one row.
//
// The A_t: at each NTT slot j (root ζ^(e_j)), A_t(ζ^(e_j)) =
// F_j(ζ^(e_j/t)) for F_j(Y) = Σ_i ã_i(ζ^(e_j))·Y^(c_i): one NTT of F_j gives
// every t's value at slot j. So a pack costs 3N NTTs and the Horner
// chains' 2N switchings once, at load.
//
// Security: the keys are RLWE samples K0 = K1·s + e − w·τ(s) under the
// query's fresh secret, the same form as the tree's (whose keys encrypt
// τ_(2^k+1)(s)), two automorphisms instead of eleven; the ring, modulus
// and error are PackV2's, Q smaller (TestPackParamsNoWeakerThanStandard).

// twoKeyTables fills the two keys' automorphism tables and the orbit order
// of the NTT slots.
func (pr *packRing) twoKeyTables() error {
	n := pr.r.N()
	m := n / 2
	var err error
	if pr.twoAuto[1], err = ring.AutomorphismNTTIndex(n, pr.r.NthRoot(), 5); err != nil {
		return err
	}
	if pr.twoAuto[2], err = ring.AutomorphismNTTIndex(n, pr.r.NthRoot(), uint64(2*n-1)); err != nil {
		return err
	}
	// Index i evaluates at ζ^(2·rev(i)+1) (Lattigo's order): the exponent
	// of orbit slot (b, a) is (−1)^b·5^a mod 2N, whose index is
	// rev((e−1)/2).
	rev := func(x uint64) int { return int(bits.Reverse64(x) >> (64 - pr.logN)) }
	pr.orbit = make([]int, n)
	pr.orbitPos = make([]int, n)
	twoN := uint64(2 * n)
	e := uint64(1)
	for a := 0; a < m; a++ {
		for b, x := range []uint64{e, twoN - e} {
			i := rev((x - 1) / 2)
			pr.orbit[b*m+a] = i
			pr.orbitPos[i] = b*m + a
		}
		e = e * 5 % twoN
	}
	if e != 1 {
		return fmt.Errorf("lwepir: 5 is not of order N/2 modulo 2N")
	}
	return nil
}

// twoKeyFactorPolys is how many factor polynomials a pack stores with two
// keys: Digits for each of the chains' 2(γ/2 − 1) switchings and the
// conjugation's, γ = perPack.
func (pk *Packer) twoKeyFactorPolys() int { return (pk.perPack - 1) * pk.pr.pp.Digits }

// precomputeTwoKeys runs pack k's a-side (the package comment above) and
// stores, for each switching, its digits permuted to the root and in
// orbit order (NTT domain, Montgomery form): chain V's switchings in the
// order Horner runs them (k = N/2−2 … 0), then the second chain's, then the
// conjugation's; Digits polynomials each.
func (pk *Packer) precomputeTwoKeys(ctx context.Context, k int, h []uint32, ka [][]uint64) error {
	pr, r, n := pk.pr, pk.pr.r, pk.p.N()
	m, ell, half := n/2, pr.pp.Digits, pk.perPack/2
	// lt[j·N + u]: first the leaves' slot j at their coefficients, then
	// (an NTT of each row) F_j at the root of index u. The leaves carry
	// N^{-1} and the trace over γ automorphisms multiplies by γ: they are
	// multiplied by the stride N/γ.
	lt := make([]uint64, n*n)
	for c := 0; c < n; c += pk.stride {
		i := pk.leafRow(k, c)
		if i < 0 {
			continue
		}
		leaf := pk.leaf(h[i*n : (i+1)*n])
		if pk.stride > 1 {
			r.MulScalar(leaf, uint64(pk.stride), leaf)
		}
		for j, v := range leaf.Coeffs[0] {
			lt[j*n+c] = v
		}
	}
	for j := range n {
		row := ring.Poly{Coeffs: [][]uint64{lt[j*n : (j+1)*n : (j+1)*n]}}
		r.NTT(row, row)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// gather sets dst to A_t, t = (−1)^bt·5^kt, in the NTT domain.
	gather := func(dst []uint64, bt, kt int) {
		for j := range dst {
			pos := pr.orbitPos[j]
			b, a := pos/m, pos%m
			dst[j] = lt[j*n+pr.orbit[((b+bt)&1)*m+(a-kt+m)%m]]
		}
	}
	pk.pre[k] = make([]uint64, 0, pk.twoKeyFactorPolys()*n)
	digits := make([]uint64, ell)
	dp := make([]ring.Poly, ell)
	for j := range dp {
		dp[j] = r.NewPoly()
	}
	x, bk := r.NewPoly(), r.NewPoly()
	switchDigits := func(w ring.Poly, perm []uint64) { pr.switchDigits(w, perm, x, digits, dp) }
	// store appends dp, slot (b, a) of the stored polynomial taken from
	// the digits' orbit slot (b ⊕ flip, a + shift).
	store := func(flip, shift int) {
		for j := range dp {
			d := dp[j].Coeffs[0]
			for pos := range n {
				b, a := pos/m, pos%m
				v := d[pr.orbit[(b^flip)*m+(a+shift)%m]]
				pk.pre[k] = append(pk.pre[k], ring.MForm(v, pr.q, pr.bred))
			}
		}
	}
	// addKeyA sets w += Σ_j dp_j·K1(key)_j.
	addKeyA := func(w ring.Poly, key int) {
		for j := range dp {
			r.MulCoeffsBarrettThenAdd(dp[j], ring.Poly{Coeffs: [][]uint64{ka[pr.keyIndex(key, j)]}}, w)
		}
	}
	// The coset representatives ±5^k, k < γ/2, of the automorphisms that
	// fix X^stride: the trace they sum keeps the rows' coefficients (and
	// leaves the others' garbage off them). γ = 1: the identity alone.
	chains := [2]ring.Poly{r.NewPoly(), r.NewPoly()}
	if pk.perPack == 1 {
		gather(chains[0].Coeffs[0], 0, 0)
	}
	for bt := 0; bt < 2 && half > 0; bt++ {
		w := chains[bt]
		gather(w.Coeffs[0], bt, half-1)
		for kt := half - 2; kt >= 0; kt-- {
			if err := ctx.Err(); err != nil {
				return err
			}
			switchDigits(w, pr.twoAuto[1])
			store(bt, kt)
			gather(bk.Coeffs[0], bt, kt)
			copy(w.Coeffs[0], bk.Coeffs[0])
			addKeyA(w, 1)
		}
	}
	root := chains[0]
	if half > 0 {
		switchDigits(chains[1], pr.twoAuto[2])
		store(0, 0)
		addKeyA(root, 2)
	}
	r.INTT(root, root)
	pk.aOut[k] = make([]uint32, n)
	pk.aRoot[k] = append([]uint64(nil), root.Coeffs[0]...)
	for c, v := range root.Coeffs[0] {
		pk.aOut[k][c] = pr.roundTo(v, pr.pp.LogQA)
	}
	return nil
}

// keyTableTwo lays a query's two keys out for prepareTwoKeys, in orbit
// order: for each digit j, τ_5's key as two halves b = 0, 1 (entries 2j+b),
// each of length N (its N/2 slots twice over, so that a shift by k < N/2
// reads contiguously); then the conjugation's keys (entries 2·Digits + j).
func (pk *Packer) keyTableTwo(keys *PackingKeys) [][]uint64 {
	pr, n := pk.pr, pk.p.N()
	m, ell := n/2, pr.pp.Digits
	kv := make([][]uint64, 3*ell)
	for j := range ell {
		g := keys.B[pr.keyIndex(1, j)]
		for b := range 2 {
			half := make([]uint64, n)
			for a := range n {
				half[a] = g[pr.orbit[b*m+a%m]]
			}
			kv[2*j+b] = half
		}
		c := keys.B[pr.keyIndex(2, j)]
		o := make([]uint64, n)
		for pos := range n {
			o[pos] = c[pr.orbit[pos]]
		}
		kv[2*ell+j] = o
	}
	return kv
}

// twoKeyTerms bounds the terms of one dotMontTerms call where the IFMA
// kernel cannot take them all (the limb kernel's bound: the sums of 255
// products stay exact).
const twoKeyTerms = dot27MaxTerms

// prepareTwoKeys is prepareRange with two keys: for each block of orbit
// slots, the dot product of the pack's stored digits with each query's
// keys at the shifts of their switchings, a query's sum then put back in
// NTT order and transformed to coefficients in dst. A batch of three or
// more queries runs four a call where the limb kernels run (dotQ4).
func (pk *Packer) prepareTwoKeys(ctx context.Context, k int, kvs [][][]uint64, dst [][]uint64, gate Gate) error {
	pr, n := pk.pr, pk.p.N()
	m, ell, q, mred := n/2, pr.pp.Digits, pr.q, pr.mred
	half := pk.perPack / 2
	polys := pk.polys[k]
	terms := pk.twoKeyFactorPolys()
	if len(polys) != terms {
		return fmt.Errorf("lwepir: pack %d: %d factor polynomials, want %d", k, len(polys), terms)
	}
	chain := max(0, half-1) * ell // a chain's terms
	pw := pk.pieceWords
	blk := min(dotBlock, pw, m)
	sums := make([][]uint64, len(kvs))
	for i := range sums {
		sums[i] = make([]uint64, n)
	}
	tmp := make([]uint64, blk)
	step := twoKeyTerms
	if dot52Fits(blk, terms, q) {
		step = terms // one reduction for all
	}
	ps := make([][]uint64, 0, step)
	ks := make([][]uint64, 0, step)
	var q4 *twoKeysQ4
	if len(kvs) >= 3 && !dot52Fits(blk, terms, q) && dotQ4Fits(blk, min(step, terms), n, q) {
		q4 = newTwoKeysQ4(kvs, blk)
	}
	for pos0 := 0; pos0 < n; pos0 += blk {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, a0 := pos0/m, pos0%m
		piece, off := pos0/pw, pos0%pw
		// keyAt locates term t's key for this block: which of a query's
		// key vectors (keyTableTwo), from which word.
		keyAt := func(t int) (vec, from int) {
			if t < 2*chain {
				// Stored as the chain ran: shift γ/2−2 first.
				c, rem := t/chain, t%chain
				shift, j := half-2-rem/ell, rem%ell
				return 2*j + (b ^ c), a0 + shift
			}
			return 2*ell + t - 2*chain, pos0
		}
		release, err := enter(ctx, gate)
		if err != nil {
			return err
		}
		for t0 := 0; t0 < terms; t0 += step {
			t1 := min(t0+step, terms)
			ps = ps[:0]
			for t := t0; t < t1; t++ {
				ps = append(ps, polys[t][piece][off:off+blk])
			}
			rest := 0 // the first query the single-query kernel sums
			if q4 != nil {
				q4.d.load(ps)
				rest = q4.queries
				for g := 0; g < q4.queries; g += 4 {
					ks = ks[:0]
					for t := t0; t < t1; t++ {
						vec, from := keyAt(t)
						ks = append(ks, q4.split[g*q4.qs+vec*q4.vs+from:])
					}
					q4.d.sum(&q4.out, ks, q4.qs, q, mred)
					for j := 0; j < 4 && g+j < len(kvs); j++ {
						addModInto(sums[g+j][pos0:pos0+blk], q4.out[j], q)
					}
				}
			}
			for qi := rest; qi < len(kvs); qi++ {
				kv := kvs[qi]
				ks = ks[:0]
				for t := t0; t < t1; t++ {
					vec, from := keyAt(t)
					ks = append(ks, kv[vec][from:from+blk])
				}
				dotMontTerms(tmp, ps, ks, q, mred)
				addModInto(sums[qi][pos0:pos0+blk], tmp, q)
			}
		}
		release()
	}
	p := pr.r.NewPoly()
	for qi, s := range sums {
		for pos, v := range s {
			p.Coeffs[0][pr.orbit[pos]] = v
		}
		pr.r.INTT(p, p)
		copy(dst[qi], p.Coeffs[0])
	}
	return nil
}

// addModInto sets s[i] = s[i] + v[i] mod q (both below q).
func addModInto(s, v []uint64, q uint64) {
	s = s[:len(v)]
	for i, x := range v {
		x += s[i]
		if x >= q {
			x -= q
		}
		s[i] = x
	}
}

// twoKeysQ4 is a batch's state for dotQ4 in prepareTwoKeys: the first
// queries' key vectors split (splitKey27), query after query qs words
// apart and vector after vector vs words apart, in groups of four — a last
// group of three padded with a zero key; one or two left over go to the
// single-query kernel, which sums them for less than a group costs —, the
// kernel's scratch and a group's sums.
type twoKeysQ4 struct {
	split   []uint64
	queries int // the queries in groups, padding included
	qs, vs  int
	d       dotQ4
	out     [4][]uint64
}

func newTwoKeysQ4(kvs [][][]uint64, blk int) *twoKeysQ4 {
	vecs, n := len(kvs[0]), len(kvs[0][0])
	s := &twoKeysQ4{vs: splitLen27(n), queries: len(kvs) / 4 * 4}
	if len(kvs)%4 == 3 {
		s.queries += 4
	}
	s.qs = vecs * s.vs
	s.split = make([]uint64, s.queries*s.qs)
	for qi, kv := range kvs[:min(len(kvs), s.queries)] {
		for v, key := range kv {
			splitKey27(s.split[qi*s.qs+v*s.vs:], key)
		}
	}
	for j := range s.out {
		s.out[j] = make([]uint64, blk)
	}
	return s
}
