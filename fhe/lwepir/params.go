package lwepir

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sync"

	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// Params fixes the two lattice schemes of the PIR. Shapes (how many rows and
// columns a database has) are separate: see Shape.
type Params struct {
	// LogN is log2 of the LWE dimension N: the length of the secret s and
	// the size of each negacyclic block of the public matrix A.
	LogN int
	// Eta is the centred binomial parameter of the LWE error: variance Eta/2.
	Eta int
	// HintLogN, HintLogQ, HintLogP and HintT define the BGV scheme that
	// computes H·s: ring degree, ciphertext primes, key-switching primes and
	// the plaintext modulus (a prime ≡ 1 mod 2^(HintLogN+1), above 2^(32+LogN)
	// so that H·s, with H centred modulo 2^32 and s ternary, never wraps).
	HintLogN int
	HintLogQ []int
	HintLogP []int
	HintT    uint64
	// Insecure marks parameter sets made small for tests.
	Insecure bool
	// Packing is the packed mode's gadget (PackVersion; zero reads as
	// PackV1). It is a database's, not the named set's: Name ignores it.
	Packing PackVersion
}

// Default is the production parameter set (128-bit security).
//
// LWE: N = 2048, q = 2^32, centred binomial error with η = 82 (σ = √41 ≈ 6.40,
// YPIR's width 16.04 = σ·√(2π)); ternary secret. The HE standard allows
// log q ≤ 54 at N = 2048 for 128 bits; 32 is well inside.
// BGV: N = 8192, log QP = 60+60+61 = 181 ≤ 218 (HE standard, 128 bits).
func Default() Params {
	return Params{LogN: 11, Eta: 82, HintLogN: 13, HintLogQ: []int{60, 60}, HintLogP: []int{61}, HintT: defaultHintT, Packing: PackLatest}
}

// Test is a small, insecure parameter set for tests: N = 256 and a ring of
// degree 1024. It exercises every code path of Default at a fraction of the cost.
func Test() Params {
	return Params{LogN: 8, Eta: 82, HintLogN: 10, HintLogQ: []int{60, 60}, HintLogP: []int{61}, HintT: testHintT, Insecure: true, Packing: PackLatest}
}

// Plaintext moduli found with ring.NewNTTFriendlyPrimesGenerator (checked by
// TestHintModulusIsNTTFriendlyPrime): primes ≡ 1 mod 2^(HintLogN+1) above
// 2^(33+LogN), the bound on |H·s| with margin.
const (
	defaultHintT uint64 = 17592186175489 // 2^44 + 8·16384 + 1
	testHintT    uint64 = 2199023265793  // 2^41 + 5·2048 + 1
)

// Byte-valued database entries: p = 2^8, Δ = q/p = 2^24.
const (
	logP     = 8
	logDelta = 32 - logP
	// centre is subtracted from every entry in the hint so the noise D·e is
	// that of entries in [-128, 128).
	centre = 1 << (logP - 1)
)

// MaxLogCols bounds a database's columns: SimplePIR's table gives p ≥ 294 at
// 2^20 columns (N ≥ 1024, q = 2^32, σ = 6.4), so bytes decode correctly up
// to there. The exact-integer hint computation needs 128·2^31·Cols < 2^60.
const MaxLogCols = 20

// ErrParams reports an invalid parameter set or shape.
var ErrParams = errors.New("lwepir: invalid parameters")

// N is the LWE dimension.
func (p Params) N() int { return 1 << p.LogN }

// HintSlots is the number of rows of H one BGV ciphertext carries.
func (p Params) HintSlots() int { return 1 << p.HintLogN }

// Validate checks the relations the scheme relies on.
func (p Params) Validate() error {
	if p.LogN < 4 || p.LogN > 12 || p.Eta < 2 || p.Eta > 128 {
		return fmt.Errorf("%w: LogN %d, Eta %d", ErrParams, p.LogN, p.Eta)
	}
	if p.HintLogN < p.LogN+1 || p.HintLogN > 15 {
		return fmt.Errorf("%w: the hint ring (2^%d) must hold N = 2^%d in each half", ErrParams, p.HintLogN, p.LogN)
	}
	if p.HintT>>(33+p.LogN) == 0 || p.HintT%(uint64(2)<<p.HintLogN) != 1 {
		return fmt.Errorf("%w: plaintext modulus %d", ErrParams, p.HintT)
	}
	if p.Packing > PackV3 {
		return fmt.Errorf("%w: packing version %d", ErrParams, p.Packing)
	}
	return nil
}

// hintParams returns the BGV parameters of the ring stage. Building them
// generates NTT tables and searches primes (a fifth of a device's CPU time
// when done per query), so they are built once per parameter set; the
// cache holds a few sets (the presets), and parameters beyond that are
// built each time rather than letting callers grow it.
func (p Params) hintParams() (bgv.Parameters, error) {
	key := fmt.Sprint(p.HintLogN, p.HintLogQ, p.HintLogP, p.HintT)
	hintCache.Lock()
	bp, ok := hintCache.params[key]
	hintCache.Unlock()
	if ok {
		return bp, nil
	}
	bp, err := bgv.NewParametersFromLiteral(bgv.ParametersLiteral{
		LogN: p.HintLogN, LogQ: p.HintLogQ, LogP: p.HintLogP, PlaintextModulus: p.HintT,
	})
	if err != nil {
		return bgv.Parameters{}, err
	}
	hintCache.Lock()
	if len(hintCache.params) < hintCacheEntries {
		hintCache.params[key] = bp
	}
	hintCache.Unlock()
	return bp, nil
}

const hintCacheEntries = 8

var hintCache = struct {
	sync.Mutex
	params map[string]bgv.Parameters
}{params: map[string]bgv.Parameters{}}

// lweRing is the ring Z_P[X]/(X^N+1) for one 61-bit NTT prime P: products
// of the public polynomials with s or with database rows are exact integers
// below 2^60 in absolute value, so they are computed there and then reduced
// modulo 2^32.
func (p Params) lweRing() (*ring.Ring, error) {
	g := ring.NewNTTFriendlyPrimesGenerator(61, uint64(2)<<p.LogN)
	prime, err := g.NextDownstreamPrime()
	if err != nil {
		return nil, err
	}
	return ring.NewRing(p.N(), []uint64{prime})
}

// Shape is how a database of records sits in the Rows×Cols byte matrix.
type Shape struct {
	Rows       int // entries per column: what one answer returns
	Cols       int // a multiple of N (one block of A per N columns)
	RecordSize int // bytes per record; a record lies inside one column
}

// RecordsPerColumn is how many records one column holds.
func (s Shape) RecordsPerColumn() int { return s.Rows / s.RecordSize }

// Records is the capacity of the matrix in records.
func (s Shape) Records() int { return s.RecordsPerColumn() * s.Cols }

// Tiles is how many column blocks of N columns the matrix has.
func (s Shape) Tiles(p Params) int { return s.Cols / p.N() }

// TileBytes is the size of one tile: Rows × N bytes, row-major.
func (s Shape) TileBytes(p Params) int { return s.Rows * p.N() }

// StoredBytes is what the database occupies in storage: its tiles and its
// hint diagonals (two 64-bit limbs per slot).
func (s Shape) StoredBytes(p Params) int64 {
	return int64(s.Tiles(p))*int64(s.TileBytes(p)) + int64(s.Layout(p).Diagonals())*int64(DiagonalWords(p))*8
}

// HintCiphertexts is how many BGV ciphertexts carry H·s.
func (s Shape) HintCiphertexts(p Params) int { return s.Layout(p).Outputs }

// Layout is how H·s is evaluated for a shape: GAZELLE's hybrid diagonal
// method (Juvekar, Vaikuntanathan, Chandrakasan; USENIX Security 2018) on
// the slots. The slots hold s in Groups blocks of N; each block evaluates R
// rows of H: R generalised diagonals, each diagonal d of the block holding
// H[row c mod R][(c+d) mod N] at column c, multiplied with s rotated by d,
// then the N/R partial sums of each row are added by rotations by R, 2R,
// …, N/2. So a database of few rows stores few diagonals: R plaintexts per
// output, not N.
type Layout struct {
	N, Slots, Groups int
	R                int // rows per block, a power of two ≤ N
	Outputs          int // hint ciphertexts
	B1, B2           int // baby and giant steps, B1·B2 = R
}

// Layout returns the evaluation layout of s under p.
func (s Shape) Layout(p Params) Layout {
	n, slots := p.N(), p.HintSlots()
	g := slots / n
	r := 1
	for r < n && r*g < s.Rows {
		r *= 2
	}
	b1 := 1 << ((bits.Len(uint(r)) - 1 + 1) / 2)
	return Layout{N: n, Slots: slots, Groups: g, R: r, Outputs: (s.Rows + g*r - 1) / (g * r), B1: b1, B2: r / b1}
}

// Diagonals is the number of stored plaintexts.
func (l Layout) Diagonals() int { return l.Outputs * l.R }

// Rotations are the column rotations the evaluation applies (each needs a
// Galois key), each once: 1 for baby steps, B1 for giant steps, then R, 2R,
// …, N/2 (at R = 1 or 2 the sums reuse the baby step's 1 or B1).
func (l Layout) Rotations() []int {
	var r []int
	add := func(k int) {
		if !slices.Contains(r, k) {
			r = append(r, k)
		}
	}
	if l.B1 > 1 {
		add(1)
	}
	if l.B2 > 1 {
		add(l.B1)
	}
	for k := l.R; k < l.N; k *= 2 {
		add(k)
	}
	return r
}

// row returns the row of H at slot v of output o, or -1 for a slot that
// carries no row (a partial sum or padding).
func (l Layout) slotRow(o, v int) int {
	half := l.Slots / 2
	r, c := v/half, v%half
	q := r*(half/l.N) + c/l.N
	return o*l.Groups*l.R + q*l.R + c%l.N%l.R
}

// resultSlot is where the evaluation leaves row i of H·s: output, slot.
func (l Layout) resultSlot(i int) (o, v int) {
	half := l.Slots / 2
	o, rem := i/(l.Groups*l.R), i%(l.Groups*l.R)
	q, k := rem/l.R, rem%l.R
	perRow := half / l.N
	return o, (q/perRow)*half + (q%perRow)*l.N + k
}

// NewShape chooses a matrix for records of recordSize bytes. What a shape
// costs beside the database: the stored hint, 16·N bytes per row (its
// diagonals: two 64-bit limbs per entry of H; a diagonal holds Groups
// rows, so fewer than Groups rows cost as much as Groups), and the query
// vector, 4 bytes per column. Rows is the smallest power of two that holds a
// record and Groups rows and keeps
//
//   - the query vector no larger than the stored hint (4·Cols ≤ 16·N·Rows,
//     Cols ≈ total/Rows: total ≤ 4·N·Rows²), so a small database stores a
//     hint of the order of the square root of its size rather than a
//     fixed one; and
//   - the columns at most 2^TargetLogCols (a 2 MiB query; the hint then adds
//     32 KiB per 512 KiB row, 6%), which decides above 32 MiB;
//
// and at most one hint ciphertext's worth of slots. Cols is a multiple of N.
func NewShape(p Params, records, recordSize int) (Shape, error) {
	return NewShapeCols(p, records, recordSize, TargetLogCols)
}

// NewShapeCols is NewShape aiming below 2^logCols columns instead of
// 2^TargetLogCols: fewer columns are a shorter query (4 bytes a column up)
// and more rows, one pack of N rows each to compute and download (for
// 1 GiB: 2^19 columns and 2048 rows, 2^17 and 8192).
func NewShapeCols(p Params, records, recordSize, logCols int) (Shape, error) {
	return NewShapeRows(p, records, recordSize, logCols, p.HintSlots())
}

// MaxPackedRows is the most rows NewShapeRows gives a generation answered
// in the packed mode only (a loader that writes no hint diagonals: the
// ring stage's layouts were sized and measured for HintSlots rows at
// most). A tile (Rows × N bytes) is one stored object written in one
// message of at most 64 MiB: 2·HintSlots rows make 32 MiB tiles at the
// default parameters.
func (p Params) MaxPackedRows() int { return 2 * p.HintSlots() }

// NewShapeRows is NewShapeCols with the rows allowed to grow to maxRows
// (HintSlots to MaxPackedRows; past HintSlots, for packed-only
// generations). At 8 GiB, 16,384 rows of 2^19 columns where HintSlots
// gives 8192 of 2^20: half the query, twice the packs.
func NewShapeRows(p Params, records, recordSize, logCols, maxRows int) (Shape, error) {
	if maxRows < p.HintSlots() || maxRows > p.MaxPackedRows() || maxRows&(maxRows-1) != 0 {
		return Shape{}, fmt.Errorf("%w: at most %d rows (%d to %d)", ErrParams, maxRows, p.HintSlots(), p.MaxPackedRows())
	}
	if logCols < p.LogN || logCols > MaxLogCols {
		return Shape{}, fmt.Errorf("%w: a target of 2^%d columns (2^%d to 2^%d)", ErrParams, logCols, p.LogN, MaxLogCols)
	}
	if err := p.Validate(); err != nil {
		return Shape{}, err
	}
	if records <= 0 || recordSize <= 0 || recordSize > p.HintSlots() {
		return Shape{}, fmt.Errorf("%w: %d records of %d bytes (records are at most %d bytes)", ErrParams, records, recordSize, p.HintSlots())
	}
	total := uint64(records) * uint64(recordSize)
	rows := max(p.HintSlots()/p.N(), 1<<bits.Len(uint(recordSize-1)))
	for rows < maxRows && (total > uint64(rows)<<logCols || total > 4*uint64(p.N())*uint64(rows)*uint64(rows)) {
		rows *= 2
	}
	perCol := rows / recordSize
	cols := (records + perCol - 1) / perCol
	cols = (cols + p.N() - 1) / p.N() * p.N()
	if bits.Len(uint(cols-1)) > MaxLogCols {
		return Shape{}, fmt.Errorf("%w: %d records of %d bytes need %d columns; at most 2^%d decode correctly", ErrParams, records, recordSize, cols, MaxLogCols)
	}
	return Shape{Rows: rows, Cols: cols, RecordSize: recordSize}, nil
}

// TargetLogCols is the column count NewShape aims below: 2^19 columns,
// a 2 MiB query vector.
const TargetLogCols = 19

// PackedTargetLogCols is the column target of a new generation answered
// in the packed mode only with PackV3: 2^18 columns, a query of 0.94 MB
// (28-bit words and two keys) where 2^19 send 1.86 MB. It doubles the
// packs (two of 2048 rows at 1 GiB), which PackV3 makes cheaper than the
// longer query's decoding: measured at 1 GiB (BENCHMARKS.md), device CPU
// 0.093–0.098 s a query at 2^18 columns against 0.104–0.114 at 2^19.
const PackedTargetLogCols = 18

// Validate checks a shape read from storage or the wire against p.
func (s Shape) Validate(p Params) error {
	n := p.N()
	if s.Rows <= 0 || s.Rows > 4*p.HintSlots() || s.Cols <= 0 || s.Cols%n != 0 || bits.Len(uint(s.Cols-1)) > MaxLogCols ||
		s.RecordSize <= 0 || s.RecordSize > s.Rows {
		return fmt.Errorf("%w: shape %d×%d, records of %d bytes", ErrParams, s.Rows, s.Cols, s.RecordSize)
	}
	return nil
}

// Locate returns the column of record r and its first row.
func (s Shape) Locate(r int) (col, row int) {
	per := s.RecordsPerColumn()
	return r / per, (r % per) * s.RecordSize
}

// ByName returns a named parameter set: "default" or "test".
func ByName(name string) (Params, error) {
	switch name {
	case "default":
		return Default(), nil
	case "test":
		return Test(), nil
	}
	return Params{}, fmt.Errorf("%w: no parameter set %q", ErrParams, name)
}

// Name is the name ByName knows p by ("" if none).
func (p Params) Name() string {
	for _, n := range []string{"default", "test"} {
		q, _ := ByName(n)
		q.Packing = p.Packing
		if fmt.Sprint(q) == fmt.Sprint(p) {
			return n
		}
	}
	return ""
}

// HintRing returns the ring of the BGV stage: degree, primes of Q and P,
// plaintext modulus.
func (p Params) HintRing() (logN int, q, pp []uint64, t uint64, err error) {
	bp, err := p.hintParams()
	if err != nil {
		return 0, nil, nil, 0, err
	}
	return bp.LogN(), bp.Q(), bp.P(), bp.PlaintextModulus(), nil
}
