package session

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/pir"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// PIRPerObject is the number of plaintexts per store object of a PIR
// database (the most polys an object holds).
const PIRPerObject = 255

// PIRTileRows is the height of the tiles a PIR database is stored in
// (api.TilePosition): the lanes of the device's multiply-accumulate
// loop, which reads a tile column by column.
const PIRTileRows = 8

// PIRPosition is the stored position of plaintext p.
func PIRPosition(shape pir.Shape, p int) int64 {
	return api.TilePosition(int64(p), int64(shape.Rows*shape.Cols), int64(shape.Cols), PIRTileRows)
}

// PIRPlaintextObject is where plaintext p of database db is stored: the
// object's name and the plaintext's poly within it.
func PIRPlaintextObject(db string, shape pir.Shape, p int) (string, int) {
	pos := PIRPosition(shape, p)
	return api.StoredObjectName(PIRPlaintextPrefix(db), pos/PIRPerObject), int(pos % PIRPerObject)
}

// PIRPlaintextPrefix is the object-name prefix of a database's plaintexts
// (object j holds plaintexts j·PIRPerObject … (j+1)·PIRPerObject − 1).
func PIRPlaintextPrefix(db string) string { return db + "/pt/" }

// WritePIRDatabase writes the Rows·Cols plaintexts of a database into
// sink through a PIRLoader (compact 2-byte words, tiles of PIRTileRows
// rows, PIRPerObject per object). block(p, buf) fills buf with the records
// of plaintext p (PerPlaintext·RecordSize bytes); the last plaintext's
// missing records are left out. progress, if not nil, gets the bytes
// written so far and the total. It returns the bytes of the database.
func WritePIRDatabase(ctx context.Context, sink ObjectSink, db string, shape pir.Shape, block func(p int, buf []byte) error,
	progress func(done, total int64)) (int64, error) {
	params, err := pirParameters(shape)
	if err != nil {
		return 0, err
	}
	total := int64(shape.Rows*shape.Cols) * int64(2*shape.N)
	var report func(int64)
	if progress != nil {
		report = func(done int64) { progress(done, total) }
	}
	l, err := NewPIRLoader(sink, db, params, shape.RecordSize, report)
	if err != nil {
		return 0, err
	}
	recs := make([]byte, shape.PerPlaintext*shape.RecordSize)
	for p := 0; p < shape.Plaintexts; p++ {
		clear(recs)
		if err := block(p, recs); err != nil {
			return 0, fmt.Errorf("session: records of plaintext %d: %w", p, err)
		}
		for k := 0; k < shape.PerPlaintext && p*shape.PerPlaintext+k < shape.Records; k++ {
			if err := l.Add(ctx, recs[k*shape.RecordSize:(k+1)*shape.RecordSize]); err != nil {
				return 0, err
			}
		}
	}
	got, n, err := l.Finish(ctx)
	if err != nil {
		return 0, err
	}
	if got != shape {
		return 0, fmt.Errorf("session: wrote a %+v database, want %+v", got, shape)
	}
	return n, nil
}

// pirParameters are the BGV parameters of the preset a shape's ring
// belongs to (bgv-13 for N = 2^13).
func pirParameters(shape pir.Shape) (bgv.Parameters, error) {
	for _, name := range []string{"bgv-13"} {
		pr, err := fhe.Lookup(name)
		if err != nil {
			return bgv.Parameters{}, err
		}
		if 1<<pr.LogN == shape.N {
			return pr.BGVParameters()
		}
	}
	return bgv.Parameters{}, fmt.Errorf("session: no PIR preset with N = %d", shape.N)
}

// ObjectSink stores one plaintext object of a database: its limbs as
// stored bytes (little-endian words of shape.WordSize bytes).
type ObjectSink func(ctx context.Context, name string, shape object.Shape, raw [][]byte) error

// DeviceSink uploads objects to a device (Put), keeping their word size.
func DeviceSink(dev api.Device) ObjectSink {
	return func(ctx context.Context, name string, shape object.Shape, raw [][]byte) error {
		if ws := shape.WordSize; ws != 2 && ws != 8 {
			return fmt.Errorf("session: upload of %d-byte words", ws)
		}
		_, err := dev.Put(ctx, api.PutRaw(name, object.KindPlaintext, shape, raw))
		return err
	}
}

// Options tune a session of a compiled program (package client/programs):
// where its evaluation keys live and where it scans.
type Options struct {
	// KeyPrefix names the evaluation keys' objects
	// (lower.KeyID.ObjectName(KeyPrefix)); default db + "/keys".
	KeyPrefix string
	// ReuseKeys keeps key objects already stored under KeyPrefix (the
	// device lists them): evaluation keys uploaded once, reused by later
	// sessions of the same secret key.
	ReuseKeys bool
	// FollowPlan places the scan where the compiler's plan puts it, which
	// for a small database may be the host: its plaintexts then cross from
	// the device on every query. By default the scan runs on the device,
	// where the database lives (see compiler.Plan.AllOnDevice).
	FollowPlan bool
}

// PIRQuery is one query's outcome.
type PIRQuery struct {
	Index  int
	Record []byte
	// QueryBytes and AnswerBytes are what crossed host↔device for this
	// query: counted on the gRPC connection (Measured), else, for an
	// in-process device, the ciphertext payloads (8 bytes per coefficient).
	QueryBytes, AnswerBytes int64
	Measured                bool
	// PayloadBytes is the query's and the answer's ciphertext payloads
	// together: the scheme's own figure, beside the measured one.
	PayloadBytes int64
	// PulledBytes: plaintext bytes the host read from the device (a plan
	// that scans on the host).
	PulledBytes int64
	Seconds     float64 // the whole query, client side
	// Device is what the device reported (nil for a host-side scan).
	Device *devicepb.RunStreamResponse
}

// ErrIndex is returned for a record index outside the database.
var ErrIndex = pir.ErrIndexOutOfRange

// Measure replaces the payload sizes with the bytes counted on the
// connection, when the device was reached through one.
func (q *PIRQuery) Measure(w *api.WireCount) {
	q.PayloadBytes = q.QueryBytes + q.AnswerBytes
	if w.Measured() {
		q.QueryBytes, q.AnswerBytes, q.Measured = w.Sent(), w.Received(), true
	}
}

// SeededRecords fills buf with the records of plaintext p of a database
// whose bytes come from a seeded ChaCha8 stream per plaintext: a database
// of any size that can be checked record by record without keeping it.
func SeededRecords(seed uint64) func(p int, buf []byte) error {
	return func(p int, buf []byte) error {
		var key [32]byte
		binary.LittleEndian.PutUint64(key[:], seed)
		binary.LittleEndian.PutUint64(key[8:], uint64(p))
		copy(key[16:], "rosemary-records")
		r := rand.NewChaCha8(key)
		_, err := r.Read(buf)
		return err
	}
}

// SeededRecord returns record index of a SeededRecords database.
func SeededRecord(seed uint64, shape pir.Shape, index int) ([]byte, error) {
	p, _, _, off, err := shape.Locate(index)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, shape.PerPlaintext*shape.RecordSize)
	if err := SeededRecords(seed)(p, buf); err != nil {
		return nil, err
	}
	return buf[off : off+shape.RecordSize], nil
}

// isNotFound reports a device's NotFound, in process or over gRPC.
func isNotFound(err error) bool {
	return errors.Is(err, api.ErrNotFound)
}

// Vectors is a vector database's shape as the client knows it: the
// preset, the vectors and their coefficients, and whether the database
// holds them encrypted (package client/programs lays them out).
type Vectors struct {
	Preset       string
	Count        int
	Coefficients int
	Encrypted    bool
}
