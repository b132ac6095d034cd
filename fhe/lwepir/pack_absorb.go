package lwepir

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/tuneinsight/lattigo/v6/ring"
)

// Absorbing the lower levels of the packing tree.
//
// A query's work in the tree is linear in its keys: a merge node at level
// l adds Σ_j d_j·K_(l,j) to e + X^m·o + τ_l(e − X^m·o), and the automorphism
// of a product is the product of the automorphisms, τ(d·K) = τ(d)·τ(K). So
// a whole subtree of depth A sums to Σ_v P_v·σ_v(K_(l_v, j_v)) over key
// variants v = (level, Galois element σ, digit): the lower levels' keys
// carried through the automorphisms above them. The factors P_v depend on
// H' and the public K1 only and are precomputed; they are exactly as many
// polynomials as the subtree's merge nodes have digits (2^A − 1 nodes,
// 2^(A−l) variants of level l's keys), so nothing more is stored. What a
// query saves is the subtree's merges (a monomial product, a permutation
// and three passes a node): one dot product of 3·(2^A − 1) terms, reduced
// once, replaces them, and the query permutes its keys into their
// variants once (3·(2^A − 1 − A) permutations of N words). Nodes above
// level A merge as before.

// The depth of the absorbed subtrees is a packing version's
// (PackParams.Absorb): the stored layout depends on it. At 2048 rows
// (BenchmarkPackAbsorb, CPU a query here), with the Go dot product, depth
// 1 (no absorbing) took 51 ms, 2: 38, 3: 32, 4: 30, 5: 30, and PackV1
// kept 4; with the AVX2 one (dot27.go), PackV1 4: 20.4, 5: 18.2, 6: 19.8,
// 7: 30.6, and PackV2 4: 15.7, 5: 13.3, 6: 13.2, 7: 16.0 — PackV2 takes 5.

// variant is a key variant: σ_g applied to digit j of level lev's key.
type variant struct {
	lev int
	g   uint64 // Galois element modulo 2N
	j   int
}

// packNode is a stored node: its level, where its factors start in the
// pack's words, and the key variant each factor multiplies (indices into
// Packer.variants).
type packNode struct {
	level int
	off   int
	terms []int
}

// fsum is a formal sum Σ_v P_v·σ_v(K): factors in the NTT domain, plain.
type fsum struct {
	v []variant
	p [][]uint64
}

// add adds p to v's factor (copying it).
func (f *fsum) add(r *ring.Ring, v variant, p []uint64) {
	for i, w := range f.v {
		if w == v {
			s := r.SubRings[0]
			s.Add(f.p[i], p, f.p[i])
			return
		}
	}
	f.v = append(f.v, v)
	f.p = append(f.p, slices.Clone(p))
}

// mergeFormal is a merge at level l on formal sums: e + X^m·o + τ_l(e −
// X^m·o), m = N/2^l; τ_l(P·σ(K)) = τ_l(P)·(τ_l∘σ)(K), and τ_l∘σ has Galois
// element g·(2^l + 1) modulo 2N. A nil sum is zero.
func mergeFormal(pr *packRing, l int, e, o *fsum) *fsum {
	r, n := pr.r, pr.r.N()
	s := r.SubRings[0]
	f := &fsum{}
	twoN := uint64(2 * n)
	gl := pr.galEls[l]
	tmp, tau := make([]uint64, n), make([]uint64, n)
	permute := func(dst, src []uint64) {
		for i, x := range pr.auto[l] {
			dst[i] = src[x]
		}
	}
	if e != nil {
		for i, v := range e.v {
			f.add(r, v, e.p[i])
			permute(tau, e.p[i])
			f.add(r, variant{lev: v.lev, g: v.g * gl % twoN, j: v.j}, tau)
		}
	}
	if o != nil {
		for i, v := range o.v {
			mulMont(tmp, o.p[i], pr.mono[l], pr.q, pr.mred)
			f.add(r, v, tmp)
			permute(tau, tmp)
			s.Neg(tau, tau)
			f.add(r, variant{lev: v.lev, g: v.g * gl % twoN, j: v.j}, tau)
		}
	}
	return f
}

// emit stores f as pack k's next node (factors in Montgomery form).
func (pk *Packer) emit(k, level int, f *fsum) {
	s := pk.pr.r.SubRings[0]
	node := packNode{level: level, off: len(pk.pre[k]), terms: make([]int, len(f.v))}
	pk.varMu.Lock()
	for i, v := range f.v {
		idx, ok := pk.varIndex[v]
		if !ok {
			idx = len(pk.variants)
			pk.varIndex[v] = idx
			pk.variants = append(pk.variants, v)
		}
		node.terms[i] = idx
	}
	pk.varMu.Unlock()
	n := len(f.p[0])
	for _, p := range f.p {
		start := len(pk.pre[k])
		pk.pre[k] = append(pk.pre[k], p...)
		s.MForm(pk.pre[k][start:start+n], pk.pre[k][start:start+n])
	}
	pk.nodes[k] = append(pk.nodes[k], node)
}

// variantTables puts the key variants in a canonical order (by level,
// digit, Galois element: the packs' concurrent precomputation met them in
// any order), so that the nodes' layout is a function of the shape and
// the absorb depth alone, and computes each variant's NTT-domain
// permutation.
func (pk *Packer) variantTables() error {
	order := slices.Clone(pk.variants)
	slices.SortFunc(order, func(a, b variant) int {
		if a.lev != b.lev {
			return a.lev - b.lev
		}
		if a.j != b.j {
			return a.j - b.j
		}
		return int(a.g) - int(b.g)
	})
	remap := make([]int, len(order))
	for i, v := range order {
		remap[pk.varIndex[v]] = i
		pk.varIndex[v] = i
	}
	pk.variants = order
	for _, nodes := range pk.nodes {
		for _, node := range nodes {
			// dotMontTerms sums a node's products in 128 bits before one
			// Montgomery reduction: its high word must stay below q.
			if uint64(len(node.terms)) > (1<<64-1)/pk.pr.q {
				return fmt.Errorf("%w: %d terms in a packing node overflow its sums for Q = %d", ErrParams, len(node.terms), pk.pr.q)
			}
			for t, old := range node.terms {
				node.terms[t] = remap[old]
			}
		}
	}
	pk.variantAuto = make([][]uint64, len(pk.variants))
	for i, v := range pk.variants {
		if v.g == 1 {
			continue
		}
		idx, err := ring.AutomorphismNTTIndex(pk.pr.r.N(), pk.pr.r.NthRoot(), v.g)
		if err != nil {
			return fmt.Errorf("lwepir: key variant %+v: %w", v, err)
		}
		pk.variantAuto[i] = idx
	}
	return nil
}

// keyTable returns a query's keys in every variant the nodes use: the
// keys themselves for σ = 1, permuted copies otherwise.
func (pk *Packer) keyTable(keys *PackingKeys) [][]uint64 {
	n := pk.p.N()
	kv := make([][]uint64, len(pk.variants))
	for i, v := range pk.variants {
		base := keys.B[pk.pr.keyIndex(v.lev, v.j)]
		if v.g == 1 {
			kv[i] = base
			continue
		}
		dst := make([]uint64, n)
		for c, x := range pk.variantAuto[i] {
			dst[c] = base[x]
		}
		kv[i] = dst
	}
	return kv
}

// dotBlock is the run of coefficients dotMontTerms sums at once: its 128-bit
// accumulators stay in the first-level cache.
const dotBlock = 256

// dotMontTerms sets out[i] = Σ_t ps_t[i]·ks_t[i]·2^-64 mod q (ps in Montgomery
// form), block by block, three terms at a time (six streams), one
// reduction a coefficient. Needs len(ps)·q < 2^64: at most 1024 terms for
// q < 2^54.
func dotMontTerms(out []uint64, ps, ks [][]uint64, q, mred uint64) {
	if dot52Fits(len(out), len(ps), q) {
		dotMontTerms52(out, ps, ks, q, mred)
		return
	}
	if dot27Fits(len(out), len(ps), q) {
		dotMontTerms27(out, ps, ks, q, mred)
		return
	}
	dotMontTermsGo(out, ps, ks, q, mred)
}

// dotMontTermsGo is dotMontTerms in Go.
func dotMontTermsGo(out []uint64, ps, ks [][]uint64, q, mred uint64) {
	var hi, lo [dotBlock]uint64
	for b0 := 0; b0 < len(out); b0 += dotBlock {
		b1 := min(b0+dotBlock, len(out))
		m := b1 - b0
		clear(hi[:m])
		clear(lo[:m])
		t := 0
		for ; t+3 <= len(ps); t += 3 {
			p0, p1, p2 := ps[t][b0:b1], ps[t+1][b0:b1], ps[t+2][b0:b1]
			k0, k1, k2 := ks[t][b0:b1], ks[t+1][b0:b1], ks[t+2][b0:b1]
			h, l := hi[:m], lo[:m]
			p0, p1, p2, k0, k1, k2 = p0[:m], p1[:m], p2[:m], k0[:m], k1[:m], k2[:m]
			for i := range h {
				h0, l0 := bits.Mul64(p0[i], k0[i])
				h1, l1 := bits.Mul64(p1[i], k1[i])
				h2, l2 := bits.Mul64(p2[i], k2[i])
				var c uint64
				x, c := bits.Add64(l[i], l0, 0)
				y := h[i] + h0 + c
				x, c = bits.Add64(x, l1, 0)
				y += h1 + c
				x, c = bits.Add64(x, l2, 0)
				y += h2 + c
				l[i], h[i] = x, y
			}
		}
		for ; t < len(ps); t++ {
			p, k := ps[t][b0:b1], ks[t][b0:b1]
			k = k[:len(p)]
			h, l := hi[:len(p)], lo[:len(p)]
			for i, x := range p {
				ph, pl := bits.Mul64(x, k[i])
				var c uint64
				l[i], c = bits.Add64(l[i], pl, 0)
				h[i] += ph + c
			}
		}
		o := out[b0:b1]
		for i := range o {
			o[i] = montReduce(hi[i], lo[i], q, mred)
		}
	}
}
