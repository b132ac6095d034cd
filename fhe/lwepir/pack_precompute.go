package lwepir

import (
	"context"
	"fmt"
	"math/bits"
	"runtime"
	"sync"

	"github.com/tuneinsight/lattigo/v6/ring"
)

// Packer packs the answers of one database generation: what packing
// needs of the hint H', computed once when the database is loaded.
//
// Row i of the answer is an LWE ciphertext (H'_i, b_i) modulo 2^32 under
// the query's secret s. Scaled to Q and read as a ring element, it is an
// RLWE ciphertext under s whose constant coefficient carries the row; the
// packing tree of Chen, Dai, Kim and Song ("Efficient Homomorphic
// Conversion Between (Ring) LWE Ciphertexts", ACNS 2021), as YPIR uses it,
// merges N of them into one. Every a-part in the tree depends only on H'
// and on the keys' public a-parts K1, so the whole a-side runs here: for
// each merge node, the gadget digits of the a-part its key switching
// decomposes are stored (NTT domain, Montgomery form), and the root's
// a-part is stored rounded to the download modulus. A query then costs,
// per node, Digits products with its keys' b-parts and one monomial
// product (Packer.Prepare); the lowest levels are absorbed into one dot
// product a subtree (pack_absorb.go).
//
// Rows are placed in packs of perPack leaves: pack i/perPack, leaf
// (i mod perPack)·stride, which ends at coefficient (i mod perPack)·stride
// of the packed plaintext. With fewer rows than N (perPack < N), the
// tree's upper levels have no odd child and reduce to the field trace.
type Packer struct {
	p       Params
	pr      *packRing
	shape   Shape
	perPack int // rows a packed ciphertext carries
	stride  int // coefficients between two rows in it
	packs   int // packed ciphertexts an answer has
	// absorb is the depth of the subtrees stored as one node
	// (pack_absorb.go).
	absorb int
	nodes  [][]packNode // per pack, in the order Prepare replays them
	pre    [][]uint64   // per pack: the nodes' factors, N words each (nil: in pieces only)
	// polys[k][j] is pack k's factor polynomial j (node.off/N + term) as
	// pieces of pieceWords words: one piece, in pre, for a packer computed
	// or loaded into memory; a store's pages for one used in place
	// (LoadPackerPieces).
	polys      [][][][]uint64
	pieceWords int
	// guard, if set, runs each of Prepare's units of work (on the
	// goroutine that reads the factors): see LoadPackerPieces.
	guard    func(func() error) error
	variants []variant // the key variants the nodes use (pack_absorb.go)
	varIndex map[variant]int
	varMu    sync.Mutex
	// variantAuto[i] is variant i's NTT-domain permutation (nil: σ = 1).
	variantAuto [][]uint64
	aOut        [][]uint32 // per pack: the root's a-part modulo 2^LogQA
	aRoot       [][]uint64 // per pack: the root's a-part modulo Q (tests, noise)
}

// packLayout is how rows of shape sit in packs.
func packLayout(n, rows int) (perPack, stride, packs int) {
	perPack = min(n, 1<<bits.Len(uint(rows-1)))
	return perPack, n / perPack, (rows + perPack - 1) / perPack
}

// leafRow is the row at leaf r of pack k, or −1.
func (pk *Packer) leafRow(k, r int) int {
	if r%pk.stride != 0 {
		return -1
	}
	i := k*pk.perPack + r/pk.stride
	if i >= pk.shape.Rows {
		return -1
	}
	return i
}

// Packs is how many packed ciphertexts an answer has: ⌈Rows/N⌉.
func (pk *Packer) Packs() int { return pk.packs }

// PackedRow is where row i ends in an answer: pack, coefficient.
func (pk *Packer) PackedRow(i int) (pack, coeff int) {
	return i / pk.perPack, i % pk.perPack * pk.stride
}

// NewPacker precomputes the packing of a database's answers from its hint
// h = H' (ComputeHint: Rows × N words, row-major) and its seed (which
// determines the keys' public a-parts). Packs are computed on every core.
func NewPacker(ctx context.Context, p Params, shape Shape, seed [SeedSize]byte, h []uint32) (*Packer, error) {
	return newPacker(ctx, p, shape, seed, h, p.Pack().Absorb)
}

// newPacker is NewPacker with subtrees of absorb levels stored as one node.
func newPacker(ctx context.Context, p Params, shape Shape, seed [SeedSize]byte, h []uint32, absorb int) (*Packer, error) {
	if err := shape.Validate(p); err != nil {
		return nil, err
	}
	pr, err := p.packRing()
	if err != nil {
		return nil, err
	}
	n := p.N()
	if len(h) != shape.Rows*n {
		return nil, fmt.Errorf("%w: hint of %d entries for %d rows", ErrParams, len(h), shape.Rows)
	}
	pk := &Packer{p: p, pr: pr, shape: shape, absorb: max(1, min(absorb, pr.logN)), varIndex: map[variant]int{}}
	pk.perPack, pk.stride, pk.packs = packLayout(n, shape.Rows)
	pk.nodes = make([][]packNode, pk.packs)
	pk.pre = make([][]uint64, pk.packs)
	pk.aOut = make([][]uint32, pk.packs)
	pk.aRoot = make([][]uint64, pk.packs)
	ka := packingKeyA(pr, seed)
	err = each(ctx, pk.packs, runtime.GOMAXPROCS(0), func(k int) error {
		if pr.pp.TwoKeys {
			return pk.precomputeTwoKeys(ctx, k, h, ka)
		}
		return pk.precomputePack(ctx, k, h, ka)
	})
	if err != nil {
		return nil, err
	}
	if err := pk.variantTables(); err != nil {
		return nil, err
	}
	pk.polysOfPre()
	return pk, nil
}

// polysOfPre indexes each pack's flat factors as one-piece polynomials.
func (pk *Packer) polysOfPre() {
	n := pk.p.N()
	pk.pieceWords = n
	pk.polys = make([][][][]uint64, pk.packs)
	for k, pre := range pk.pre {
		pk.polys[k] = make([][][]uint64, len(pre)/n)
		for j := range pk.polys[k] {
			pk.polys[k][j] = [][]uint64{pre[j*n : (j+1)*n : (j+1)*n]}
		}
	}
}

// PrecomputedBytes is the size of what the packer holds: the digits of
// every merge node and the packs' a-parts.
func (pk *Packer) PrecomputedBytes() int64 {
	var s int64
	for k := range pk.polys {
		s += int64(len(pk.polys[k]))*int64(pk.p.N())*8 + int64(len(pk.aOut[k]))*4
		if k < len(pk.aRoot) { // a loaded packer (LoadPacker) has no unrounded a-parts
			s += int64(len(pk.aRoot[k])) * 8
		}
	}
	return s
}

// precomputePack walks pack k's tree (post-order, even child first: the
// order Prepare replays), storing the key-switching factors of each stored
// node: a subtree of absorb levels as one node (pack_absorb.go), each node
// above them with its own Digits digits.
func (pk *Packer) precomputePack(ctx context.Context, k int, h []uint32, ka [][]uint64) error {
	pr, r, n := pk.pr, pk.pr.r, pk.p.N()
	ell := pr.pp.Digits
	// The stored words are Digits polynomials a merge node, however they
	// are grouped, in a full tree (a partial one, where absorbed subtrees
	// lack rows, stores more: a lone child's variants are not shared).
	words := pk.countNodes(k, pr.logN, 0, 1) * ell * n
	pk.pre[k] = make([]uint64, 0, words)
	coeffs := make([]uint64, n)
	digits := make([]uint64, ell)
	digitPolys := make([]ring.Poly, ell)
	for j := range digitPolys {
		digitPolys[j] = r.NewPoly()
	}
	ks := make([][]uint64, ell)
	ds := make([][]uint64, ell)
	t, u, tu := r.NewPoly(), r.NewPoly(), r.NewPoly()
	var walk func(level, off, step int) (ring.Poly, *fsum, bool, error)
	walk = func(level, off, step int) (ring.Poly, *fsum, bool, error) {
		if level == 0 {
			i := pk.leafRow(k, off)
			if i < 0 {
				return ring.Poly{}, nil, false, nil
			}
			return pk.leaf(h[i*n : (i+1)*n]), nil, true, nil
		}
		e, fe, eok, err := walk(level-1, off, 2*step)
		if err != nil {
			return ring.Poly{}, nil, false, err
		}
		o, fo, ook, err := walk(level-1, off+step, 2*step)
		if err != nil || (!eok && !ook) {
			return ring.Poly{}, nil, false, err
		}
		if err := ctx.Err(); err != nil {
			return ring.Poly{}, nil, false, err
		}
		// t = X^(N/2^level)·o, u = e − t; the node is e + t + τ(u), with
		// τ(u) key-switched: its a-part replaced by Σ_j g_j(τ(u))·K1_j.
		clear(t.Coeffs[0])
		if ook {
			mulMont(t.Coeffs[0], o.Coeffs[0], pr.mono[level], pr.q, pr.mred)
		}
		if !eok {
			e = r.NewPoly()
		}
		r.Sub(e, t, u)
		pr.switchDigits(u, pr.auto[level], tu, digits, digitPolys)
		for j := range digitPolys {
			ks[j] = ka[pr.keyIndex(level, j)]
			ds[j] = digitPolys[j].Coeffs[0]
		}
		out := e // e is this node's own (a leaf's or a child's fresh poly)
		r.Add(e, t, out)
		// Σ_j K1_j·g_j: both plain, so macMont's result carries 2^-64,
		// which fromMont takes out.
		macMont(coeffs, ks, ds, pr.q, pr.mred)
		pr.fromMont(coeffs)
		for c := range coeffs {
			out.Coeffs[0][c] = ring.BRedAdd(out.Coeffs[0][c]+coeffs[c], pr.q, pr.bred)
		}
		own := &fsum{}
		for j := range ds {
			own.add(r, variant{lev: level, g: 1, j: j}, ds[j])
		}
		if level > pk.absorb {
			pk.emit(k, level, own)
			return out, nil, true, nil
		}
		f := mergeFormal(pr, level, fe, fo)
		for i, v := range own.v {
			f.add(r, v, own.p[i])
		}
		if level == pk.absorb {
			pk.emit(k, level, f)
			f = nil
		}
		return out, f, true, nil
	}
	root, _, ok, err := walk(pr.logN, 0, 1)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("lwepir: pack %d holds no row", k)
	}
	r.INTT(root, root)
	pk.aOut[k] = make([]uint32, n)
	pk.aRoot[k] = append([]uint64(nil), root.Coeffs[0]...)
	for c, x := range root.Coeffs[0] {
		pk.aOut[k][c] = pr.roundTo(x, pr.pp.LogQA)
	}
	return nil
}

// countNodes counts the merge nodes of pack k's subtree (level, off, step).
func (pk *Packer) countNodes(k, level, off, step int) int {
	if level == 0 {
		return 0
	}
	if !pk.present(k, level, off, step) {
		return 0
	}
	return 1 + pk.countNodes(k, level-1, off, 2*step) + pk.countNodes(k, level-1, off+step, 2*step)
}

// present reports whether the subtree (level, off, step) of pack k holds a
// row: leaves off + j·step, j < 2^level.
func (pk *Packer) present(k, level, off, step int) bool {
	for j := 0; j < 1<<level; j++ {
		if pk.leafRow(k, off+j*step) >= 0 {
			return true
		}
	}
	return false
}

// leaf returns the a-part of row h of H' as a ring element in the NTT
// domain: each entry rounded from 2^32 to Q, laid out so that its product
// with s(X) has ⟨h, s⟩ as constant coefficient (h_0, then −h_j at N−j),
// and multiplied by N^{-1} mod Q (the packing multiplies by N).
func (pk *Packer) leaf(h []uint32) ring.Poly {
	pr, r, n := pk.pr, pk.pr.r, len(h)
	a := r.NewPoly()
	c := a.Coeffs[0]
	for j, v := range h {
		x := pr.scaleFrom32(v)
		if j == 0 {
			c[0] = x
		} else if x != 0 {
			c[n-j] = pr.q - x
		}
	}
	r.MulScalar(a, pr.nInv, a)
	r.NTT(a, a)
	return a
}

// scaleFrom32 is round(Q·v/2^32) mod Q.
func (pr *packRing) scaleFrom32(v uint32) uint64 {
	hi, lo := bits.Mul64(pr.q, uint64(v))
	lo, c := bits.Add64(lo, 1<<31, 0)
	hi += c
	x := hi<<32 | lo>>32
	if x >= pr.q {
		x -= pr.q
	}
	return x
}

// roundTo is round(2^w·x/Q) mod 2^w for x ∈ [0, Q).
func (pr *packRing) roundTo(x uint64, w int) uint32 {
	hi, lo := bits.Mul64(x, uint64(1)<<w)
	lo, c := bits.Add64(lo, pr.q/2, 0)
	hi += c
	quo, _ := bits.Div64(hi, lo, pr.q)
	return uint32(quo & (uint64(1)<<w - 1))
}

// fromMont multiplies every value by 2^64 mod q (undoing a Montgomery
// reduction's 2^-64).
func (pr *packRing) fromMont(v []uint64) {
	for i, x := range v {
		v[i] = ring.MForm(x, pr.q, pr.bred)
	}
}

// switchDigits sets dp to the gadget digits of τ(w), w in the NTT domain
// and perm τ's NTT permutation (what a key switching of τ(w) multiplies
// by its key), the digits in the NTT domain; tmp and digits are scratch.
func (pr *packRing) switchDigits(w ring.Poly, perm []uint64, tmp ring.Poly, digits []uint64, dp []ring.Poly) {
	r := pr.r
	r.AutomorphismNTTWithIndex(w, perm, tmp)
	r.INTT(tmp, tmp)
	for c, x := range tmp.Coeffs[0] {
		pr.decompose(x, digits)
		for j, d := range digits {
			dp[j].Coeffs[0][c] = d
		}
	}
	for j := range dp {
		r.NTT(dp[j], dp[j])
	}
}
