package session

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// LWESession queries one LWE PIR database generation. Safe for concurrent
// use.
type LWESession struct {
	Params lwepir.Params
	Shape  lwepir.Shape
	// SetupBytes are the payload bytes of the key uploads.
	SetupBytes atomic.Int64

	dev    api.Device
	gen    string
	sk     *lwepir.SecretKey
	keyDir string // the prefix of the secret's Galois keys
	client *lwepir.Client
	// mu guards client: its encryptor and decryptor keep buffers. Only the
	// client's own steps hold it, so queries of one session overlap on
	// the device (whose scans of waiting queries share a pass).
	mu sync.Mutex
	// prep makes sure the program and the keys are on the device; ready
	// says it did, in this session.
	prep  sync.Mutex
	ready atomic.Bool
	// packed: the packed mode (NewPackedLWESession), no Galois keys.
	packed bool
	// batch: the most queries one packed request may carry (AllowBatches;
	// 1: one a request).
	batch int
}

// NewPackedLWESession opens a session of the packed mode on the database
// generation stored under gen (one whose load stored the packer's
// precomputation, objname.LWEPacker): each query carries its own packing
// keys (lwepir.PackedQuery, about 380 KB at the default parameters) and the
// device packs its answer (about 9.5 KB) instead of evaluating H·s. Nothing
// is stored on the device for it: no key upload, no ring secret.
func NewPackedLWESession(dev api.Device, gen string, p lwepir.Params, shape lwepir.Shape, seed [lwepir.SeedSize]byte) (*LWESession, error) {
	cl, err := lwepir.NewPackedClient(p, shape, seed)
	if err != nil {
		return nil, err
	}
	s := &LWESession{Params: p, Shape: shape, dev: dev, gen: gen, client: cl, packed: true, batch: 1}
	s.ready.Store(true)
	return s, nil
}

// Packed reports whether the session queries in the packed mode.
func (s *LWESession) Packed() bool { return s.packed }

// AllowBatches lets the packed mode's requests carry up to max queries
// (the device's wire version is api.BatchWireVersion or later), fewer where
// their bytes would not fit api.MaxMessageBytes with room to spare.
func (s *LWESession) AllowBatches(n int) {
	if !s.packed {
		return
	}
	per := 4*s.Shape.Cols + lwepir.PackingKeysBytes(s.Params) + 64
	s.batch = max(1, min(n, api.MaxPackedBatch, (api.MaxMessageBytes/2)/per))
}

// Batch is the most queries one request of the session carries (GetMany).
func (s *LWESession) Batch() int { return max(1, s.batch) }

// NewLWESession opens a session on the database generation stored under
// gen, with the client's evaluation keys under keyPrefix. Unless
// assumeReady, it uploads the keys the device lacks now; with assumeReady
// (the caller knows it did so before, from another process), it sends
// nothing until a query, and uploads them only if the device answers that
// query NotFound (a key it lost).
func NewLWESession(ctx context.Context, dev api.Device, gen string, p lwepir.Params, shape lwepir.Shape, seed [lwepir.SeedSize]byte,
	sk *lwepir.SecretKey, keyPrefix string, assumeReady bool) (*LWESession, error) {
	cl, err := lwepir.NewClient(p, shape, seed, sk)
	if err != nil {
		return nil, err
	}
	fp, err := sk.Fingerprint()
	if err != nil {
		return nil, err
	}
	// Keys are stored per rotation under the secret's fingerprint, shared
	// by every database of the member's key set that uses the rotation.
	s := &LWESession{Params: p, Shape: shape, dev: dev, gen: gen, sk: sk, keyDir: objname.LWEKeys(keyPrefix, fp), client: cl}
	if assumeReady {
		return s, nil
	}
	return s, s.prepare(ctx)
}

// Ready reports whether the session has stored its keys on the device (or
// found them there).
func (s *LWESession) Ready() bool { return s.ready.Load() }

// prepare uploads the Galois keys the device does not hold (the device
// builds the answer program of the shape itself: QueryLWE).
func (s *LWESession) prepare(ctx context.Context) error {
	s.prep.Lock()
	defer s.prep.Unlock()
	if s.ready.Load() {
		return nil
	}
	have, err := s.dev.List(ctx, &devicepb.ListRequest{Prefix: s.keyDir})
	if err != nil {
		return err
	}
	stored := map[string]bool{}
	for _, o := range have.Objects {
		stored[o.Name] = true
	}
	var missing []int
	for _, r := range s.Shape.Layout(s.Params).Rotations() {
		if !stored[objname.RotationKey(s.keyDir, r)] {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		evk, err := s.sk.EvalKeys(s.Params, missing)
		if err != nil {
			return err
		}
		for _, r := range missing {
			b, err := lwepir.MarshalGaloisKey(evk.Rotations[r])
			if err != nil {
				return err
			}
			if _, err := s.dev.Put(ctx, lweKeyPut(objname.RotationKey(s.keyDir, r), b)); err != nil {
				return fmt.Errorf("session: storing evaluation keys: %w", err)
			}
			s.SetupBytes.Add(int64(len(b)))
		}
	}
	s.ready.Store(true)
	return nil
}

// query asks one query of the typed PIR service; a session that assumed
// its keys were on the device uploads the missing ones and asks again if
// the device lacks one (NotFound).
func (s *LWESession) query(ctx context.Context, req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
	// Whether the keys were known there when the query left: a query that
	// raced the preparation of another is asked again too.
	wasReady := s.ready.Load()
	resp, err := s.dev.QueryLWE(ctx, req)
	if err == nil || wasReady || !isNotFound(err) {
		return resp, err
	}
	if err := s.prepare(ctx); err != nil {
		return nil, err
	}
	return s.dev.QueryLWE(ctx, req)
}

// ErrMalformedAnswer: the device's answer to a query does not have the
// shape the query asks for, or does not decode. It comes from the device,
// so the client treats it as a failed answer (fatal for the query key).
var ErrMalformedAnswer = errors.New("malformed answer")

// Get retrieves record index. The device sees a fresh LWE vector and a
// fresh encryption, whatever the index.
func (s *LWESession) Get(ctx context.Context, index int) (*PIRQuery, error) {
	start := time.Now()
	col, err := s.client.Column(index)
	if err != nil {
		return nil, err
	}
	if s.packed {
		return s.getPacked(ctx, start, index, col)
	}
	s.mu.Lock()
	q, st, err := s.client.Query(col)
	s.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("session: query %d: %w", index, err)
	}
	req := &devicepb.LWEQueryRequest{Params: s.Params.Name(), Rows: uint32(s.Shape.Rows), Cols: uint64(s.Shape.Cols),
		RecordSize: uint32(s.Shape.RecordSize), Generation: s.gen, Keys: s.keyDir,
		Query: lwepir.MarshalWords(q.Vector), Secret: lwepir.MarshalCiphertext(q.Secret)}
	wire := &api.WireCount{}
	resp, err := s.query(api.WithWireCount(ctx, wire), req)
	if err != nil {
		return nil, fmt.Errorf("session: query %d: %w", index, err)
	}
	ans, dev, err := s.answer(resp)
	if err != nil {
		return nil, fmt.Errorf("session: query %d: %w: %w", index, ErrMalformedAnswer, err)
	}
	s.mu.Lock()
	column, err := s.client.Decode(st, ans)
	s.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("session: query %d: %w: %w", index, ErrMalformedAnswer, err)
	}
	rec, err := s.client.Record(column, index)
	if err != nil {
		return nil, err
	}
	out := &PIRQuery{Index: index, Record: rec, QueryBytes: int64(len(req.Query) + len(req.Secret)),
		AnswerBytes: answerBytes(resp), Seconds: time.Since(start).Seconds(), Device: dev}
	out.Measure(wire)
	return out, nil
}

// answer reads the device's answer: a column of the shape's rows and one
// hint ciphertext per the layout's outputs, nothing more, each decoded with
// its length and coefficients checked; and what the device reports of its
// work.
func (s *LWESession) answer(resp *devicepb.LWEQueryResponse) (*lwepir.Answer, *devicepb.RunStreamResponse, error) {
	col, err := lwepir.UnmarshalWords(resp.GetColumn(), s.Shape.Rows)
	if err != nil {
		return nil, nil, err
	}
	want := s.Shape.HintCiphertexts(s.Params)
	if len(resp.GetHint()) != want {
		return nil, nil, fmt.Errorf("%d hint ciphertexts, want %d", len(resp.GetHint()), want)
	}
	ans := &lwepir.Answer{Column: col}
	for _, b := range resp.GetHint() {
		ct, err := lwepir.UnmarshalHint(s.Params, b)
		if err != nil {
			return nil, nil, err
		}
		ans.Hint = append(ans.Hint, ct)
	}
	if err := api.CheckCoreUses(resp.GetCores()); err != nil {
		return nil, nil, err
	}
	return ans, &devicepb.RunStreamResponse{Seconds: resp.GetSeconds(), StoreBytes: resp.GetStoreBytes(), Cores: resp.GetCores()}, nil
}

// answerBytes is an answer's payload: its column and hint ciphertexts.
func answerBytes(resp *devicepb.LWEQueryResponse) int64 {
	n := int64(len(resp.GetColumn()))
	for _, h := range resp.GetHint() {
		n += int64(len(h))
	}
	return n
}

// lweKeyPut is the Put of an encoded Galois key: a key object of 64 KiB
// limbs of little-endian words, zero-padded (the device knows the key's
// size from the parameters).
func lweKeyPut(name string, b []byte) *devicepb.PutRequest {
	const limbWords = 1 << 13
	limbs := (len(b) + 8*limbWords - 1) / (8 * limbWords)
	padded := make([]byte, limbs*8*limbWords)
	copy(padded, b)
	raw := make([][]byte, limbs)
	for l := range raw {
		raw[l] = padded[l*8*limbWords : (l+1)*8*limbWords]
	}
	return api.PutRaw(name, object.KindKey, object.Shape{Polys: 1, Limbs: limbs, LogN: 13, WordSize: 8}, raw)
}

// getPacked is Get in the packed mode: the query vector and its packing
// keys up, the packed answer down, checked for its exact size before it is
// decoded.
func (s *LWESession) getPacked(ctx context.Context, start time.Time, index, col int) (*PIRQuery, error) {
	pq, err := s.packedQuery(index, col)
	if err != nil {
		return nil, err
	}
	req := s.packedRequest(pq)
	wire := &api.WireCount{}
	resp, err := s.dev.QueryLWE(api.WithWireCount(ctx, wire), req)
	if err != nil {
		return nil, fmt.Errorf("session: query %d: %w", index, err)
	}
	return s.openPacked(pq, resp, resp.GetPacked(), 1, start, wire)
}

// packed is one packed query as sent, and what decodes its answer.
type packed struct {
	index        int
	vector, keys []byte
	st           *lwepir.State
}

// packedQuery builds the packed query of record index, in column col.
// The packed mode's client keeps no buffers between calls (unlike the
// ring mode's encryptor and decryptor): queries are built concurrently.
func (s *LWESession) packedQuery(index, col int) (*packed, error) {
	q, st, err := s.client.PackedQuery(col)
	if err != nil {
		return nil, fmt.Errorf("session: query %d: %w", index, err)
	}
	keys, err := lwepir.MarshalPackingKeys(s.Params, q.Keys)
	if err != nil {
		return nil, fmt.Errorf("session: query %d: %w", index, err)
	}
	return &packed{index: index, vector: lwepir.MarshalQuery(s.Params, q.Vector), keys: keys, st: st}, nil
}

// packedRequest is the request of queries (the first in the request's own
// fields, the rest in more).
func (s *LWESession) packedRequest(queries ...*packed) *devicepb.LWEQueryRequest {
	req := &devicepb.LWEQueryRequest{Params: s.Params.Name(), Rows: uint32(s.Shape.Rows), Cols: uint64(s.Shape.Cols),
		RecordSize: uint32(s.Shape.RecordSize), Generation: s.gen, Query: queries[0].vector, PackingKeys: queries[0].keys}
	if s.Params.Packing > lwepir.PackV1 {
		req.Packing = uint32(s.Params.Packing) // a PackV1 request stays as wire 6 wrote it
	}
	for _, q := range queries[1:] {
		req.More = append(req.More, &devicepb.LWEPackedQuery{Query: q.vector, PackingKeys: q.keys})
	}
	return req
}

// openPacked decodes the answer raw to query pq, one of n in the request
// resp answered (the request's wire bytes and device time are shared
// evenly among them).
func (s *LWESession) openPacked(pq *packed, resp *devicepb.LWEQueryResponse, raw []byte, n int, start time.Time, wire *api.WireCount) (*PIRQuery, error) {
	ans, dev, err := s.packedAnswer(resp, raw)
	if err != nil {
		return nil, fmt.Errorf("session: query %d: %w: %w", pq.index, ErrMalformedAnswer, err)
	}
	column, err := s.client.DecodePacked(pq.st, ans)
	if err != nil {
		return nil, fmt.Errorf("session: query %d: %w: %w", pq.index, ErrMalformedAnswer, err)
	}
	rec, err := s.client.Record(column, pq.index)
	if err != nil {
		return nil, err
	}
	dev.Seconds /= float64(n)
	out := &PIRQuery{Index: pq.index, Record: rec, QueryBytes: int64(len(pq.vector) + len(pq.keys)),
		AnswerBytes: int64(len(raw)), Seconds: time.Since(start).Seconds(), Device: dev}
	out.Measure(wire)
	if out.Measured && n > 1 {
		out.QueryBytes, out.AnswerBytes = out.QueryBytes/int64(n), out.AnswerBytes/int64(n)
	}
	return out, nil
}

// GetMany retrieves records indices in one request (at most Batch of them;
// more than one only in the packed mode): the device scans for them in one
// pass and packs their answers in one pass over its factors. Each query is
// its own, with a fresh secret and fresh keys, built on every core; each
// answer is checked and decoded on its own, and the first that fails ends
// the call.
func (s *LWESession) GetMany(ctx context.Context, indices []int) ([]*PIRQuery, error) {
	if len(indices) == 1 {
		q, err := s.Get(ctx, indices[0])
		if err != nil {
			return nil, err
		}
		return []*PIRQuery{q}, nil
	}
	if len(indices) == 0 || len(indices) > s.Batch() {
		return nil, fmt.Errorf("session: %d queries in one request (1 to %d)", len(indices), s.Batch())
	}
	start := time.Now()
	qs := make([]*packed, len(indices))
	errs := make([]error, len(indices))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(indices)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(indices); i = int(next.Add(1) - 1) {
				col, err := s.client.Column(indices[i])
				if err != nil {
					errs[i] = err
					continue
				}
				qs[i], errs[i] = s.packedQuery(indices[i], col)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	wire := &api.WireCount{}
	resp, err := s.dev.QueryLWE(api.WithWireCount(ctx, wire), s.packedRequest(qs...))
	if err != nil {
		return nil, fmt.Errorf("session: queries of records %d…: %w", indices[0], err)
	}
	if len(resp.GetMorePacked()) != len(indices)-1 {
		return nil, fmt.Errorf("session: queries of records %d…: %w: %d answers to %d queries", indices[0], ErrMalformedAnswer,
			1+len(resp.GetMorePacked()), len(indices))
	}
	out := make([]*PIRQuery, len(indices))
	for i, pq := range qs {
		raw := resp.GetPacked()
		if i > 0 {
			raw = resp.GetMorePacked()[i-1]
		}
		if out[i], err = s.openPacked(pq, resp, raw, len(indices), start, wire); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// packedAnswer reads one of the device's packed answers, raw: exactly the
// packed bytes of the shape, in a response with no column and no hint.
func (s *LWESession) packedAnswer(resp *devicepb.LWEQueryResponse, raw []byte) (*lwepir.PackedAnswer, *devicepb.RunStreamResponse, error) {
	if len(resp.GetColumn()) != 0 || len(resp.GetHint()) != 0 {
		return nil, nil, errors.New("a packed answer with a column or a hint")
	}
	if want := lwepir.PackedAnswerBytes(s.Params, s.Shape); len(raw) != want {
		return nil, nil, fmt.Errorf("a packed answer of %d bytes, want %d", len(raw), want)
	}
	ans, err := lwepir.UnmarshalPackedAnswer(s.Params, s.Shape, raw)
	if err != nil {
		return nil, nil, err
	}
	if err := api.CheckCoreUses(resp.GetCores()); err != nil {
		return nil, nil, err
	}
	return ans, &devicepb.RunStreamResponse{Seconds: resp.GetSeconds(), StoreBytes: resp.GetStoreBytes(), Cores: resp.GetCores()}, nil
}
