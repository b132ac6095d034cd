package pir

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// Errors returned (wrapped) by the package; test them with errors.Is.
var (
	// ErrIndexOutOfRange: a record index outside [0, Shape.Records).
	ErrIndexOutOfRange = errors.New("pir: record index out of range")
	// ErrShape: a database shape that the parameters cannot serve, or a
	// Shape that does not belong to the parameters it is used with.
	ErrShape = errors.New("pir: invalid shape")
	// ErrParameters: parameters the protocol cannot run on.
	ErrParameters = errors.New("pir: unsupported parameters")
	// ErrCiphertext: a query or answer ciphertext that is nil or has the
	// wrong degree, level or ring degree.
	ErrCiphertext = errors.New("pir: invalid ciphertext")
	// ErrKeys: a missing or mismatched secret or evaluation key.
	ErrKeys = errors.New("pir: invalid keys")
	// ErrRecords: record bytes that do not fit a plaintext.
	ErrRecords = errors.New("pir: invalid records")
	// ErrDatabase: a database plaintext that could not be read or lifted.
	ErrDatabase = errors.New("pir: database")
	// ErrDecode: an answer whose decryption is not a valid plaintext of
	// 16-bit chunks (wrong key, wrong index or exhausted noise budget).
	ErrDecode = errors.New("pir: decode")
)

// MaxCols is the number of columns at which the database stops growing
// wide and grows tall instead.
const MaxCols = 256

// chunkBits is the number of record bits per plaintext coefficient.
const chunkBits = 16

// Shape is the layout of a database of fixed-size records in BGV
// plaintexts of N coefficients, each a little-endian 16-bit chunk (2N bytes
// per plaintext). Record i lives in plaintext i / PerPlaintext at byte
// offset (i % PerPlaintext)·RecordSize; plaintext p is at row p / Cols,
// column p % Cols. Rows and Cols are powers of two with Cols =
// min(MaxCols, nextPow2(Plaintexts)) and Rows = nextPow2(⌈Plaintexts/Cols⌉);
// plaintexts from Plaintexts to Rows·Cols are all-zero.
type Shape struct {
	N            int // ring degree
	RecordSize   int // bytes per record, 1 ≤ RecordSize ≤ 2N
	Records      int // number of records
	PerPlaintext int // records per plaintext, ⌊2N / RecordSize⌋
	Plaintexts   int // plaintexts holding records, ⌈Records / PerPlaintext⌉
	Rows, Cols   int // powers of two, Rows·Cols ≥ Plaintexts
}

// checkParameters reports whether the protocol can run on params: three
// levels at least (expansion, scan, answer) and a plaintext modulus that is
// odd (2·Rows and 2·Cols invertible) and above every 16-bit chunk.
func checkParameters(params bgv.Parameters) error {
	if params.N() == 0 {
		return fmt.Errorf("%w: zero parameters", ErrParameters)
	}
	if params.MaxLevel() < 2 {
		return fmt.Errorf("%w: max level %d, need ≥ 2 (expansion, scan, answer)", ErrParameters, params.MaxLevel())
	}
	t := params.PlaintextModulus()
	if t <= 1<<chunkBits || t%2 == 0 {
		return fmt.Errorf("%w: plaintext modulus %d must be odd and > 2^%d", ErrParameters, t, chunkBits)
	}
	return nil
}

func nextPow2(x int) int {
	if x <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(x-1))
}

func log2(x int) int { return bits.Len(uint(x)) - 1 }

// NewShape lays out records of recordSize bytes for params. It fails (with
// ErrShape) if recordSize is not in [1, 2N], records < 1, or the database
// needs more than N/4 rows or columns (2·Rows and 2·Cols must be ≤ N/2, so
// every Galois element of the expansion is ≡ 1 mod 4).
func NewShape(params bgv.Parameters, recordSize, records int) (Shape, error) {
	if err := checkParameters(params); err != nil {
		return Shape{}, err
	}
	n := params.N()
	if recordSize < 1 || recordSize > 2*n {
		return Shape{}, fmt.Errorf("%w: record size %d not in [1, %d]", ErrShape, recordSize, 2*n)
	}
	if records < 1 {
		return Shape{}, fmt.Errorf("%w: %d records, need ≥ 1", ErrShape, records)
	}
	s := Shape{N: n, RecordSize: recordSize, Records: records, PerPlaintext: 2 * n / recordSize}
	s.Plaintexts = (records-1)/s.PerPlaintext + 1
	// Bound before rounding up so that nextPow2 cannot overflow.
	if s.Plaintexts > (n/4)*(n/4) {
		return Shape{}, fmt.Errorf("%w: %d plaintexts exceed (N/4)^2 = %d", ErrShape, s.Plaintexts, (n/4)*(n/4))
	}
	s.Cols = min(MaxCols, nextPow2(s.Plaintexts))
	s.Rows = nextPow2((s.Plaintexts-1)/s.Cols + 1)
	if 2*s.Rows > n/2 || 2*s.Cols > n/2 {
		return Shape{}, fmt.Errorf("%w: %d plaintexts need %d rows × %d columns, more than N/4 = %d", ErrShape, s.Plaintexts, s.Rows, s.Cols, n/4)
	}
	return s, nil
}

// check reports whether s is the shape NewShape gives for params.
func (s Shape) check(params bgv.Parameters) error {
	want, err := NewShape(params, s.RecordSize, s.Records)
	if err != nil {
		return err
	}
	if s != want {
		return fmt.Errorf("%w: %+v is not the layout of these parameters (%+v)", ErrShape, s, want)
	}
	return nil
}

// Locate returns where record index lives: its plaintext, that
// plaintext's row and column, and its byte offset inside the plaintext.
func (s Shape) Locate(index int) (plaintext, row, col, offset int, err error) {
	if index < 0 || index >= s.Records || s.PerPlaintext < 1 || s.Cols < 1 {
		return 0, 0, 0, 0, fmt.Errorf("%w: %d not in [0, %d)", ErrIndexOutOfRange, index, s.Records)
	}
	plaintext = index / s.PerPlaintext
	return plaintext, plaintext / s.Cols, plaintext % s.Cols, (index % s.PerPlaintext) * s.RecordSize, nil
}

// LogRows is log2(Rows).
func (s Shape) LogRows() int { return log2(s.Rows) }

// LogCols is log2(Cols).
func (s Shape) LogCols() int { return log2(s.Cols) }

// Depth is the depth of the expansion tree: 1 + log2(max(Rows, Cols)).
// Column selections are leaves at depth 1 + log2(Cols), row selections
// at depth 1 + log2(Rows).
func (s Shape) Depth() int { return 1 + max(s.LogRows(), s.LogCols()) }

// GaloisElements returns g_j = N/2^j + 1 for j = 0 … Depth()−1: the Galois
// elements of the expansion, in the order of rlwe.GaloisElementsForExpand.
func (s Shape) GaloisElements() []uint64 {
	d := s.Depth()
	out := make([]uint64, d)
	for j := range out {
		out[j] = uint64(s.N>>j) + 1
	}
	return out
}

// bitrev reverses the k low bits of x (bitrev(x, 0) = 0).
func bitrev(x, k int) int {
	if k == 0 {
		return 0
	}
	return int(bits.Reverse64(uint64(x)) >> (64 - k))
}

// QueryCoefficients returns the two nonzero coefficient indices of the
// query for plaintext (row, col): 2·bitrev(row) for the row and
// 1 + 2·bitrev(col) for the column (bit reversal over log2 Rows and
// log2 Cols bits).
func (s Shape) QueryCoefficients(row, col int) (rowCoeff, colCoeff int) {
	return 2 * bitrev(row, s.LogRows()), 1 + 2*bitrev(col, s.LogCols())
}

// EncodePlaintext packs up to PerPlaintext whole records (their bytes
// concatenated) into the N coefficients of a plaintext: coefficient k is
// bytes 2k and 2k+1, little-endian; bytes beyond the records are zero.
func EncodePlaintext(s Shape, records []byte) ([]uint64, error) {
	if err := s.checkRecords(records); err != nil {
		return nil, err
	}
	out := make([]uint64, s.N)
	for k := range out {
		out[k] = uint64(chunk(records, k))
	}
	return out, nil
}

// EncodePlaintext16 is EncodePlaintext with 16-bit coefficients, for
// storage in 2-byte words.
func EncodePlaintext16(s Shape, records []byte) ([]uint16, error) {
	if err := s.checkRecords(records); err != nil {
		return nil, err
	}
	out := make([]uint16, s.N)
	for k := range out {
		out[k] = chunk(records, k)
	}
	return out, nil
}

func (s Shape) checkRecords(records []byte) error {
	if s.N < 1 || s.RecordSize < 1 || s.PerPlaintext < 1 {
		return fmt.Errorf("%w: zero shape", ErrShape)
	}
	if len(records)%s.RecordSize != 0 || len(records) > s.PerPlaintext*s.RecordSize {
		return fmt.Errorf("%w: %d bytes is not up to %d whole records of %d bytes", ErrRecords, len(records), s.PerPlaintext, s.RecordSize)
	}
	return nil
}

// chunk is coefficient k of the plaintext holding b (zero beyond b).
func chunk(b []byte, k int) uint16 {
	var v uint16
	if 2*k < len(b) {
		v = uint16(b[2*k])
	}
	if 2*k+1 < len(b) {
		v |= uint16(b[2*k+1]) << 8
	}
	return v
}
