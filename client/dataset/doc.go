// Package dataset reads users' own data files for loading into encrypted
// databases: byte records (fixed-size, one per line, or one CSV column) and
// numeric vectors (.fvecs, .bvecs and NumPy .npy).
//
// Every reader streams: it holds one record or vector and a bounded read
// buffer, never the whole input, so memory use does not depend on the size
// of the file. Next returns a slice that the following call to Next
// overwrites; copy it to keep it.
//
// Errors name what went wrong and where (line numbers are 1-based, vector
// indices and byte offsets 0-based) and wrap one of the sentinel errors
// below, so callers can test them with errors.Is. After an error other than
// io.EOF a reader keeps returning that error. No input makes a reader panic.
//
// The writers (WriteFVecs, WriteBVecs, WriteNPY, FVecsWriter) produce files
// the readers accept, for tests, benchmarks and generated data sets.
package dataset

import "errors"

// Sentinel errors. Errors returned by this package wrap one of these (or an
// error of the underlying reader or writer) with context.
var (
	// ErrUnknownFormat: an unknown record format name, format value or
	// vector file extension.
	ErrUnknownFormat = errors.New("unknown format")
	// ErrRecordSize: a record size outside 1..MaxRecordSize.
	ErrRecordSize = errors.New("invalid record size")
	// ErrRecordOptions: RecordOptions that do not fit the format (a
	// negative column, or CSV options given for a non-CSV format).
	ErrRecordOptions = errors.New("invalid record options")
	// ErrPartialRecord: a FixedSize input whose length is not a multiple of
	// the record size.
	ErrPartialRecord = errors.New("partial record")
	// ErrRecordTooLong: a line or CSV value longer than the record size, or
	// a CSV row beyond the row limit.
	ErrRecordTooLong = errors.New("record too long")
	// ErrMissingColumn: a CSV row without the selected column.
	ErrMissingColumn = errors.New("missing column")
	// ErrMalformedCSV: input that encoding/csv cannot parse; the error also
	// wraps the *csv.ParseError.
	ErrMalformedCSV = errors.New("malformed CSV")
	// ErrDimensionMismatch: a vector whose dimension differs from the first
	// vector's.
	ErrDimensionMismatch = errors.New("dimension mismatch")
	// ErrBadDimension: a vector dimension outside 1..MaxDim.
	ErrBadDimension = errors.New("bad dimension")
	// ErrTruncated: input that ends inside a vector, a vector header or an
	// NPY header.
	ErrTruncated = errors.New("truncated input")
	// ErrNotFinite: a NaN or infinite vector component (or a float64 NPY
	// value too large for float32).
	ErrNotFinite = errors.New("non-finite value")
	// ErrUnsupportedNPY: an NPY file this package cannot read (bad magic,
	// version, dtype, memory order, shape or header).
	ErrUnsupportedNPY = errors.New("unsupported NPY file")
)
