package client

import (
	"context"

	"github.com/rosemary-fhe/rosemary/client/internal/session"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
	"github.com/rosemary-fhe/rosemary/fhe/pir"
)

// The lower-level surface the benchmarks and the `rosemary run` harness
// use: a PIR database of synthetic (seeded) records written straight into
// a device or a store, a session on it, and where its plaintexts are
// stored. Applications use Client instead.

// PIRQuery is one PIR query's outcome: the record, the bytes that crossed
// and, for a device scan, what the device reported.
type PIRQuery = session.PIRQuery

// ObjectSink stores one plaintext object of a database being written: its
// limbs as stored bytes (little-endian words of shape.WordSize bytes). A
// store written before its device serves can be a sink too.
type ObjectSink = session.ObjectSink

// PIRTileRows is the height of the tiles a PIR database's plaintexts are
// stored in (api.TilePosition).
const PIRTileRows = session.PIRTileRows

// DeviceSink uploads a database's objects to dev (Put), keeping their
// word size.
func DeviceSink(dev api.Device) ObjectSink { return session.DeviceSink(dev) }

// WriteSeededPIR writes a PIR database of shape into sink under the name
// db, its records drawn from a seeded ChaCha8 stream per plaintext: a
// database of any size that can be checked record by record (SeededRecord)
// without keeping it. progress, if not nil, gets the bytes written so far
// and the total. It returns the bytes of the database.
func WriteSeededPIR(ctx context.Context, sink ObjectSink, db string, shape pir.Shape, seed uint64,
	progress func(done, total int64)) (int64, error) {
	return session.WritePIRDatabase(ctx, sink, db, shape, session.SeededRecords(seed), progress)
}

// SeededRecord returns record index of a WriteSeededPIR database.
func SeededRecord(seed uint64, shape pir.Shape, index int) ([]byte, error) {
	return session.SeededRecord(seed, shape, index)
}

// PIRPlaintextObject is where plaintext p of PIR database db is stored:
// the object's name and the plaintext's poly within it.
func PIRPlaintextObject(db string, shape pir.Shape, p int) (name string, poly int) {
	return session.PIRPlaintextObject(db, shape, p)
}

// LWESession is an LWE PIR database generation on a device, ready for
// queries: its evaluation keys stored.
type LWESession = session.LWESession

// SeededLWERecord is record index of a WriteSeededLWE database.
func SeededLWERecord(seed uint64, index, size int) []byte {
	return session.SeededLWERecord(seed, index, size)
}

// WriteSeededLWE writes an LWE PIR database generation gen of seeded
// synthetic records (SeededLWERecord) into sink: a matrix of rows rows,
// its tiles and hint diagonals. It returns the shape and bytes written.
func WriteSeededLWE(ctx context.Context, sink ObjectSink, gen string, p lwepir.Params, rows, records, size int, seed uint64,
	lweSeed [lwepir.SeedSize]byte, progress func(done, total int64)) (lwepir.Shape, int64, error) {
	return session.WriteSeededLWE(ctx, sink, gen, p, rows, records, size, seed, lweSeed, progress)
}

// NewPackedLWESession opens a packed-mode session on LWE database
// generation gen on dev (one stored with its packer, as WriteSeededLWE
// does): no keys stored, each query carries its packing keys.
func NewPackedLWESession(dev api.Device, gen string, p lwepir.Params, shape lwepir.Shape, seed [lwepir.SeedSize]byte) (*LWESession, error) {
	return session.NewPackedLWESession(dev, gen, p, shape, seed)
}

// NewLWESession opens a session on LWE database generation gen on dev with
// the ring secret sk; its evaluation keys are stored under keyPrefix.
func NewLWESession(ctx context.Context, dev api.Device, gen string, p lwepir.Params, shape lwepir.Shape, seed [lwepir.SeedSize]byte,
	sk *lwepir.SecretKey, keyPrefix string) (*LWESession, error) {
	return session.NewLWESession(ctx, dev, gen, p, shape, seed, sk, keyPrefix, false)
}
