package lwepir

import (
	"errors"
	"fmt"
	"math/bits"

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
}

// Default is the production parameter set (128-bit security).
//
// LWE: N = 2048, q = 2^32, centred binomial error with η = 82 (σ = √41 ≈ 6.40,
// YPIR's width 16.04 = σ·√(2π)); ternary secret. The HE standard allows
// log q ≤ 54 at N = 2048 for 128 bits; 32 is well inside.
// BGV: N = 8192, log QP = 60+60+61 = 181 ≤ 218 (HE standard, 128 bits).
func Default() Params {
	return Params{LogN: 11, Eta: 82, HintLogN: 13, HintLogQ: []int{60, 60}, HintLogP: []int{61}, HintT: defaultHintT}
}

// Test is a small, insecure parameter set for tests: N = 256 and a ring of
// degree 1024. It exercises every code path of Default at a fraction of the cost.
func Test() Params {
	return Params{LogN: 8, Eta: 82, HintLogN: 10, HintLogQ: []int{60, 60}, HintLogP: []int{61}, HintT: testHintT, Insecure: true}
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
	return nil
}

// hintParams returns the BGV parameters of the ring stage.
func (p Params) hintParams() (bgv.Parameters, error) {
	return bgv.NewParametersFromLiteral(bgv.ParametersLiteral{
		LogN: p.HintLogN, LogQ: p.HintLogQ, LogP: p.HintLogP, PlaintextModulus: p.HintT,
	})
}

// babyGiant splits the N diagonals into b1 baby steps and b2 giant steps.
func (p Params) babyGiant() (b1, b2 int) {
	b1 = 1 << ((p.LogN + 1) / 2)
	return b1, p.N() / b1
}

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

// HintCiphertexts is how many BGV ciphertexts carry H·s.
func (s Shape) HintCiphertexts(p Params) int { return (s.Rows + p.HintSlots() - 1) / p.HintSlots() }

// NewShape chooses a matrix for records of recordSize bytes: Rows is a power
// of two, at least the record size, about the square root of the database
// and at most one hint ciphertext's worth of slots, so that the query
// (Cols·4 bytes) and the answer stay balanced; Cols is a multiple of N.
func NewShape(p Params, records, recordSize int) (Shape, error) {
	if err := p.Validate(); err != nil {
		return Shape{}, err
	}
	if records <= 0 || recordSize <= 0 || recordSize > p.HintSlots() {
		return Shape{}, fmt.Errorf("%w: %d records of %d bytes (records are at most %d bytes)", ErrParams, records, recordSize, p.HintSlots())
	}
	total := uint64(records) * uint64(recordSize)
	rows := 1 << ((bits.Len64(total-1) + 1) / 2)
	rows = max(rows, 1<<bits.Len(uint(recordSize-1)), p.N())
	rows = min(rows, p.HintSlots())
	perCol := rows / recordSize
	cols := (records + perCol - 1) / perCol
	cols = (cols + p.N() - 1) / p.N() * p.N()
	if bits.Len(uint(cols-1)) > MaxLogCols {
		return Shape{}, fmt.Errorf("%w: %d records of %d bytes need %d columns; at most 2^%d decode correctly", ErrParams, records, recordSize, cols, MaxLogCols)
	}
	return Shape{Rows: rows, Cols: cols, RecordSize: recordSize}, nil
}

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
		if q, _ := ByName(n); fmt.Sprint(q) == fmt.Sprint(p) {
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

// BabyGiant returns the baby-step and giant-step counts of the evaluation.
func (p Params) BabyGiant() (b1, b2 int) { return p.babyGiant() }
