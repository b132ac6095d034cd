package dataset

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxRecordSize is the largest record size NewRecordReader accepts.
const MaxRecordSize = 1 << 20

// lineSlack is how much longer than the record size the Lines read buffer
// is; lines of any length are measured and reported, this only sizes the
// buffer.
const lineSlack = 64 << 10

// csvRowSlack bounds a CSV row (all its fields, separators and quoted
// newlines) to recordSize+csvRowSlack bytes, so that one unterminated quote
// cannot make the reader buffer the rest of the file.
const csvRowSlack = 1 << 20

// RecordFormat is the layout of a record file.
type RecordFormat int

// Record formats. The zero RecordFormat is not a valid format.
const (
	// FixedSize: the input is a concatenation of recordSize-byte records.
	FixedSize RecordFormat = iota + 1
	// Lines: one record per line, LF-terminated, with an optional CR before
	// the LF stripped.
	Lines
	// CSVColumn: one record per CSV row, the value of one column.
	CSVColumn
)

// String returns the name ParseRecordFormat accepts ("fixed", "lines",
// "csv").
func (f RecordFormat) String() string {
	switch f {
	case FixedSize:
		return "fixed"
	case Lines:
		return "lines"
	case CSVColumn:
		return "csv"
	}
	return fmt.Sprintf("RecordFormat(%d)", int(f))
}

// ParseRecordFormat returns the format named s: "fixed", "lines" or "csv"
// (case-insensitive).
func ParseRecordFormat(s string) (RecordFormat, error) {
	switch strings.ToLower(s) {
	case "fixed":
		return FixedSize, nil
	case "lines":
		return Lines, nil
	case "csv":
		return CSVColumn, nil
	}
	return 0, fmt.Errorf("dataset: record format %q (want fixed, lines or csv): %w", s, ErrUnknownFormat)
}

// RecordOptions are the options of the CSVColumn format. They must be zero
// for the other formats.
type RecordOptions struct {
	// Column is the 0-based index of the CSV column holding the records.
	Column int
	// Header skips the first CSV row.
	Header bool
}

// RecordReader reads records of one size from a stream. It is not safe for
// concurrent use.
type RecordReader struct {
	format RecordFormat
	size   int
	rec    []byte // the record returned by Next, len size
	err    error  // sticky error (io.EOF at the end)
	count  int

	// FixedSize and Lines.
	br     *bufio.Reader
	offset int64 // FixedSize: byte offset of the next record
	line   int   // Lines: number of lines read

	// CSVColumn.
	cr     *csv.Reader
	guard  *rowGuard
	column int
	header bool // header row still to skip
	rowEnd int  // line on which the last CSV row read ended
}

// NewRecordReader returns a reader of recordSize-byte records in format f
// from r. recordSize must be 1..MaxRecordSize (else ErrRecordSize).
//
// FixedSize: a trailing partial record is ErrPartialRecord, naming its byte
// offset and length.
//
// Lines: each line is one record, empty lines included, but not the empty
// "line" after a final LF. A line longer than recordSize is
// ErrRecordTooLong, naming the line and its exact length, however long it
// is (the reader buffers at most recordSize+64 KiB of it).
//
// CSVColumn: encoding/csv with its defaults (comma-separated, RFC 4180
// quoting, blank lines skipped); rows may have different numbers of fields.
// The value of column opt.Column is the record; a row without that column
// is ErrMissingColumn and a longer value ErrRecordTooLong, each naming the
// line. A UTF-8 byte order mark at the start is dropped. A row (with its
// quoted newlines) may take at most recordSize+1 MiB of input, so that an
// unterminated quote cannot make the reader buffer the rest of the file;
// beyond that the error is ErrRecordTooLong.
func NewRecordReader(r io.Reader, f RecordFormat, recordSize int, opt RecordOptions) (*RecordReader, error) {
	if recordSize < 1 || recordSize > MaxRecordSize {
		return nil, fmt.Errorf("dataset: record size %d (want 1..%d): %w", recordSize, MaxRecordSize, ErrRecordSize)
	}
	rr := &RecordReader{format: f, size: recordSize, rec: make([]byte, recordSize)}
	switch f {
	case FixedSize, Lines:
		if opt != (RecordOptions{}) {
			return nil, fmt.Errorf("dataset: %+v given for the %s format (they apply to csv only): %w", opt, f, ErrRecordOptions)
		}
		size := 64 << 10
		if f == Lines {
			size = recordSize + lineSlack
		}
		rr.br = bufio.NewReaderSize(r, size)
	case CSVColumn:
		if opt.Column < 0 {
			return nil, fmt.Errorf("dataset: CSV column %d (want >= 0): %w", opt.Column, ErrRecordOptions)
		}
		rr.guard = &rowGuard{br: bufio.NewReaderSize(r, 64<<10), limit: int64(recordSize) + csvRowSlack}
		rr.cr = csv.NewReader(rr.guard)
		rr.cr.FieldsPerRecord = -1 // rows may differ; a short row is ErrMissingColumn
		rr.cr.ReuseRecord = true
		rr.column = opt.Column
		rr.header = opt.Header
	default:
		return nil, fmt.Errorf("dataset: record format %d: %w", int(f), ErrUnknownFormat)
	}
	return rr, nil
}

// Next returns the next record, zero-padded to the record size, or io.EOF
// at the end of the input. The returned slice is reused by the next call.
func (r *RecordReader) Next() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	var err error
	switch r.format {
	case FixedSize:
		err = r.nextFixed()
	case Lines:
		err = r.nextLine()
	default:
		err = r.nextCSV()
	}
	if err != nil {
		r.err = err
		return nil, err
	}
	r.count++
	return r.rec, nil
}

// Count returns the number of records Next has returned.
func (r *RecordReader) Count() int { return r.count }

func (r *RecordReader) nextFixed() error {
	n, err := io.ReadFull(r.br, r.rec)
	switch {
	case err == nil:
		r.offset += int64(n)
		return nil
	case err == io.EOF:
		return io.EOF
	case err == io.ErrUnexpectedEOF:
		return fmt.Errorf("dataset: record %d at byte offset %d has %d of %d bytes: %w",
			r.count, r.offset, n, r.size, ErrPartialRecord)
	}
	return fmt.Errorf("dataset: reading record %d at byte offset %d: %w", r.count, r.offset+int64(n), err)
}

func (r *RecordReader) nextLine() error {
	chunk, err := r.br.ReadSlice('\n')
	if err == nil || (err == io.EOF && len(chunk) > 0) {
		r.line++
		line := chunk
		if err == nil {
			line = line[:len(line)-1]
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
		}
		if len(line) > r.size {
			return fmt.Errorf("dataset: line %d is %d bytes, longer than the record size %d: %w",
				r.line, len(line), r.size, ErrRecordTooLong)
		}
		n := copy(r.rec, line)
		clear(r.rec[n:])
		return nil
	}
	if err == io.EOF {
		return io.EOF
	}
	if err != bufio.ErrBufferFull {
		return fmt.Errorf("dataset: reading line %d: %w", r.line+1, err)
	}
	// The line does not fit the buffer, which is longer than the record
	// size: measure it without keeping it.
	r.line++
	total := int64(len(chunk))
	prev, last := byte(0), chunk[len(chunk)-1]
	if len(chunk) > 1 {
		prev = chunk[len(chunk)-2]
	}
	for err == bufio.ErrBufferFull {
		chunk, err = r.br.ReadSlice('\n')
		total += int64(len(chunk))
		switch len(chunk) {
		case 0:
		case 1:
			prev, last = last, chunk[0]
		default:
			prev, last = chunk[len(chunk)-2], chunk[len(chunk)-1]
		}
	}
	if err != nil && err != io.EOF {
		return fmt.Errorf("dataset: reading line %d: %w", r.line, err)
	}
	if err == nil { // ended by LF
		total--
		if prev == '\r' {
			total--
		}
	}
	return fmt.Errorf("dataset: line %d is %d bytes, longer than the record size %d: %w",
		r.line, total, r.size, ErrRecordTooLong)
}

func (r *RecordReader) nextCSV() error {
	for {
		row, err := r.cr.Read()
		if r.guard.err != nil {
			return fmt.Errorf("dataset: CSV: no complete row within %d bytes from line %d: %w",
				r.guard.limit, r.rowEnd+1, ErrRecordTooLong)
		}
		if err == io.EOF {
			return io.EOF
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return fmt.Errorf("dataset: %w: %w", ErrMalformedCSV, err)
			}
			return fmt.Errorf("dataset: reading CSV after line %d: %w", r.rowEnd, err)
		}
		r.guard.mark = r.cr.InputOffset()
		if len(row) == 0 { // not produced by encoding/csv; be safe
			continue
		}
		startLine, _ := r.cr.FieldPos(0)
		lastLine, _ := r.cr.FieldPos(len(row) - 1)
		r.rowEnd = lastLine + strings.Count(row[len(row)-1], "\n")
		if r.header {
			r.header = false
			continue
		}
		if r.column >= len(row) {
			return fmt.Errorf("dataset: CSV line %d: row of %d field(s) has no column %d: %w",
				startLine, len(row), r.column, ErrMissingColumn)
		}
		v := row[r.column]
		if len(v) > r.size {
			line, _ := r.cr.FieldPos(r.column)
			return fmt.Errorf("dataset: CSV line %d column %d is %d bytes, longer than the record size %d: %w",
				line, r.column, len(v), r.size, ErrRecordTooLong)
		}
		n := copy(r.rec, v)
		clear(r.rec[n:])
		return nil
	}
}

// rowGuard bounds how far the CSV reader reads past the end of the last
// complete row, and so the memory one row can take. It also drops a UTF-8
// byte order mark at the start of the input.
type rowGuard struct {
	br        *bufio.Reader
	started   bool
	limit     int64 // bytes allowed past mark
	mark      int64 // input offset of the end of the last complete row
	delivered int64 // bytes handed to the CSV reader
	err       error
}

var errRowLimit = errors.New("CSV row limit reached")

func (g *rowGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if !g.started {
		g.started = true
		if b, _ := g.br.Peek(3); string(b) == "\ufeff" {
			g.br.Discard(3)
		}
	}
	allowed := g.mark + g.limit - g.delivered
	if allowed <= 0 {
		g.err = errRowLimit
		return 0, g.err
	}
	if int64(len(p)) > allowed {
		p = p[:allowed]
	}
	n, err := g.br.Read(p)
	g.delivered += int64(n)
	return n, err
}
