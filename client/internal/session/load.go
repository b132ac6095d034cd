package session

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// An LWE PIR database (package fhe/lwepir) is stored as
// "<gen>/lwe/t%06d": tile k, Rows × N bytes (as 8-byte little-endian words,
// so the stored bytes are the tile's) and "<gen>/lwe/d%06d": the hint
// diagonals of one giant step (b1 polys of the hint ring, NTT and
// Montgomery form), written at load and published with the generation,
// and "<gen>/lwe/p%06d": the packed mode's precomputation
// (objname.LWEPacker), from the same hint.
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
	// packer: Finish also stores the packed mode's precomputation
	// (StorePacker); packerWritten: its objects' bytes, not in written.
	packer        bool
	packerWritten int64
	// noDiagonals: Finish stores no hint diagonals (SkipDiagonals).
	noDiagonals bool
	// logCols: the layout aims below 2^logCols columns, with at most
	// maxRows rows (lwepir.NewShapeRows).
	logCols, maxRows int
}

// MaxPendingBytes bounds the records a loader of unknown size holds before
// it must choose its rows. A database beyond it gets its estimate's rows or,
// with none, one hint ciphertext's worth (what the largest databases get,
// whose hint builder holds about 200 MiB anyway).
const MaxPendingBytes = 64 << 20

// NewLWELoader starts a database of records of recordSize bytes whose
// matrix has rows rows (lwepir.NewShape's choice for the expected size).
func NewLWELoader(sink ObjectSink, gen string, p lwepir.Params, rows, recordSize int, seed [lwepir.SeedSize]byte) (*LWELoader, error) {
	l := &LWELoader{sink: sink, gen: gen, p: p, size: recordSize, seed: seed, logCols: lwepir.TargetLogCols, maxRows: p.HintSlots()}
	return l, l.setRows(rows)
}

// NewSizedLWELoader starts a database of records of recordSize bytes whose
// rows lwepir.NewShape chooses: for count records if count > 0 (the number
// the caller will add), else for the number added (see LWELoader), estimate
// (> 0: the records expected, say from the input's bytes; 0: none) choosing
// them for a database past MaxPendingBytes.
func NewSizedLWELoader(sink ObjectSink, gen string, p lwepir.Params, recordSize int, seed [lwepir.SeedSize]byte, count, estimate int) (*LWELoader, error) {
	return NewSizedLWELoaderCols(sink, gen, p, recordSize, seed, count, estimate, lwepir.TargetLogCols, p.HintSlots())
}

// NewSizedLWELoaderCols is NewSizedLWELoader with the layout aiming below
// 2^logCols columns with at most maxRows rows (lwepir.NewShapeRows): a
// shorter query, more rows. Past p.HintSlots() rows the generation must be
// written without hint diagonals (SkipDiagonals): Finish refuses it
// otherwise.
func NewSizedLWELoaderCols(sink ObjectSink, gen string, p lwepir.Params, recordSize int, seed [lwepir.SeedSize]byte, count, estimate, logCols, maxRows int) (*LWELoader, error) {
	if count <= 0 {
		// Checked now rather than at the first record.
		if _, err := lwepir.NewShapeRows(p, 1, recordSize, logCols, maxRows); err != nil {
			return nil, err
		}
		return &LWELoader{sink: sink, gen: gen, p: p, size: recordSize, seed: seed, maxPending: MaxPendingBytes, estimate: max(0, estimate),
			logCols: logCols, maxRows: maxRows}, nil
	}
	sh, err := lwepir.NewShapeRows(p, count, recordSize, logCols, maxRows)
	if err != nil {
		return nil, err
	}
	l, err := NewLWELoader(sink, gen, p, sh.Rows, recordSize, seed)
	if l != nil {
		l.logCols, l.maxRows = logCols, maxRows
	}
	return l, err
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
		if sh, err := lwepir.NewShapeRows(l.p, max(l.estimate, len(l.pending)/l.size+1), l.size, l.logCols, l.maxRows); err == nil {
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

// Finish uploads the last tile, the hint diagonals (unless SkipDiagonals)
// and the packer (if StorePacker) and returns the shape.
func (l *LWELoader) Finish(ctx context.Context) (lwepir.Shape, error) {
	if l.rows == 0 {
		if len(l.pending) == 0 {
			return lwepir.Shape{}, errors.New("session: no records")
		}
		sh, err := lwepir.NewShapeRows(l.p, len(l.pending)/l.size, l.size, l.logCols, l.maxRows)
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
	if l.noDiagonals {
		if !l.packer {
			return shape, errors.New("session: a generation with neither the hint diagonals nor the packer answers no query")
		}
		return shape, l.writePacker(ctx, shape, h)
	}
	if shape.Rows > l.p.HintSlots() {
		return shape, fmt.Errorf("session: %w: hint diagonals for %d rows (at most %d; a taller generation is packed only)", lwepir.ErrParams, shape.Rows, l.p.HintSlots())
	}
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
	if err != nil || !l.packer {
		return shape, err
	}
	return shape, l.writePacker(ctx, shape, h)
}

// StorePacker makes Finish store the packed mode's precomputation beside
// the diagonals (objname.LWEPacker), so that the generation can be queried
// in either mode.
func (l *LWELoader) StorePacker() { l.packer = true }

// SkipDiagonals makes Finish store no hint diagonals: the generation then
// answers only packed queries (with StorePacker, which it needs), and
// stores 64 MiB a pack of 2048 rows less at the default parameters.
func (l *LWELoader) SkipDiagonals() { l.noDiagonals = true }

// PackedOnly is StorePacker and SkipDiagonals: the generation is queried
// in the packed mode only.
func (l *LWELoader) PackedOnly() { l.StorePacker(); l.SkipDiagonals() }

// writePacker stores the packed mode's precomputation (lwepir.NewPacker on
// the same hint as the diagonals) as objname.LWEPacker describes: beside
// the diagonals, so that both the ring stage and the packed mode can
// answer the generation's queries.
func (l *LWELoader) writePacker(ctx context.Context, shape lwepir.Shape, h []uint32) error {
	pk, err := lwepir.NewPacker(ctx, l.p, shape, l.seed, h)
	if err != nil {
		return err
	}
	n := l.p.N()
	var polys [][]byte
	j := int64(0)
	flush := func() error {
		if len(polys) == 0 {
			return nil
		}
		sh := object.Shape{Polys: 1, Limbs: len(polys), LogN: uint8(bits.Len(uint(n)) - 1), WordSize: 8}
		if err := l.sink(ctx, api.StoredObjectName(objname.LWEPacker(l.gen), j), sh, polys); err != nil {
			return err
		}
		l.packerWritten += sh.Bytes()
		j++
		polys = nil
		return nil
	}
	add := func(words func(c int) uint64) error {
		b := make([]byte, 8*n)
		for c := range n {
			binary.LittleEndian.PutUint64(b[8*c:], words(c))
		}
		polys = append(polys, b)
		if len(polys) == objname.LWEPackerLimbs {
			return flush()
		}
		return nil
	}
	for k := range pk.Packs() {
		f := pk.Factors(k)
		for off := 0; off < len(f); off += n {
			if err := add(func(c int) uint64 { return f[off+c] }); err != nil {
				return err
			}
		}
		a := pk.AParts(k)
		if err := add(func(c int) uint64 { return uint64(a[c]) }); err != nil {
			return err
		}
	}
	return flush()
}

// Written is the bytes uploaded so far of tiles and diagonals (what
// lwepir.Shape.StoredBytes counts, less the diagonals if skipped).
func (l *LWELoader) Written() int64 { return l.written }

// PackerWritten is the bytes uploaded of the packed mode's precomputation,
// beside Written: 96 MiB a pack of N rows at the default parameters.
func (l *LWELoader) PackerWritten() int64 { return l.packerWritten }

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
// database generation gen of the given rows: tiles, then hint diagonals and
// the packer's precomputation.
// progress, if set, gets the records written and the total.
func WriteSeededLWE(ctx context.Context, sink ObjectSink, gen string, p lwepir.Params, rows, records, size int, seed uint64,
	lweSeed [lwepir.SeedSize]byte, progress func(done, total int64)) (lwepir.Shape, int64, error) {
	l, err := NewLWELoader(sink, gen, p, rows, size, lweSeed)
	if err != nil {
		return lwepir.Shape{}, 0, err
	}
	l.StorePacker() // benchmarks query in either mode
	if rows > p.HintSlots() {
		l.SkipDiagonals() // past the hint's slots a generation is packed only
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
