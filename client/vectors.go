package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"time"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/client/internal/session"
	"github.com/rosemary-fhe/rosemary/device/api"
)

// Metric is how Nearest ranks vectors.
type Metric string

// Metrics.
const (
	// L2: the smallest Euclidean distance (the ground truth of the SIFT and
	// Deep1B sets). The database stores −‖x‖²/2 beside each vector, so one
	// encrypted inner product gives ⟨q, x⟩ − ‖x‖²/2.
	L2 Metric = "l2"
	// InnerProduct: the largest inner product (cosine on unit vectors).
	InnerProduct Metric = "ip"
)

// VectorOptions configure a vector database.
type VectorOptions struct {
	Metric Metric // default L2
	// EncryptVectors stores the vectors as CKKS ciphertexts under the
	// loader's secret key instead of plaintext polynomials: the device
	// then computes every score ciphertext × ciphertext (relinearized
	// with a key uploaded like the other evaluation keys) and never holds
	// a vector in the clear. Costs: twice the stored bytes, a key switch
	// per stored ciphertext per query (BENCHMARKS.md), and only the
	// holder of that key can query (a grant lets a reader in, but its
	// own key cannot compute on ciphertexts under the owner's).
	EncryptVectors bool
}

// ErrVectorKey: an encrypted-vector database queried or loaded with a
// secret key other than the one its vectors are encrypted under.
var ErrVectorKey = errors.New("client: the vectors are encrypted under another secret key")

// ErrQueryRange: a query so much longer than the database's vectors that
// its scores would not fit the parameters' precision.
var ErrQueryRange = errors.New("client: query outside the database's range")

// maxQueryNorm bounds ‖q‖ relative to the longest database vector: the
// scores, times the packing factor (≤ 256), stay below 2^11 at the scale
// the scan runs at.
const maxQueryNorm = 4

// CreateVectors creates an empty database of dim-dimensional vectors.
func (c *Client) CreateVectors(ctx context.Context, name string, dim int, opt VectorOptions) (*Info, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if opt.Metric == "" {
		opt.Metric = L2
	}
	if opt.Metric != L2 && opt.Metric != InnerProduct {
		return nil, fmt.Errorf("client: create %s: metric %q (l2 or ip)", name, opt.Metric)
	}
	progs, err := c.compiled()
	if err != nil {
		return nil, err
	}
	if err := progs.CheckVectors(vectorPreset, coefficients(dim, opt.Metric)); err != nil || dim < 1 {
		return nil, fmt.Errorf("client: create %s: %w: %d dimensions (%v)", name, dataset.ErrBadDimension, dim, err)
	}
	return c.create(ctx, &Info{Header: Header{Name: name, Kind: KindVectors}, Preset: vectorPreset,
		Parts: Parts{Vectors: &VectorPart{Dim: dim, Metric: opt.Metric, Encrypted: opt.EncryptVectors}}, Created: time.Now().UTC()})
}

// coefficients a vector takes in the database: one more for L2 (−‖x‖²/2).
func coefficients(dim int, m Metric) int {
	if m == L2 {
		return dim + 1
	}
	return dim
}

// loadVectors reads r twice (it must be an io.ReadSeeker): first to count
// the vectors, check their dimension and find the longest (the database
// is stored scaled by it), then to write them.
func (c *Client) loadVectors(ctx context.Context, in *Info, r io.Reader, opt LoadOptions) error {
	rs, ok := r.(io.ReadSeeker)
	if !ok {
		return errors.New("a vector load reads its input twice: give a file, not a stream")
	}
	start, err := rs.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	vr, err := dataset.NewVectorReader(rs, opt.Vectors)
	if err != nil {
		return err
	}
	var n int
	var maxNorm float64
	for {
		v, err := vr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if len(v) != in.Vectors.Dim {
			return fmt.Errorf("%w: vector %d has %d dimensions, the database %q has %d", dataset.ErrDimensionMismatch, n, len(v), in.Name, in.Vectors.Dim)
		}
		maxNorm = math.Max(maxNorm, norm32(v))
		n++
	}
	if n == 0 {
		return errors.New("no vectors in the input")
	}
	if maxNorm == 0 {
		maxNorm = 1
	}
	if _, err := rs.Seek(start, io.SeekStart); err != nil {
		return err
	}
	if vr, err = dataset.NewVectorReader(rs, opt.Vectors); err != nil {
		return err
	}
	progs, err := c.compiled()
	if err != nil {
		return err
	}
	var sk *rlwe.SecretKey
	if in.Vectors.Encrypted {
		// The loader's key encrypts the vectors; it becomes the key
		// the database answers to (recorded by its fingerprint).
		if sk, err = c.keys.secretKey(in.Preset); err != nil {
			return err
		}
		if in.Vectors.Key, err = keyFingerprint(sk); err != nil {
			return err
		}
	}
	l, err := progs.NewVectorLoader(session.DeviceSink(c.dev), genPrefix(in), vectorsOf(in, n), sk)
	if err != nil {
		return err
	}
	x := make([]float64, coefficients(in.Vectors.Dim, in.Vectors.Metric))
	for i := 0; i < n; i++ {
		v, err := vr.Next()
		if err != nil {
			return fmt.Errorf("second pass, vector %d: %w", i, err)
		}
		var sq float64
		for k, f := range v {
			x[k] = float64(f) / maxNorm
			sq += x[k] * x[k]
		}
		if in.Vectors.Metric == L2 {
			x[in.Vectors.Dim] = -sq / 2
		}
		if err := l.Add(ctx, x); err != nil {
			return err
		}
	}
	written, err := l.Finish(ctx)
	if err != nil {
		return err
	}
	in.Records, in.Vectors.Norm, in.Bytes = n, maxNorm, written
	return nil
}

func norm32(v []float32) float64 {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	return math.Sqrt(s)
}

// Neighbors are the results of one Nearest query: database ids, best
// first, and their scores (squared Euclidean distances for L2, inner
// products for InnerProduct), computed from the decrypted scores.
type Neighbors struct {
	IDs    []int     `json:"ids"`
	Scores []float64 `json:"scores"`
	// What the query cost (measured): ciphertext bytes up and down, bytes
	// the device read from its store, wall time here and on the api.
	QueryBytes    int64   `json:"query_bytes"`   // measured on the connection when there is one
	AnswerBytes   int64   `json:"answer_bytes"`  // likewise
	PayloadBytes  int64   `json:"payload_bytes"` // the query's and the scores' ciphertexts
	StoreBytes    int64   `json:"device_store_bytes"`
	Seconds       float64 `json:"seconds"`
	DeviceSeconds float64 `json:"device_seconds"`
}

// Nearest returns the k database vectors nearest to query. The query is
// encrypted here; the device computes an encrypted score for every vector
// next to the data; the scores are decrypted and ranked here.
func (c *Client) Nearest(ctx context.Context, name string, query []float32, k int) (*Neighbors, error) {
	in, err := c.readInfo(ctx, name)
	if err != nil {
		return nil, err
	}
	if in.Kind != KindVectors {
		return nil, fmt.Errorf("%w: %q is a %s database, Nearest searches vector databases", ErrKind, name, in.Kind)
	}
	if in.Records == 0 {
		return nil, fmt.Errorf("%w: %q", ErrEmpty, name)
	}
	if len(query) != in.Vectors.Dim {
		return nil, fmt.Errorf("client: nearest %s: %w: query of %d dimensions, the database has %d", name, dataset.ErrDimensionMismatch, len(query), in.Vectors.Dim)
	}
	if k < 1 {
		return nil, fmt.Errorf("client: nearest %s: k = %d", name, k)
	}
	qn := norm32(query)
	if qn > maxQueryNorm*in.Vectors.Norm {
		return nil, fmt.Errorf("client: nearest %s: %w: ‖q‖ = %g, more than %d× the longest stored vector (%g)", name, ErrQueryRange, qn, maxQueryNorm, in.Vectors.Norm)
	}
	start := time.Now()
	s, err := c.vectorSession(ctx, in)
	if err != nil {
		return nil, err
	}
	q := make([]float64, coefficients(in.Vectors.Dim, in.Vectors.Metric))
	for i, f := range query {
		q[i] = float64(f) / in.Vectors.Norm
	}
	if in.Vectors.Metric == L2 {
		q[in.Vectors.Dim] = 1
	}
	wire := &api.WireCount{}
	scores, resp, err := s.Scores(api.WithWireCount(ctx, wire), q)
	if err != nil {
		return nil, fmt.Errorf("client: nearest %s: %w", name, err)
	}
	ids := make([]int, len(scores))
	for i := range ids {
		ids[i] = i
	}
	// Best first: the largest score (⟨q,x⟩ − ‖x‖²/2 is −½‖q−x‖² + a constant).
	sort.SliceStable(ids, func(a, b int) bool { return scores[ids[a]] > scores[ids[b]] })
	k = min(k, len(ids))
	out := &Neighbors{IDs: ids[:k], Scores: make([]float64, k), StoreBytes: int64(resp.StoreBytes), DeviceSeconds: resp.Seconds,
		QueryBytes: s.QueryBytes(), AnswerBytes: s.AnswerBytes()}
	out.PayloadBytes = out.QueryBytes + out.AnswerBytes
	if wire.Measured() { // through a connection: what crossed it
		out.QueryBytes, out.AnswerBytes = wire.Sent(), wire.Received()
	}
	m2 := in.Vectors.Norm * in.Vectors.Norm
	for i, id := range out.IDs {
		if in.Vectors.Metric == L2 {
			out.Scores[i] = float64(qn*qn) - 2*m2*scores[id]
		} else {
			out.Scores[i] = m2 * scores[id]
		}
	}
	out.Seconds = time.Since(start).Seconds()
	return out, nil
}

// vectorSession returns the session of a vector database generation.
func (c *Client) vectorSession(ctx context.Context, in *Info) (VectorQuerier, error) {
	return cachedSession(c, c.vsessions, in, func() (VectorQuerier, error) {
		progs, err := c.compiled()
		if err != nil {
			return nil, err
		}
		sk, err := c.keys.secretKey(in.Preset)
		if err != nil {
			return nil, err
		}
		if in.Vectors.Encrypted {
			fp, err := keyFingerprint(sk)
			if err != nil {
				return nil, err
			}
			if fp != in.Vectors.Key {
				return nil, fmt.Errorf("%w: %q answers to the key of its last load", ErrVectorKey, in.Name)
			}
		}
		opt, err := c.sessionOptions(ctx, in)
		if err != nil {
			return nil, err
		}
		return progs.OpenVectors(ctx, c.dev, genPrefix(in), vectorsOf(in, in.Records), sk, opt)
	})
}

// vectorsOf is vector database in's shape with n vectors.
func vectorsOf(in *Info, n int) session.Vectors {
	return session.Vectors{Preset: in.Preset, Count: n, Coefficients: coefficients(in.Vectors.Dim, in.Vectors.Metric), Encrypted: in.Vectors.Encrypted}
}

// keyFingerprint names a secret key without revealing it: the first 16
// bytes of SHA-256 over its encoding, hex (a secret key has far more
// entropy than a preimage search could cover).
func keyFingerprint(sk *rlwe.SecretKey) (string, error) {
	b, err := sk.MarshalBinary()
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(append([]byte("rosemary vector key\x00"), b...))
	return hex.EncodeToString(h[:16]), nil
}
