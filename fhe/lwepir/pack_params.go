package lwepir

import (
	"fmt"
	"math/bits"
	"sync"

	"github.com/tuneinsight/lattigo/v6/ring"
)

// PackParams fixes the ring that packs an answer (see pack_doc.go): the
// ring Z_Q[X]/(X^N+1) of the LWE dimension N, so that the ring's secret is
// the query's own LWE secret s; the gadget of its key switching; and the
// two power-of-two moduli the packed answer is switched down to.
type PackParams struct {
	// LogQ is the size of the prime Q ≡ 1 mod 2N: the largest such prime
	// below 2^LogQ.
	LogQ int
	// Digits, LogBase and DropBits are the gadget: an element of Z_Q,
	// rounded to a multiple of 2^DropBits, is written in Digits signed
	// digits of base 2^LogBase (DropBits + Digits·LogBase ≥ LogQ); digit j
	// weighs 2^(DropBits + j·LogBase). What the rounding leaves, r with
	// |r| ≤ 2^(DropBits−1), is not switched: it stays as an error r·τ(s).
	Digits, LogBase, DropBits int
	// LogQA and LogQB are the download moduli: the packed ciphertext's
	// a-part is rounded to 2^LogQA, its b-part to 2^LogQB.
	LogQA, LogQB int
	// Absorb is the depth of the subtrees of the packing tree stored as one
	// node (pack_absorb.go): it fixes the stored layout.
	Absorb int
	// QueryBits is how many high bits of each query word a packed query
	// sends: the vector is rounded to them (28 or 32).
	QueryBits int
	// TwoKeys packs with InsPIRe's two automorphism keys (pack_twokeys.go)
	// instead of the packing tree's log N: Absorb is then unused.
	TwoKeys bool
	// KeyDrop trims the keys a query sends: level k's b-parts go without
	// their k + KeyDrop low bits (coefficient domain), an error of at most
	// 2^(k+KeyDrop−1) added to the key, whose noise the levels above k
	// amplify the less the higher k is. 0: nothing dropped.
	KeyDrop int
}

// PackVersion names a packing gadget. A database's packer is precomputed
// under one, and the queries of its generations use the same (the client
// reads it from the database's manifest and names it in each request).
type PackVersion uint8

const (
	// PackV1: three exact digits of 18 bits (databases written before
	// PackV2; the zero value reads as PackV1).
	PackV1 PackVersion = 1
	// PackV2: two digits of 16 bits after rounding away the low 22 bits —
	// two thirds of PackV1's stored factors, products and key bytes, and
	// less noise (the package doc).
	PackV2 PackVersion = 2
	// PackV3: InsPIRe's packing with two keys (pack_twokeys.go), Q below
	// 2^52 (a product of two words is one IFMA pair: dot52.go), one digit
	// of 25 bits after rounding away the low 27: keys of 26 KiB instead
	// of 248, and half PackV2's stored factors and products.
	PackV3 PackVersion = 3
	// PackLatest is what new databases are written with.
	PackLatest = PackV3
)

// WithPacking returns p with packing version v (0 is PackV1: a manifest
// written before versions were recorded).
func (p Params) WithPacking(v PackVersion) (Params, error) {
	if v == 0 {
		v = PackV1
	}
	if v != PackV1 && v != PackV2 && v != PackV3 {
		return p, fmt.Errorf("%w: packing version %d", ErrParams, v)
	}
	p.Packing = v
	return p, nil
}

// Pack returns the packing parameters of p: Q < 2^54 (the homomorphic
// encryption standard's bound for 128 bits at ring degree 2048, ternary
// secret), the gadget of p's packing version and the bits of its query
// words, the answer rounded to 21 + 16 bits a coefficient, and level k's
// keys sent without their k + 3 low bits.
func (p Params) Pack() PackParams {
	switch p.Packing {
	case PackV3:
		return PackParams{LogQ: 52, Digits: 1, LogBase: 25, DropBits: 27, TwoKeys: true, QueryBits: 28, LogQA: 21, LogQB: 16}
	case PackV2:
		return PackParams{LogQ: 54, Digits: 2, LogBase: 16, DropBits: 22, Absorb: 5, QueryBits: 28, LogQA: 21, LogQB: 16, KeyDrop: 3}
	}
	return PackParams{LogQ: 54, Digits: 3, LogBase: 18, Absorb: 4, QueryBits: 32, LogQA: 21, LogQB: 16, KeyDrop: 3}
}

// Validate checks the relations packing relies on.
func (pp PackParams) Validate() error {
	if pp.LogQ < 40 || pp.LogQ > 60 || pp.Digits < 1 || pp.Digits > 8 || pp.LogBase < 1 || pp.DropBits < 0 || pp.DropBits+pp.Digits*pp.LogBase < pp.LogQ ||
		pp.LogQB < logP+2 || pp.LogQB > 32 || pp.LogQA < pp.LogQB || pp.LogQA > 32 || pp.LogQA >= pp.LogQ ||
		pp.KeyDrop < 0 || pp.KeyDrop+12 > pp.LogQ/2 || !pp.TwoKeys && (pp.Absorb < 1 || pp.Absorb > 11) ||
		pp.TwoKeys && (pp.Absorb != 0 || pp.KeyDrop != 0) || pp.QueryBits != 28 && pp.QueryBits != 32 {
		return fmt.Errorf("%w: packing parameters %+v", ErrParams, pp)
	}
	return nil
}

// packRing is what packing computes with in Z_Q[X]/(X^N+1), built once per
// (N, Q): the NTT, Q's Montgomery constant, N^{-1} mod Q, and for each
// level k = 1…log N of the packing tree the NTT-domain permutation of the
// automorphism X → X^(2^k+1) and the monomial X^(N/2^k) in the NTT domain,
// Montgomery form.
type packRing struct {
	pp     PackParams
	logN   int
	r      *ring.Ring
	q      uint64
	mred   uint64 // q^{-1} mod 2^64
	bred   [2]uint64
	nInv   uint64     // N^{-1} mod q
	auto   [][]uint64 // auto[k]: level k's permutation (k ≥ 1)
	mono   [][]uint64 // mono[k]: NTT(X^(N/2^k)), Montgomery form
	galEls []uint64   // galEls[k] = 2^k + 1
	// With two keys (PackParams.TwoKeys): key 1 is τ_5's, key 2 τ_(2N−1)'s
	// (conjugation), twoAuto[k] their NTT-domain permutations, and
	// orbit[b·N/2 + a] the NTT index of the root ζ^(e0·(−1)^b·5^a), e0 the
	// exponent of index 0 (pack_twokeys.go).
	twoAuto  [3][]uint64
	orbit    []int
	orbitPos []int // orbit's inverse
}

var packRings = struct {
	sync.Mutex
	m map[string]*packRing
}{m: map[string]*packRing{}}

// packRing returns the packing ring of p (cached: a few parameter sets).
func (p Params) packRing() (*packRing, error) {
	pp := p.Pack()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := pp.Validate(); err != nil {
		return nil, err
	}
	key := fmt.Sprint(p.LogN, pp)
	packRings.Lock()
	pr, ok := packRings.m[key]
	packRings.Unlock()
	if ok {
		return pr, nil
	}
	n := p.N()
	g := ring.NewNTTFriendlyPrimesGenerator(uint64(pp.LogQ), uint64(2*n))
	q, err := g.NextDownstreamPrime()
	if err != nil {
		return nil, err
	}
	r, err := ring.NewRing(n, []uint64{q})
	if err != nil {
		return nil, err
	}
	pr = &packRing{pp: pp, logN: p.LogN, r: r, q: q, mred: ring.GenMRedConstant(q), bred: ring.GenBRedConstant(q)}
	pr.nInv = ring.ModExp(uint64(n), q-2, q)
	pr.auto = make([][]uint64, p.LogN+1)
	pr.mono = make([][]uint64, p.LogN+1)
	pr.galEls = make([]uint64, p.LogN+1)
	x := r.NewPoly()
	for k := 1; k <= p.LogN; k++ {
		pr.galEls[k] = uint64(1)<<k + 1
		if pr.auto[k], err = ring.AutomorphismNTTIndex(n, r.NthRoot(), pr.galEls[k]); err != nil {
			return nil, err
		}
		clear(x.Coeffs[0])
		x.Coeffs[0][n>>k] = 1
		r.NTT(x, x)
		r.MForm(x, x)
		pr.mono[k] = append([]uint64(nil), x.Coeffs[0]...)
	}
	if pp.TwoKeys {
		if err := pr.twoKeyTables(); err != nil {
			return nil, err
		}
	}
	packRings.Lock()
	if len(packRings.m) < 8 {
		packRings.m[key] = pr
	}
	packRings.Unlock()
	return pr, nil
}

// Q is the packing modulus.
func (pr *packRing) Q() uint64 { return pr.q }

// keyDrop is how many low bits level k's keys are sent without.
func (pr *packRing) keyDrop(k int) int {
	if pr.pp.KeyDrop == 0 || pr.pp.TwoKeys {
		return 0
	}
	return k + pr.pp.KeyDrop
}

// keyLevels is how many automorphisms the keys switch from: log N
// (the tree's levels), or two.
func (pr *packRing) keyLevels() int {
	if pr.pp.TwoKeys {
		return 2
	}
	return pr.logN
}

// keyAuto is the NTT-domain permutation of key k's automorphism.
func (pr *packRing) keyAuto(k int) []uint64 {
	if pr.pp.TwoKeys {
		return pr.twoAuto[k]
	}
	return pr.auto[k]
}

// keyPolys is how many polynomials a packing key holds: Digits for each of
// its automorphisms.
func (pr *packRing) keyPolys() int { return pr.keyLevels() * pr.pp.Digits }

// keyIndex is the index of digit j of level k's key (k = 1…keyLevels).
func (pr *packRing) keyIndex(k, j int) int { return (k-1)*pr.pp.Digits + j }

// decompose writes the signed base-2^LogBase digits of x ∈ [0, q) (taken
// centred in (−q/2, q/2]) into digits, each modulo q: Σ_j 2^(j·LogBase)·d_j ≡ x.
// The digits lie in [−B/2, B/2] (the last one may reach the top of the
// range with the carry).
func (pr *packRing) decompose(x uint64, digits []uint64) {
	q, lb := pr.q, uint(pr.pp.LogBase)
	v := int64(x)
	if x > q/2 {
		v = int64(x) - int64(q)
	}
	if d := uint(pr.pp.DropBits); d > 0 {
		v = (v + int64(1)<<(d-1)) >> d // rounded: the dropped bits are not switched
	}
	half := int64(1) << (lb - 1)
	for j := range digits {
		d := v & (int64(1)<<lb - 1) // low digit, [0, B)
		if d >= half {
			d -= int64(1) << lb
		}
		v = (v - d) >> lb
		if j == len(digits)-1 {
			d += v << lb // what is left (zero when Digits·LogBase covers the range)
		}
		if d < 0 {
			digits[j] = q - uint64(-d)
		} else {
			digits[j] = uint64(d)
		}
	}
}

// macMont sets out[i] = Σ_j a_j[i]·b_j[i]·2^-64 mod q,
// for a_j in Montgomery form: Σ_j ā_j·b_j mod q. The products are summed in
// 128 bits and reduced once, where Lattigo's ring reduces each product
// (MulCoeffsMontgomeryThenAdd): with three digits, a third of the
// reductions. The high word stays below q (a Montgomery reduction's
// precondition) when len(as)·q < 2^64, which PackParams.Validate ensures
// (LogQ ≤ 60, Digits ≤ 8).
func macMont(out []uint64, as, bs [][]uint64, q, mred uint64) {
	for i := range out {
		var hi, lo uint64
		for j := range as {
			h, l := bits.Mul64(as[j][i], bs[j][i])
			var c uint64
			lo, c = bits.Add64(lo, l, 0)
			hi += h + c
		}
		out[i] = montReduce(hi, lo, q, mred)
	}
}

// mulMont sets out[i] = a[i]·b[i]·2^-64 mod q (b in Montgomery form: a·b̄).
func mulMont(out, a, b []uint64, q, mred uint64) {
	for i := range out {
		out[i] = ring.MRed(a[i], b[i], q, mred)
	}
}
