package pir

import (
	"fmt"
	"math/big"
	"sync"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// Client builds queries and decodes answers with the secret key. Its
// methods may be called concurrently (they are serialised).
type Client struct {
	params bgv.Parameters
	shape  Shape

	mu  sync.Mutex
	ecd *bgv.Encoder
	enc *rlwe.Encryptor
	dec *rlwe.Decryptor
}

// NewClient returns a client for shape (which must be NewShape's layout
// for params) holding the secret key sk.
func NewClient(params bgv.Parameters, shape Shape, sk *rlwe.SecretKey) (*Client, error) {
	if err := shape.check(params); err != nil {
		return nil, fmt.Errorf("pir: new client: %w", err)
	}
	if err := checkSecretKey(params, sk); err != nil {
		return nil, fmt.Errorf("pir: new client: %w", err)
	}
	return &Client{
		params: params,
		shape:  shape,
		ecd:    bgv.NewEncoder(params),
		enc:    rlwe.NewEncryptor(params, sk),
		dec:    rlwe.NewDecryptor(params, sk),
	}, nil
}

func checkSecretKey(params bgv.Parameters, sk *rlwe.SecretKey) error {
	if sk == nil {
		return fmt.Errorf("%w: nil secret key", ErrKeys)
	}
	q := sk.Value.Q
	if q.N() != params.N() || q.Level() < params.MaxLevelQ() {
		return fmt.Errorf("%w: secret key of degree %d and level %d, want %d and %d", ErrKeys, q.N(), q.Level(), params.N(), params.MaxLevelQ())
	}
	if params.PCount() > 0 && (sk.Value.P.N() != params.N() || sk.Value.P.Level() < params.MaxLevelP()) {
		return fmt.Errorf("%w: secret key has no P part matching the parameters", ErrKeys)
	}
	return nil
}

// Shape returns the client's database shape.
func (c *Client) Shape() Shape { return c.shape }

// QueryPlaintext returns the coefficients (mod t) of the query for record
// index: (2·Rows)⁻¹ at 2·bitrev(row), (2·Cols)⁻¹ at 1 + 2·bitrev(col),
// zero elsewhere.
func QueryPlaintext(params bgv.Parameters, shape Shape, index int) ([]uint64, error) {
	if err := shape.check(params); err != nil {
		return nil, fmt.Errorf("pir: query: %w", err)
	}
	_, row, col, _, err := shape.Locate(index)
	if err != nil {
		return nil, fmt.Errorf("pir: query: %w", err)
	}
	t := params.PlaintextModulus()
	rc, cc := shape.QueryCoefficients(row, col)
	m := make([]uint64, params.N())
	m[rc] = inverse(uint64(2*shape.Rows), t)
	m[cc] = inverse(uint64(2*shape.Cols), t)
	return m, nil
}

// inverse is x⁻¹ mod t (t odd, x a power of two).
func inverse(x, t uint64) uint64 {
	return new(big.Int).ModInverse(new(big.Int).SetUint64(x), new(big.Int).SetUint64(t)).Uint64()
}

// Query returns the query for record index: QueryPlaintext encoded as a
// coefficient (unbatched) BGV plaintext at scale 1 and encrypted with the
// secret key at the top level (in the NTT domain).
func (c *Client) Query(index int) (*rlwe.Ciphertext, error) {
	m, err := QueryPlaintext(c.params, c.shape, index)
	if err != nil {
		return nil, err
	}
	pt := bgv.NewPlaintext(c.params, c.params.MaxLevel())
	pt.IsBatched = false
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.ecd.Encode(m, pt); err != nil {
		return nil, fmt.Errorf("pir: query: encode: %w", err)
	}
	ct, err := c.enc.EncryptNew(pt)
	if err != nil {
		return nil, fmt.Errorf("pir: query: encrypt: %w", err)
	}
	return ct, nil
}

// AnswerScale is the BGV scale (mod t) of the answer ciphertext: the query
// is at scale 1 and every rescale by q_l multiplies the scale by q_l⁻¹ —
// twice by q_top (column and row selections), once by q_{top−1} (the
// answer).
func AnswerScale(params bgv.Parameters) rlwe.Scale {
	top := params.MaxLevel()
	q := params.Q()
	s := params.DefaultScale()
	for _, qi := range []uint64{q[top], q[top], q[top-1]} {
		s = s.Div(params.NewScale(qi))
	}
	return s
}

// Decode decrypts answer (the server's answer to Query(index)) and returns
// record index's bytes. The answer must be a degree-1 ciphertext at level
// top−2; its scale metadata is ignored (the protocol fixes it, see
// AnswerScale), so answers computed elsewhere decode alike.
func (c *Client) Decode(index int, answer *rlwe.Ciphertext) ([]byte, error) {
	_, _, _, off, err := c.shape.Locate(index)
	if err != nil {
		return nil, fmt.Errorf("pir: decode: %w", err)
	}
	if err := checkCiphertext(c.params, answer, c.params.MaxLevel()-2); err != nil {
		return nil, fmt.Errorf("pir: decode: answer: %w", err)
	}
	m := make([]uint64, c.params.N())
	c.mu.Lock()
	pt := c.dec.DecryptNew(answer)
	pt.IsBatched = false
	pt.Scale = AnswerScale(c.params)
	err = c.ecd.Decode(pt, m)
	c.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("pir: decode: %w", err)
	}
	out := make([]byte, c.shape.RecordSize)
	for i := range out {
		k := off + i
		v := m[k/2]
		if v >= 1<<chunkBits {
			return nil, fmt.Errorf("%w: coefficient %d is %d, not a 16-bit chunk", ErrDecode, k/2, v)
		}
		out[i] = byte(v >> (8 * (k % 2)))
	}
	return out, nil
}

// checkCiphertext reports whether ct is a usable degree-1 ciphertext of
// params at level.
func checkCiphertext(params bgv.Parameters, ct *rlwe.Ciphertext, level int) error {
	if ct == nil || ct.MetaData == nil {
		return fmt.Errorf("%w: nil", ErrCiphertext)
	}
	if ct.Degree() != 1 {
		return fmt.Errorf("%w: degree %d, want 1", ErrCiphertext, ct.Degree())
	}
	for i, v := range ct.Value {
		if v.N() != params.N() {
			return fmt.Errorf("%w: polynomial %d has degree %d, want %d", ErrCiphertext, i, v.N(), params.N())
		}
		if v.Level() != level {
			return fmt.Errorf("%w: polynomial %d at level %d, want %d", ErrCiphertext, i, v.Level(), level)
		}
		for j, limb := range v.Coeffs {
			if len(limb) != params.N() {
				return fmt.Errorf("%w: polynomial %d limb %d has %d coefficients, want %d", ErrCiphertext, i, j, len(limb), params.N())
			}
		}
	}
	return nil
}
