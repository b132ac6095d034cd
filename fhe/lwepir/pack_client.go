package lwepir

import "fmt"

// PackedQuery is what a client sends for one column in the packed mode:
// the LWE vector, as in every mode, and the packing keys under the same
// secret (fresh with the query).
type PackedQuery struct {
	Vector []uint32
	Keys   *PackingKeys
}

// packClient is what a client of the packed mode keeps: the packing ring
// and the keys' public a-parts (one polynomial a key and digit: 32 KiB in
// PackV3, 352 KiB in PackV2), expanded once.
type packClient struct {
	pr *packRing
	ka [][]uint64
}

func (c *Client) packState() (*packClient, error) {
	c.packOnce.Do(func() {
		pr, err := c.p.packRing()
		if err != nil {
			c.packErr = err
			return
		}
		c.pack = &packClient{pr: pr, ka: packingKeyA(pr, c.seed)}
	})
	return c.pack, c.packErr
}

// NewPackedClient returns a client of the packed mode, which needs no key
// of its own: each query's packing keys come from the query's fresh
// secret. It builds QueryVector and PackedQuery queries (not Query).
func NewPackedClient(p Params, shape Shape, seed [SeedSize]byte) (*Client, error) {
	if err := shape.Validate(p); err != nil {
		return nil, err
	}
	if err := p.Pack().Validate(); err != nil {
		return nil, err
	}
	nc, err := newNegacyclic(p)
	if err != nil {
		return nil, err
	}
	return &Client{p: p, shape: shape, seed: seed, nc: nc}, nil
}

// PackedQuery builds a packed-mode query for column col: QueryVector and
// the packing keys of its secret.
func (c *Client) PackedQuery(col int) (*PackedQuery, *State, error) {
	pc, err := c.packState()
	if err != nil {
		return nil, nil, err
	}
	q, st, err := c.QueryVector(col)
	if err != nil {
		return nil, nil, err
	}
	if pc.pr.pp.QueryBits < 32 {
		roundQuery(q, pc.pr.pp.QueryBits)
		var sum uint32
		for _, w := range q {
			sum += w
		}
		st.sumQ = sum // the sum of what is sent, as the device computes it
	}
	keys, err := genPackingKeys(c.p, pc.pr, pc.ka, st.s)
	if err != nil {
		return nil, nil, err
	}
	return &PackedQuery{Vector: q, Keys: keys}, st, nil
}

// DecodePacked returns the Rows bytes of the queried column from a packed
// answer: for each pack, v = b − ⌊(a·s mod 2^LogQA)/2^(LogQA−LogQB)⌉ modulo
// 2^LogQB, then each row's byte is v rounded to 8 bits, plus 128. The
// product a·s is exact (the LWE ring's 61-bit prime) and reduced without
// a branch on its sign.
func (c *Client) DecodePacked(st *State, a *PackedAnswer) ([]byte, error) {
	pc, err := c.packState()
	if err != nil {
		return nil, err
	}
	pp, n := pc.pr.pp, c.p.N()
	perPack, stride, packs := packLayout(n, c.shape.Rows)
	if st == nil || len(st.s) != n {
		return nil, fmt.Errorf("%w: no query state", ErrParams)
	}
	if err := checkPackedAnswer(a, packs, n, pp); err != nil {
		return nil, err
	}
	nc := c.nc
	r := nc.r
	sP, aP := nc.newPoly(), nc.newPoly()
	for i, x := range st.s {
		sP.Coeffs[0][i] = uint64(x) + nc.prime&uint64(x>>63)
	}
	r.NTT(sP, sP)
	out := make([]byte, c.shape.Rows)
	maskA, maskB := uint64(1)<<pp.LogQA-1, uint32(1)<<pp.LogQB-1
	shift := uint(pp.LogQA - pp.LogQB)
	for k := range packs {
		for j, v := range a.A[k] {
			aP.Coeffs[0][j] = uint64(v)
		}
		r.NTT(aP, aP)
		r.MulCoeffsBarrett(aP, sP, aP)
		r.INTT(aP, aP)
		for row := 0; row < perPack; row++ {
			i := k*perPack + row
			if i >= len(out) {
				break
			}
			coef := row * stride
			x := aP.Coeffs[0][coef]
			above := (nc.prime/2 - x) >> 63 // 1 if x is a negative value
			as := (x - nc.prime&-above) & maskA
			if shift > 0 {
				as = (as + 1<<(shift-1)) >> shift
			}
			v := (a.B[k][coef] - uint32(as)) & maskB
			m := (v + 1<<(pp.LogQB-logP-1)) >> (pp.LogQB - logP)
			out[i] = byte(m) + centre
		}
	}
	return out, nil
}

// checkPackedAnswer checks an answer's shape and ranges.
func checkPackedAnswer(a *PackedAnswer, packs, n int, pp PackParams) error {
	if a == nil || len(a.A) != packs || len(a.B) != packs {
		return fmt.Errorf("%w: packed answer of the wrong shape", ErrParams)
	}
	for k := range packs {
		if len(a.A[k]) != n || len(a.B[k]) != n {
			return fmt.Errorf("%w: packed answer of the wrong shape", ErrParams)
		}
		for j := range n {
			if a.A[k][j]>>pp.LogQA != 0 || a.B[k][j]>>pp.LogQB != 0 {
				return fmt.Errorf("%w: packed answer coefficient out of range", ErrParams)
			}
		}
	}
	return nil
}

// PackedAnswerBytes is the encoded size of a packed answer for shape.
func PackedAnswerBytes(p Params, shape Shape) int {
	pp, n := p.Pack(), p.N()
	_, _, packs := packLayout(n, shape.Rows)
	return packs * (packedLen(n, pp.LogQA) + packedLen(n, pp.LogQB))
}

// MarshalPackedAnswer encodes an answer: for each pack, its a-part in
// LogQA bits a coefficient, then its b-part in LogQB bits, least
// significant bit first.
func MarshalPackedAnswer(p Params, shape Shape, a *PackedAnswer) ([]byte, error) {
	pp, n := p.Pack(), p.N()
	_, _, packs := packLayout(n, shape.Rows)
	if err := checkPackedAnswer(a, packs, n, pp); err != nil {
		return nil, err
	}
	out := make([]byte, 0, PackedAnswerBytes(p, shape))
	v := make([]uint64, n)
	for k := range packs {
		for j, x := range a.A[k] {
			v[j] = uint64(x)
		}
		out = packBits(out, v, pp.LogQA)
		for j, x := range a.B[k] {
			v[j] = uint64(x)
		}
		out = packBits(out, v, pp.LogQB)
	}
	return out, nil
}

// UnmarshalPackedAnswer decodes an answer of shape, refusing any input not
// exactly PackedAnswerBytes long (nonzero padding included): the bytes come
// from the server.
func UnmarshalPackedAnswer(p Params, shape Shape, b []byte) (*PackedAnswer, error) {
	if err := shape.Validate(p); err != nil {
		return nil, err
	}
	pp, n := p.Pack(), p.N()
	if err := pp.Validate(); err != nil {
		return nil, err
	}
	_, _, packs := packLayout(n, shape.Rows)
	if len(b) != PackedAnswerBytes(p, shape) {
		return nil, fmt.Errorf("%w: packed answer of %d bytes, want %d", ErrParams, len(b), PackedAnswerBytes(p, shape))
	}
	a := &PackedAnswer{A: make([][]uint32, packs), B: make([][]uint32, packs)}
	v := make([]uint64, n)
	la, lb := packedLen(n, pp.LogQA), packedLen(n, pp.LogQB)
	for k := range packs {
		for part, w := range []int{pp.LogQA, pp.LogQB} {
			l := la
			if part == 1 {
				l = lb
			}
			if err := unpackBits(b[:l], v, w, uint64(1)<<w, "packed answer"); err != nil {
				return nil, err
			}
			b = b[l:]
			dst := make([]uint32, n)
			for j, x := range v {
				dst[j] = uint32(x)
			}
			if part == 0 {
				a.A[k] = dst
			} else {
				a.B[k] = dst
			}
		}
	}
	return a, nil
}
