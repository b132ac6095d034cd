package session

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// An LWE PIR database (package fhe/lwepir) is stored as
// "<gen>/lwe/t%06d": tile k, Rows × N bytes (as 8-byte little-endian words,
// so the stored bytes are the tile's) and "<gen>/lwe/d%06d": the hint
// diagonals of one giant step (b1 polys of the hint ring, NTT and
// Montgomery form), written at load and published with the generation.
func LWETilePrefix(gen string) string     { return objname.LWETiles(gen) }
func LWEDiagonalPrefix(gen string) string { return objname.LWEDiagonals(gen) }

// tileShape is the object shape of one tile: limbs of up to 1 MiB.
func tileShape(tileBytes int) object.Shape {
	limb := min(tileBytes, 1<<20)
	return object.Shape{Polys: 1, Limbs: tileBytes / limb, LogN: uint8(bits.Len(uint(limb/8)) - 1), WordSize: 8}
}

// LWELoader writes an LWE PIR database: records fill columns top to bottom,
// columns fill tiles; each full tile is uploaded and added to the hint, so
// the loader holds one tile and the hint's accumulators, never the database.
//
// The matrix's rows decide what the database costs beside its bytes (the
// stored hint is 32 KiB per row at the default parameters), so they follow
// its size (lwepir.NewShape). A loader that is not told the number of
// records (NewSizedLWELoader with no count, as for a stream) holds the
// first records, up to MaxPendingBytes, and chooses the rows when they are
// all in; only a larger database is laid out before its end, with the rows
// of its estimated size if it has one, else those the largest databases
// need.
type LWELoader struct {
	sink    ObjectSink
	gen     string
	p       lwepir.Params
	rows    int // 0 until chosen
	size    int
	seed    [lwepir.SeedSize]byte
	hb      *lwepir.HintBuilder
	tile    []byte
	pending []byte // records added before the rows were chosen
	// maxPending is MaxPendingBytes (tests lower it).
	maxPending int
	estimate   int // records expected, for a database past maxPending (0: none)
	records    int
	written    int64
}

// MaxPendingBytes bounds the records a loader of unknown size holds before
// it must choose its rows. A database beyond it gets its estimate's rows or,
// with none, one hint ciphertext's worth (what the largest databases get,
// whose hint builder holds about 200 MiB anyway).
const MaxPendingBytes = 64 << 20

// NewLWELoader starts a database of records of recordSize bytes whose
// matrix has rows rows (lwepir.NewShape's choice for the expected size).
func NewLWELoader(sink ObjectSink, gen string, p lwepir.Params, rows, recordSize int, seed [lwepir.SeedSize]byte) (*LWELoader, error) {
	l := &LWELoader{sink: sink, gen: gen, p: p, size: recordSize, seed: seed}
	return l, l.setRows(rows)
}

// NewSizedLWELoader starts a database of records of recordSize bytes whose
// rows lwepir.NewShape chooses: for count records if count > 0 (the number
// the caller will add), else for the number added (see LWELoader), estimate
// (> 0: the records expected, say from the input's bytes; 0: none) choosing
// them for a database past MaxPendingBytes.
func NewSizedLWELoader(sink ObjectSink, gen string, p lwepir.Params, recordSize int, seed [lwepir.SeedSize]byte, count, estimate int) (*LWELoader, error) {
	if count <= 0 {
		// Checked now rather than at the first record.
		if _, err := lwepir.NewShape(p, 1, recordSize); err != nil {
			return nil, err
		}
		return &LWELoader{sink: sink, gen: gen, p: p, size: recordSize, seed: seed, maxPending: MaxPendingBytes, estimate: max(0, estimate)}, nil
	}
	sh, err := lwepir.NewShape(p, count, recordSize)
	if err != nil {
		return nil, err
	}
	return NewLWELoader(sink, gen, p, sh.Rows, recordSize, seed)
}

// setRows fixes the matrix's rows and starts its first tile and its hint.
func (l *LWELoader) setRows(rows int) error {
	if err := (lwepir.Shape{Rows: rows, Cols: l.p.N(), RecordSize: l.size}).Validate(l.p); err != nil {
		return err
	}
	hb, err := lwepir.NewHintBuilder(l.p, rows, l.seed)
	if err != nil {
		return err
	}
	l.rows, l.hb, l.tile = rows, hb, make([]byte, rows*l.p.N())
	return nil
}

// Add appends one record (exactly the record size).
func (l *LWELoader) Add(ctx context.Context, rec []byte) error {
	if len(rec) != l.size {
		return fmt.Errorf("session: record of %d bytes, want %d", len(rec), l.size)
	}
	if l.rows == 0 {
		if len(l.pending)+len(rec) <= l.maxPending {
			l.pending = append(l.pending, rec...)
			return nil
		}
		if err := l.layOutPending(ctx, l.rowsPastPending()); err != nil {
			return err
		}
	}
	return l.place(ctx, rec)
}

// rowsPastPending is the rows of a database that outgrew the pending bound:
// NewShape's for the estimate, or for the records held if more; without an
// estimate, or if it asks more columns than decode, one hint ciphertext's
// worth of slots.
func (l *LWELoader) rowsPastPending() int {
	if l.estimate > 0 {
		if sh, err := lwepir.NewShape(l.p, max(l.estimate, len(l.pending)/l.size+1), l.size); err == nil {
			return sh.Rows
		}
	}
	return l.p.HintSlots()
}

// layOutPending chooses rows and places the records held so far.
func (l *LWELoader) layOutPending(ctx context.Context, rows int) error {
	if err := l.setRows(rows); err != nil {
		return err
	}
	pending := l.pending
	l.pending = nil
	for off := 0; off < len(pending); off += l.size {
		if err := l.place(ctx, pending[off:off+l.size]); err != nil {
			return err
		}
	}
	return nil
}

// place writes one record into the current tile, uploading it when full.
func (l *LWELoader) place(ctx context.Context, rec []byte) error {
	n := l.p.N()
	per := l.rows / l.size
	perTile := per * n
	pos := l.records % perTile
	col, row := pos/per, (pos%per)*l.size
	for i, b := range rec {
		l.tile[(row+i)*n+col] = b
	}
	l.records++
	if l.records%perTile == 0 {
		return l.flush(ctx)
	}
	return nil
}

func (l *LWELoader) flush(ctx context.Context) error {
	k := l.hb.Tiles()
	if bits.Len(uint((k+1)*l.p.N()-1)) > lwepir.MaxLogCols {
		return fmt.Errorf("session: %w: more than 2^%d columns", lwepir.ErrParams, lwepir.MaxLogCols)
	}
	sh := tileShape(len(l.tile))
	lb := sh.LimbBytes()
	raw := make([][]byte, sh.Limbs)
	for i := range raw {
		raw[i] = l.tile[i*lb : (i+1)*lb]
	}
	if err := l.sink(ctx, api.StoredObjectName(LWETilePrefix(l.gen), int64(k)), sh, raw); err != nil {
		return err
	}
	l.hb.AddTile(l.tile)
	l.written += int64(len(l.tile))
	clear(l.tile)
	return nil
}

// Records is the number of records added.
func (l *LWELoader) Records() int { return l.records + len(l.pending)/l.size }

// Finish uploads the last tile and the hint diagonals and returns the shape.
func (l *LWELoader) Finish(ctx context.Context) (lwepir.Shape, error) {
	if l.rows == 0 {
		if len(l.pending) == 0 {
			return lwepir.Shape{}, errors.New("session: no records")
		}
		sh, err := lwepir.NewShape(l.p, len(l.pending)/l.size, l.size)
		if err != nil {
			return lwepir.Shape{}, err
		}
		if err := l.layOutPending(ctx, sh.Rows); err != nil {
			return lwepir.Shape{}, err
		}
	}
	if l.records == 0 {
		return lwepir.Shape{}, errors.New("session: no records")
	}
	per := l.rows / l.size
	if l.records%(per*l.p.N()) != 0 {
		if err := l.flush(ctx); err != nil {
			return lwepir.Shape{}, err
		}
	}
	shape := lwepir.Shape{Rows: l.rows, Cols: l.hb.Tiles() * l.p.N(), RecordSize: l.size}
	h := l.hb.Finish()
	b1 := shape.Layout(l.p).B1
	logN, q, _, _, err := l.p.HintRing()
	if err != nil {
		return shape, err
	}
	sh := object.Shape{Polys: b1, Limbs: len(q), LogN: uint8(logN), WordSize: 8}
	slots := l.p.HintSlots()
	raw := make([][]byte, b1*len(q))
	for i := range raw {
		raw[i] = make([]byte, 8*slots)
	}
	err = lwepir.EncodeDiagonals(l.p, shape, h, func(i int, words []uint64) error {
		j := i % b1
		for limb := range q {
			dst := raw[j*len(q)+limb]
			for c, w := range words[limb*slots : (limb+1)*slots] {
				binary.LittleEndian.PutUint64(dst[8*c:], w)
			}
		}
		if j != b1-1 {
			return nil
		}
		l.written += sh.Bytes()
		return l.sink(ctx, api.StoredObjectName(LWEDiagonalPrefix(l.gen), int64(i/b1)), sh, raw)
	})
	return shape, err
}

// Written is the bytes uploaded so far (tiles and diagonals).
func (l *LWELoader) Written() int64 { return l.written }

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
}

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

// SeededLWERecord is record index of a seeded synthetic database: bytes of
// a ChaCha8 stream keyed by the seed and the index, so a benchmark checks
// any record without keeping the database.
func SeededLWERecord(seed uint64, index, size int) []byte {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	binary.LittleEndian.PutUint64(key[8:], uint64(index))
	copy(key[16:], "lwe-record")
	rec := make([]byte, size)
	rand.NewChaCha8(key).Read(rec)
	return rec
}

// WriteSeededLWE writes records seeded records of size bytes as an LWE
// database generation gen of the given rows: tiles, then hint diagonals.
// progress, if set, gets the records written and the total.
func WriteSeededLWE(ctx context.Context, sink ObjectSink, gen string, p lwepir.Params, rows, records, size int, seed uint64,
	lweSeed [lwepir.SeedSize]byte, progress func(done, total int64)) (lwepir.Shape, int64, error) {
	l, err := NewLWELoader(sink, gen, p, rows, size, lweSeed)
	if err != nil {
		return lwepir.Shape{}, 0, err
	}
	for i := 0; i < records; i++ {
		if err := l.Add(ctx, SeededLWERecord(seed, i, size)); err != nil {
			return lwepir.Shape{}, 0, err
		}
		if progress != nil && i%65536 == 0 {
			progress(int64(i), int64(records))
		}
	}
	shape, err := l.Finish(ctx)
	return shape, l.Written(), err
}
