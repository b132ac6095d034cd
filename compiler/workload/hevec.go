package workload

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// HEVECShape is a coefficient-encoded inner-product scan after HEVEC
// (Rosemary §Workloads, [8] §4): database vectors of Dim coefficients are
// laid side by side in the coefficients of plaintext polynomials (N/Dim
// vectors each); the client encrypts its query in reversed, negated order
// (q̃ = q_0 − Σ_{k≥1} q_k X^{N−k}), so one plaintext–ciphertext product
// x(X)·q̃(X) holds the inner product ⟨q, x_j⟩ in coefficient j·Dim. No
// rotation or ciphertext–ciphertext product is involved in the scores
// (unless Encrypted: then each leaf is one).
//
// The score ciphertexts carry N/Dim useful coefficients each; Pack of them
// are merged into one ciphertext (HEVEC packs its scores before returning
// them, [8] "modPack"; the merge here is the automorphism tree of Chen,
// Dai, Kim, Song, "Efficient homomorphic conversion between (ring) LWE
// ciphertexts", ACNS 2021, Algorithm 2, which Lattigo implements as
// rlwe.Evaluator.Pack): merge(E, O, h) = (E + X^h·O) + τ_{N/h+1}(E − X^h·O),
// h halving from Dim/2 to Dim/Pack. Merging happens at the top level; one
// Rescale per packed ciphertext then drops it to level 0 for the return
// trip. The multiplication by the monomial X^h is a PMult by a stored
// monomial plaintext (scale 1), the automorphism an HRot whose rotation
// index k satisfies 5^k ≡ N/h + 1 (mod 2N).
//
// Layout of the result: leaf i (0 ≤ i < Pack) of group g is database
// plaintext p = g·Pack + i; vector j of plaintext p (database vector
// p·N/Dim + j) has its score, multiplied by Pack, in coefficient
// j·Dim + i·Dim/Pack of packed ciphertext g.
type HEVECShape struct {
	Name    string
	Params  string
	Vectors int64 // database vectors
	Dim     int   // coefficients per vector: a power of two ≥ the vector dimension
	Pack    int   // score ciphertexts merged per returned ciphertext: a power of two ≤ Dim
	// Encrypted: the database's plaintexts are stored encrypted (CKKS
	// ciphertexts under the client's key, the same encoding), and each
	// leaf is a ciphertext–ciphertext product relinearized (HMult +
	// Relinearize) instead of a PMult: the device never holds the
	// vectors in the clear, at twice the stored bytes and a key switch
	// per stored ciphertext.
	Encrypted bool
}

// HEVECLayout is the derived packing of a shape.
type HEVECLayout struct {
	N          int   // ring degree
	PerPt      int   // vectors per plaintext (N/Dim)
	Plaintexts int64 // plaintexts holding the database (padded to Groups·Pack)
	Groups     int64 // packed result ciphertexts
	Gap        int   // coefficient distance between the packed leaves (Dim/Pack)
}

// Layout checks the shape and returns its packing.
func (s HEVECShape) Layout() (HEVECLayout, error) {
	p, err := fhe.Lookup(s.Params)
	if err != nil {
		return HEVECLayout{}, fmt.Errorf("workload: hevec: %w", err)
	}
	if p.Scheme != fhe.CKKS {
		return HEVECLayout{}, fmt.Errorf("workload: hevec: preset %s is %s, want CKKS", p.Name, p.Scheme)
	}
	n := 1 << p.LogN
	switch {
	case s.Vectors < 1:
		return HEVECLayout{}, fmt.Errorf("workload: hevec: %d vectors", s.Vectors)
	case s.Dim < 2 || bits.OnesCount(uint(s.Dim)) != 1 || s.Dim > n/2:
		return HEVECLayout{}, fmt.Errorf("workload: hevec: dimension slot %d must be a power of two in [2, N/2=%d]", s.Dim, n/2)
	case s.Pack < 1 || bits.OnesCount(uint(s.Pack)) != 1 || s.Pack > s.Dim:
		return HEVECLayout{}, fmt.Errorf("workload: hevec: pack %d must be a power of two ≤ dimension slot %d", s.Pack, s.Dim)
	case p.Levels() < 1:
		return HEVECLayout{}, fmt.Errorf("workload: hevec: preset %s has no level to rescale", p.Name)
	}
	perPt := n / s.Dim
	pts := (s.Vectors + int64(perPt) - 1) / int64(perPt)
	groups := (pts + int64(s.Pack) - 1) / int64(s.Pack)
	return HEVECLayout{N: n, PerPt: perPt, Plaintexts: groups * int64(s.Pack), Groups: groups, Gap: s.Dim / s.Pack}, nil
}

// rotationForGalois returns k with 5^k ≡ g (mod 2N), the HRot index of the
// automorphism X → X^g (g ≡ 1 mod 4).
func rotationForGalois(logN int, g uint64) (int, error) {
	m := uint64(2) << logN
	g %= m
	x := uint64(1)
	for k := 0; k < 1<<(logN-1); k++ {
		if x == g {
			return k, nil
		}
		x = x * 5 % m
	}
	return 0, fmt.Errorf("workload: %d is not a power of 5 modulo 2^%d", g, logN+1)
}

// Program builds the scan.
func (s HEVECShape) Program() (*ir.Program, error) {
	lay, err := s.Layout()
	if err != nil {
		return nil, err
	}
	p, _ := fhe.Lookup(s.Params)
	top := p.Levels()
	b := ir.NewBuilder(s.Name, s.Params)
	// A scan over stored data: one linear segment (ir.Node.Segment).
	b.Segment(ir.Linear)
	q := b.SetRole(b.Input("query", top), ir.RoleQuery)
	leaves := make([]int, s.Pack)
	for i := range leaves {
		db := b.SetRole(b.Stored(fmt.Sprintf("vectors/%d", i), top, lay.Groups, !s.Encrypted), ir.RoleDatabase)
		if s.Encrypted {
			leaves[i] = b.MulRelin(q, db)
		} else {
			leaves[i] = b.PMult(q, db)
		}
	}
	monomials := map[int]int{}
	var merge func(xs []int, h int) (int, error)
	merge = func(xs []int, h int) (int, error) {
		if len(xs) == 1 {
			return xs[0], nil
		}
		var even, odd []int
		for i, x := range xs {
			if i%2 == 0 {
				even = append(even, x)
			} else {
				odd = append(odd, x)
			}
		}
		e, err := merge(even, 2*h)
		if err != nil {
			return 0, err
		}
		o, err := merge(odd, 2*h)
		if err != nil {
			return 0, err
		}
		mono, ok := monomials[h]
		if !ok {
			mono = b.Stored(fmt.Sprintf("monomial/%d", h), top, 1, true)
			monomials[h] = mono
		}
		k, err := rotationForGalois(p.LogN, uint64(lay.N/h+1))
		if err != nil {
			return 0, err
		}
		shifted := b.PMult(o, mono)
		sum := b.HAdd(e, shifted)
		return b.HAdd(sum, b.HRot(b.HSub(e, shifted), k)), nil
	}
	packed, err := merge(leaves, lay.Gap)
	if err != nil {
		return nil, err
	}
	b.Output("scores", b.Rescale(packed))
	return b.Build()
}

// HEVECCodec encodes data for a HEVEC program and decodes its result with
// real Lattigo objects: the database plaintexts (named as the program's
// Stored nodes), the reversed query, and the packed scores.
type HEVECCodec struct {
	Shape  HEVECShape
	Layout HEVECLayout
	Params ckks.Parameters
	// DBScale is the scale of the database plaintexts (log2); the query
	// uses the parameters' default scale. Values are expected in [-1, 1]
	// (unit vectors: every coefficient of a product is then at most 1 in
	// magnitude, times Pack after merging).
	LogDBScale int
	enc        *ckks.Encoder
}

// NewHEVECCodec prepares a codec for s with parameters params (which must
// instantiate s.Params).
func NewHEVECCodec(s HEVECShape, params ckks.Parameters, logDBScale int) (*HEVECCodec, error) {
	lay, err := s.Layout()
	if err != nil {
		return nil, err
	}
	if params.N() != lay.N {
		return nil, fmt.Errorf("workload: hevec: parameters have N=%d, shape wants %d", params.N(), lay.N)
	}
	// Headroom: Pack·2^logDBScale must stay below q_0/2.
	if logDBScale < 1 || float64(logDBScale)+math.Log2(float64(s.Pack)) >= math.Log2(float64(params.Q()[0]))-1 {
		return nil, fmt.Errorf("workload: hevec: database scale 2^%d with pack %d overflows q_0", logDBScale, s.Pack)
	}
	return &HEVECCodec{Shape: s, Layout: lay, Params: params, LogDBScale: logDBScale, enc: ckks.NewEncoder(params)}, nil
}

func (c *HEVECCodec) coeffPlaintext(coeffs []float64, scale rlwe.Scale) (*rlwe.Plaintext, error) {
	pt := ckks.NewPlaintext(c.Params, c.Params.MaxLevel())
	pt.IsBatched = false
	pt.Scale = scale
	if err := c.enc.Encode(coeffs, pt); err != nil {
		return nil, fmt.Errorf("workload: hevec: encode: %w", err)
	}
	return pt, nil
}

// Database encodes vectors (each of at most Dim values) into the stored
// objects of the program: "vectors/i" (Groups plaintexts each) and the
// monomials "monomial/h".
func (c *HEVECCodec) Database(vectors [][]float64) (map[string][]*rlwe.Plaintext, error) {
	lay, s := c.Layout, c.Shape
	if int64(len(vectors)) > int64(lay.PerPt)*lay.Plaintexts {
		return nil, fmt.Errorf("workload: hevec: %d vectors exceed the shape's %d", len(vectors), int64(lay.PerPt)*lay.Plaintexts)
	}
	out := map[string][]*rlwe.Plaintext{}
	for p := int64(0); p < lay.Plaintexts; p++ {
		first := min(p*int64(lay.PerPt), int64(len(vectors)))
		last := min(first+int64(lay.PerPt), int64(len(vectors)))
		pt, err := c.Plaintext(vectors[first:last])
		if err != nil {
			return nil, fmt.Errorf("workload: hevec: plaintext %d: %w", p, err)
		}
		name := fmt.Sprintf("vectors/%d", p%int64(s.Pack))
		out[name] = append(out[name], pt)
	}
	mono, err := c.Monomials()
	if err != nil {
		return nil, err
	}
	for name, pt := range mono {
		out[name] = []*rlwe.Plaintext{pt}
	}
	return out, nil
}

// Plaintext encodes up to PerPt vectors (fewer: the rest zero) as one
// database plaintext: vector j in coefficients j·Dim … at the database
// scale. Plaintext p of a database is stored node "vectors/<p mod Pack>",
// instance p / Pack.
func (c *HEVECCodec) Plaintext(vectors [][]float64) (*rlwe.Plaintext, error) {
	lay, s := c.Layout, c.Shape
	if len(vectors) > lay.PerPt {
		return nil, fmt.Errorf("workload: hevec: %d vectors in a plaintext of %d", len(vectors), lay.PerPt)
	}
	coeffs := make([]float64, lay.N)
	for j, v := range vectors {
		if len(v) > s.Dim {
			return nil, fmt.Errorf("workload: hevec: vector %d has %d values, slot holds %d", j, len(v), s.Dim)
		}
		copy(coeffs[j*s.Dim:], v)
	}
	return c.coeffPlaintext(coeffs, rlwe.NewScale(math.Exp2(float64(c.LogDBScale))))
}

// Monomials are the public constants of the packing tree, by stored node
// name ("monomial/<h>": X^h at scale 1).
func (c *HEVECCodec) Monomials() (map[string]*rlwe.Plaintext, error) {
	out := map[string]*rlwe.Plaintext{}
	for h := c.Layout.Gap; h < c.Shape.Dim; h *= 2 {
		coeffs := make([]float64, c.Layout.N)
		coeffs[h] = 1
		pt, err := c.coeffPlaintext(coeffs, rlwe.NewScale(1))
		if err != nil {
			return nil, err
		}
		out[fmt.Sprintf("monomial/%d", h)] = pt
	}
	return out, nil
}

func (c *HEVECCodec) Query(q []float64) (*rlwe.Plaintext, error) {
	if len(q) > c.Shape.Dim {
		return nil, fmt.Errorf("workload: hevec: query has %d values, slot holds %d", len(q), c.Shape.Dim)
	}
	coeffs := make([]float64, c.Layout.N)
	for k, v := range q {
		if k == 0 {
			coeffs[0] = v
		} else {
			coeffs[c.Layout.N-k] = -v
		}
	}
	return c.coeffPlaintext(coeffs, c.Params.DefaultScale())
}

// Scores decodes the decrypted packed results (one plaintext per group) into
// the inner products of the first count database vectors.
func (c *HEVECCodec) Scores(pts []*rlwe.Plaintext, count int) ([]float64, error) {
	lay, s := c.Layout, c.Shape
	if int64(len(pts)) != lay.Groups {
		return nil, fmt.Errorf("workload: hevec: %d result plaintexts, want %d", len(pts), lay.Groups)
	}
	if int64(count) > int64(lay.PerPt)*lay.Plaintexts || count < 0 {
		return nil, fmt.Errorf("workload: hevec: %d scores requested", count)
	}
	out := make([]float64, count)
	coeffs := make([]float64, lay.N)
	for g, pt := range pts {
		if pt.IsBatched {
			return nil, fmt.Errorf("workload: hevec: result %d is slot-encoded", g)
		}
		if err := c.enc.Decode(pt, coeffs); err != nil {
			return nil, fmt.Errorf("workload: hevec: decode result %d: %w", g, err)
		}
		for i := 0; i < s.Pack; i++ {
			p := int64(g)*int64(s.Pack) + int64(i)
			for j := 0; j < lay.PerPt; j++ {
				v := p*int64(lay.PerPt) + int64(j)
				if v < int64(count) {
					out[v] = coeffs[j*s.Dim+i*lay.Gap] / float64(s.Pack)
				}
			}
		}
	}
	return out, nil
}

// deep1B is the Deep1B dataset (Babenko and Lempitsky, CVPR 2016):
// 10^9 vectors of 96 dimensions.
const (
	deep1BVectors = 1_000_000_000
	deep1BDim     = 96
)

func init() {
	register(Workload{
		Name:        "hevec",
		Description: "HEVEC coefficient-encoded inner-product search on CKKS (Deep1B: 10^9 × 96-d, N=4096)",
		Source: "Rosemary §Workloads: HEVEC [8] §4 coefficient encoding, N=4096, logQP=109, Deep1B; " +
			"96-d padded to 128 coefficients (32 vectors per plaintext); 128 score ciphertexts packed per result " +
			"(HEVEC modPack, modelled by the CDKS'21 automorphism tree)",
		Full: func() (*ir.Program, error) {
			return HEVECShape{Name: "hevec-deep1b", Params: "hevec", Vectors: deep1BVectors, Dim: 128, Pack: 128}.Program()
		},
		Small: func() (*ir.Program, error) {
			return HEVECSmall().Program()
		},
	})
}

// HEVECSmall is the small HEVEC scan its test runs for real: 1024 MNIST
// images (784 pixels padded to 1024 coefficients, 4 per N=4096 plaintext,
// 256 plaintexts) merged into one returned ciphertext.
func HEVECSmall() HEVECShape {
	return HEVECShape{Name: "hevec-mnist", Params: "hevec", Vectors: 1024, Dim: 1024, Pack: 256}
}
