package lwepir

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// Query is what a client sends for one column: the LWE vector of the first
// dimension and the BGV encryption of its LWE secret.
type Query struct {
	Vector []uint32         // Cols entries: A·s + e + Δ·u_col mod 2^32
	Secret *rlwe.Ciphertext // s in the slots of every half, period N
}

// Answer is what the server returns.
type Answer struct {
	Column []uint32           // Rows entries: D·q mod 2^32
	Hint   []*rlwe.Ciphertext // H·s, Rows values in the slots of ⌈Rows/slots⌉ ciphertexts
}

// State is what a client keeps between a query and its answer.
type State struct {
	s      []int64
	sumQ   uint32 // Σ_j q_j, to centre the database entries
	column int
}

// Client builds queries for one database and decodes their answers.
type Client struct {
	p     Params
	shape Shape
	seed  [SeedSize]byte
	bp    bgv.Parameters
	sk    *SecretKey
	enc   *rlwe.Encryptor
	dec   *rlwe.Decryptor
	ecd   *bgv.Encoder
	nc    *negacyclic

	// aNTT holds the public matrix's blocks in NTT form, built at the
	// first query (8 bytes a column: 4 MiB for a 4 GiB database's 2^19
	// columns): every query multiplies its secret by the same blocks, and
	// expanding and transforming them was two fifths of a query's time.
	aOnce sync.Once
	aNTT  []ring.Poly

	// pack holds what packed queries need (pack_client.go), built at the
	// first one.
	packOnce sync.Once
	pack     *packClient
	packErr  error
}

// NewClient returns a client of the database described by shape and seed.
func NewClient(p Params, shape Shape, seed [SeedSize]byte, sk *SecretKey) (*Client, error) {
	if err := shape.Validate(p); err != nil {
		return nil, err
	}
	bp, err := p.hintParams()
	if err != nil {
		return nil, err
	}
	nc, err := newNegacyclic(p)
	if err != nil {
		return nil, err
	}
	return &Client{p: p, shape: shape, seed: seed, bp: bp, sk: sk,
		enc: rlwe.NewEncryptor(bp, sk.sk), dec: rlwe.NewDecryptor(bp, sk.sk), ecd: bgv.NewEncoder(bp), nc: nc}, nil
}

// ErrIndex reports a record or column outside the database.
var ErrIndex = fmt.Errorf("lwepir: index out of range")

// Query builds a query for column col. Its tiles are spread over the
// process's cores.
func (c *Client) Query(col int) (*Query, *State, error) {
	if c.sk == nil {
		return nil, nil, fmt.Errorf("%w: a client of the packed mode has no ring-stage key", ErrParams)
	}
	q, st, err := c.QueryVector(col)
	if err != nil {
		return nil, nil, err
	}
	ct, err := c.encryptSecret(st.s)
	if err != nil {
		return nil, nil, err
	}
	return &Query{Vector: q, Secret: ct}, st, nil
}

// QueryVector builds the LWE vector of a query for column col alone, with
// no encrypted secret: the query of SimplePIR's mode, where the client has
// downloaded the hint H' (ComputeHint) and decodes the scan's column with
// DecodeWithHint. The hint-free Query is this vector and the secret's
// encryption.
func (c *Client) QueryVector(col int) ([]uint32, *State, error) {
	if col < 0 || col >= c.shape.Cols {
		return nil, nil, fmt.Errorf("%w: column %d of %d", ErrIndex, col, c.shape.Cols)
	}
	n := c.p.N()
	s := make([]int64, n)
	if err := sampleTernary(s); err != nil {
		return nil, nil, err
	}
	r := c.nc.r
	sNTT := r.NewPoly()
	c.nc.load(sNTT, s)
	r.NTT(sNTT, sNTT)
	aNTT := c.publicNTT()
	q := make([]uint32, c.shape.Cols)
	// Each worker takes a run of tiles: its own error (its own DRBG key)
	// and its own part of Σ q_j.
	tiles := len(aNTT)
	workers := max(1, min(runtime.GOMAXPROCS(0), tiles))
	sums := make([]uint32, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*tiles/workers, (w+1)*tiles/workers
		wg.Go(func() {
			e := make([]int64, (hi-lo)*n)
			if errs[w] = sampleError(e, c.p.Eta); errs[w] != nil {
				return
			}
			prod := r.NewPoly()
			var sum uint32
			for k := lo; k < hi; k++ {
				r.MulCoeffsBarrett(aNTT[k], sNTT, prod)
				r.INTT(prod, prod)
				for t, x := range prod.Coeffs[0] {
					j := k*n + t
					v := c.nc.mod32(x) + uint32(e[j-lo*n])
					if j == col {
						v += 1 << logDelta
					}
					q[j] = v
					sum += v
				}
			}
			sums[w] = sum
		})
	}
	wg.Wait()
	var sum uint32
	for w := range workers {
		if errs[w] != nil {
			return nil, nil, errs[w]
		}
		sum += sums[w]
	}
	return q, &State{s: s, sumQ: sum, column: col}, nil
}

// publicNTT returns the public matrix's blocks in NTT form, building them
// at the first call (over every core).
func (c *Client) publicNTT() []ring.Poly {
	c.aOnce.Do(func() {
		n, tiles := c.p.N(), c.shape.Tiles(c.p)
		c.aNTT = make([]ring.Poly, tiles)
		workers := max(1, min(runtime.GOMAXPROCS(0), tiles))
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				a := make([]int64, n)
				for k := w; k < tiles; k += workers {
					p := c.nc.newPoly()
					publicBlock(c.seed, k, a)
					c.nc.load(p, a)
					c.nc.r.NTT(p, p)
					c.aNTT[k] = p
				}
			})
		}
		wg.Wait()
	})
	return c.aNTT
}

// encryptSecret encrypts s in every slot position v as s[v mod N] (each half
// of the slot matrix has a multiple of N columns, so column rotations keep
// the period).
func (c *Client) encryptSecret(s []int64) (*rlwe.Ciphertext, error) {
	t := c.p.HintT
	vals := make([]uint64, c.bp.MaxSlots())
	for v := range vals {
		x := s[v%len(s)]
		if x < 0 {
			vals[v] = t - uint64(-x)
		} else {
			vals[v] = uint64(x)
		}
	}
	pt := bgv.NewPlaintext(c.bp, c.bp.MaxLevel())
	if err := c.ecd.Encode(vals, pt); err != nil {
		return nil, err
	}
	return c.enc.EncryptNew(pt)
}

// Decode returns the Rows bytes of the queried column.
func (c *Client) Decode(st *State, a *Answer) ([]byte, error) {
	if a == nil || len(a.Column) != c.shape.Rows || len(a.Hint) != c.shape.HintCiphertexts(c.p) {
		return nil, fmt.Errorf("%w: answer of the wrong shape", ErrParams)
	}
	t := c.p.HintT
	l := c.shape.Layout(c.p)
	hs := make([][]uint64, len(a.Hint))
	for o, ct := range a.Hint {
		if ct == nil || ct.Degree() != 1 {
			return nil, fmt.Errorf("%w: hint ciphertext %d", ErrParams, o)
		}
		hs[o] = make([]uint64, l.Slots)
		if err := c.ecd.Decode(c.dec.DecryptNew(ct), hs[o]); err != nil {
			return nil, err
		}
	}
	out := make([]byte, c.shape.Rows)
	for i := range out {
		o, v := l.resultSlot(i)
		h := hs[o][v]
		var h32 uint32
		if h > t/2 {
			h32 = uint32(-int64(t - h))
		} else {
			h32 = uint32(h)
		}
		x := a.Column[i] - centre*st.sumQ - h32
		out[i] = byte((x+1<<(logDelta-1))>>logDelta) + centre
	}
	return out, nil
}

// DecodeWithHint returns the Rows bytes of the queried column from the
// scan's column D·q alone, with the hint H' (ComputeHint: Rows × N words,
// row-major) the client downloaded: SimplePIR's decoding, H'·s computed
// here (Rows·N multiply-adds modulo 2^32) where the hint-free
// Decode decrypts the server's H'·s.
func (c *Client) DecodeWithHint(st *State, column, hint []uint32) ([]byte, error) {
	n := c.p.N()
	if st == nil || len(st.s) != n || len(column) != c.shape.Rows || len(hint) != c.shape.Rows*n {
		return nil, fmt.Errorf("%w: a column of %d words and a hint of %d for %d rows", ErrParams, len(column), len(hint), c.shape.Rows)
	}
	s := make([]uint32, n) // s modulo 2^32: a product, not a branch on the secret
	for j, v := range st.s {
		s[j] = uint32(v)
	}
	out := make([]byte, c.shape.Rows)
	for i := range out {
		var h uint32
		for j, x := range hint[i*n : (i+1)*n] {
			h += x * s[j]
		}
		x := column[i] - centre*st.sumQ - h
		out[i] = byte((x+1<<(logDelta-1))>>logDelta) + centre
	}
	return out, nil
}

// Record extracts record r from the decoded column of its query.
func (c *Client) Record(column []byte, r int) ([]byte, error) {
	col, row := c.shape.Locate(r)
	if r < 0 || col >= c.shape.Cols || row+c.shape.RecordSize > len(column) {
		return nil, fmt.Errorf("%w: record %d", ErrIndex, r)
	}
	return column[row : row+c.shape.RecordSize], nil
}

// Column returns the column holding record r.
func (c *Client) Column(r int) (int, error) {
	if r < 0 || r >= c.shape.Records() {
		return 0, fmt.Errorf("%w: record %d of %d", ErrIndex, r, c.shape.Records())
	}
	col, _ := c.shape.Locate(r)
	return col, nil
}
