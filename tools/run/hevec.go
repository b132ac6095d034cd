package run

import (
	"fmt"
	"math"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"

	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/optiprime/model"
	"github.com/rosemary-fhe/rosemary/rise/edge"
)

// NNAnswer is the outcome of one encrypted nearest-neighbour query.
type NNAnswer struct {
	Query          int     `json:"query_image"`
	QueryLabel     int     `json:"query_label"`
	Neighbor       int     `json:"neighbor"`
	NeighborLabel  int     `json:"neighbor_label"`
	PlainNeighbor  int     `json:"plaintext_neighbor"`
	Score          float64 `json:"score"`
	MaxScoreError  float64 `json:"max_score_error"`
	EdgeEncrypted  bool    `json:"edge_encrypted"`
	QueryCipherLen int64   `json:"query_ciphertext_bytes"`
}

// hevecShape is the database the hevec run searches: MNIST images (784
// pixels padded to 1024 coefficients, 4 per N=4096 plaintext) with the
// scores of 256 plaintexts packed into each returned ciphertext.
func hevecShape(vectors int) workload.HEVECShape {
	return workload.HEVECShape{Name: "hevec-run", Params: "hevec", Vectors: int64(vectors), Dim: 1024, Pack: 256}
}

// hevecData searches the first vectors images of the embedded MNIST
// training subset for the test image nearest (by cosine) to the query.
type hevecData struct {
	codec   *workload.HEVECCodec
	params  ckks.Parameters
	db      [][]float64
	labels  []uint8
	queries model.Dataset
	next    int
	// edge, when set, encrypts the query with the RISE edge encryptor
	// instead of Lattigo's.
	edgeCtx *edge.Context
	edgeEnc *edge.Encryptor
	last    NNAnswer
}

func unitVector(img []byte) []float64 {
	v := make([]float64, len(img))
	var n float64
	for i, p := range img {
		v[i] = float64(p)
		n += v[i] * v[i]
	}
	if n > 0 {
		n = math.Sqrt(n)
		for i := range v {
			v[i] /= n
		}
	}
	return v
}

func newHEVECData(params ckks.Parameters, sk *rlwe.SecretKey, vectors int, useEdge bool, firstQuery int) (*hevecData, error) {
	train, err := model.TrainSubset()
	if err != nil {
		return nil, err
	}
	if vectors < 1 || vectors > len(train.Images) {
		return nil, fmt.Errorf("run: hevec database of %d vectors outside [1, %d]", vectors, len(train.Images))
	}
	test, err := model.TestSubset()
	if err != nil {
		return nil, err
	}
	codec, err := workload.NewHEVECCodec(hevecShape(vectors), params, 26)
	if err != nil {
		return nil, err
	}
	d := &hevecData{codec: codec, params: params, queries: test, next: firstQuery % len(test.Images)}
	for i := 0; i < vectors; i++ {
		d.db = append(d.db, unitVector(train.Images[i]))
		d.labels = append(d.labels, train.Labels[i])
	}
	if useEdge {
		// The edge device gets the server's public key once, converted.
		p := edge.Params{Name: "server-hevec", N: params.N(), Q: params.Q(), LogScale: int(math.Round(params.DefaultScale().Log2())),
			Source: "the server's hevec preset primes"}
		ctx, err := edge.NewContext(p)
		if err != nil {
			return nil, fmt.Errorf("run: edge context: %w", err)
		}
		pk := rlwe.NewKeyGenerator(params).GenPublicKeyNew(sk)
		epk, err := ctx.ImportPublicKey(pk.Value[0].Q.Coeffs, pk.Value[1].Q.Coeffs, true)
		if err != nil {
			return nil, fmt.Errorf("run: edge public key: %w", err)
		}
		if d.edgeEnc, err = edge.NewEncryptor(ctx, epk); err != nil {
			return nil, err
		}
		d.edgeCtx = ctx
	}
	return d, nil
}

func (d *hevecData) stored() map[string][]*rlwe.Plaintext {
	pts, err := d.codec.Database(d.db)
	if err != nil {
		panic(err) // shapes were checked in newHEVECData
	}
	return pts
}

// The monomials are public constants of the packing tree.
func (d *hevecData) constant(name string) bool { return len(name) > 8 && name[:8] == "monomial" }

func (d *hevecData) query(enc *rlwe.Encryptor) (map[string][]engine.Value, func(*rlwe.Decryptor, map[string][]engine.Value) error, error) {
	qi := d.next
	d.next = (d.next + 1) % len(d.queries.Images)
	q := unitVector(d.queries.Images[qi])
	var ct *rlwe.Ciphertext
	if d.edgeEnc != nil {
		// HEVEC's reversed query q_0 − Σ_{k≥1} q_k X^{N−k}, encrypted on the edge.
		n := d.params.N()
		coeffs := make([]float64, n)
		coeffs[0] = q[0]
		for k := 1; k < len(q); k++ {
			coeffs[n-k] = -q[k]
		}
		ect := d.edgeCtx.NewCiphertext()
		if err := d.edgeEnc.EncryptCoeffs(coeffs, d.params.DefaultScale().Float64(), ect); err != nil {
			return nil, nil, err
		}
		ct = ckks.NewCiphertext(d.params, 1, d.params.MaxLevel())
		for i := range ect.C0 {
			copy(ct.Value[0].Coeffs[i], ect.C0[i])
			copy(ct.Value[1].Coeffs[i], ect.C1[i])
		}
		ct.Scale = rlwe.NewScale(ect.Scale)
		ct.IsBatched = false
	} else {
		pt, err := d.codec.Query(q)
		if err != nil {
			return nil, nil, err
		}
		if ct, err = enc.EncryptNew(pt); err != nil {
			return nil, nil, err
		}
	}
	ans := NNAnswer{Query: qi, QueryLabel: int(d.queries.Labels[qi]), EdgeEncrypted: d.edgeEnc != nil,
		QueryCipherLen: int64(2*len(ct.Value[0].Coeffs)*d.params.N()) * engine.WordBytes}
	check := func(dec *rlwe.Decryptor, out map[string][]engine.Value) error {
		var pts []*rlwe.Plaintext
		for _, v := range out["scores"] {
			if v.Ct == nil {
				return fmt.Errorf("run: hevec: a score result is not a ciphertext")
			}
			pts = append(pts, dec.DecryptNew(v.Ct))
		}
		got, err := d.codec.Scores(pts, len(d.db))
		if err != nil {
			return err
		}
		best, plain := 0, 0
		var bestPlain float64 = -2
		for i, x := range d.db {
			var want float64
			for k := range x {
				want += x[k] * q[k]
			}
			ans.MaxScoreError = math.Max(ans.MaxScoreError, math.Abs(got[i]-want))
			if got[i] > got[best] {
				best = i
			}
			if want > bestPlain {
				plain, bestPlain = i, want
			}
		}
		ans.Neighbor, ans.NeighborLabel, ans.PlainNeighbor, ans.Score = best, int(d.labels[best]), plain, got[best]
		d.last = ans
		if ans.MaxScoreError > 1e-3 {
			return fmt.Errorf("run: hevec: score error %.2g exceeds 1e-3", ans.MaxScoreError)
		}
		if best != plain {
			return fmt.Errorf("run: hevec: nearest neighbour %d, plaintext says %d", best, plain)
		}
		return nil
	}
	return map[string][]engine.Value{"query": {{Ct: ct}}}, check, nil
}
