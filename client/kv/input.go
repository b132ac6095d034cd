package kv

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Format is the format of a keyword database's input.
type Format string

// Input formats.
const (
	// CSV: the first column is the key, the second the value (exactly
	// two columns; an optional header row).
	CSV Format = "csv"
	// JSONL: one {"key": "...", "value": "..."} object per line.
	JSONL Format = "jsonl"
)

// ParseFormat reads a format name.
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case CSV, JSONL:
		return Format(s), nil
	}
	return "", fmt.Errorf("kv: unknown input format %q (csv or jsonl)", s)
}

// Errors of a load's input; each names the line.
var (
	ErrMalformed     = errors.New("kv: malformed input")
	ErrDuplicateKey  = errors.New("kv: duplicate key")
	ErrValueTooLarge = errors.New("kv: value over the maximum")
	ErrKeyTooLarge   = errors.New("kv: key over the maximum")
)

// Pair is one key and value of the input, with the line it was on.
type Pair struct {
	Key, Value []byte
	Line       int
}

// Reader reads pairs from a CSV or JSONL input.
type Reader struct {
	format Format
	csv    *csv.Reader
	lines  *bufio.Scanner
	line   int
}

// maxLine bounds one input line (a JSONL object holds a value of up to
// MaxValueLimit bytes, escaped).
const maxLine = 8*MaxValueLimit + 4096

// NewReader reads format from r; header skips a CSV's first row.
func NewReader(r io.Reader, format Format, header bool) (*Reader, error) {
	rd := &Reader{format: format}
	switch format {
	case CSV:
		rd.csv = csv.NewReader(r)
		rd.csv.FieldsPerRecord = -1
		rd.csv.ReuseRecord = false
		if header {
			if _, err := rd.Next(); err != nil && err != io.EOF {
				return nil, err
			}
		}
	case JSONL:
		rd.lines = bufio.NewScanner(r)
		rd.lines.Buffer(make([]byte, 64<<10), maxLine)
	default:
		return nil, fmt.Errorf("kv: unknown input format %q (csv or jsonl)", format)
	}
	return rd, nil
}

// Next returns the next pair, or io.EOF.
func (r *Reader) Next() (Pair, error) {
	if r.format == CSV {
		rec, err := r.csv.Read()
		if err == io.EOF {
			return Pair{}, io.EOF
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return Pair{}, fmt.Errorf("%w: line %d: %v", ErrMalformed, pe.StartLine, pe.Err)
			}
			return Pair{}, err
		}
		line, _ := r.csv.FieldPos(0) // a record read has a field
		if len(rec) != 2 {
			return Pair{}, fmt.Errorf("%w: line %d: %d columns, want 2 (key, value)", ErrMalformed, line, len(rec))
		}
		return Pair{Key: []byte(rec[0]), Value: []byte(rec[1]), Line: line}, nil
	}
	for r.lines.Scan() {
		r.line++
		b := bytes.TrimSpace(r.lines.Bytes())
		if len(b) == 0 {
			continue
		}
		var obj struct {
			Key   *string `json:"key"`
			Value *string `json:"value"`
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&obj); err != nil {
			return Pair{}, fmt.Errorf("%w: line %d: %v", ErrMalformed, r.line, err)
		}
		if dec.More() {
			return Pair{}, fmt.Errorf("%w: line %d: more than one object", ErrMalformed, r.line)
		}
		if obj.Key == nil || obj.Value == nil {
			return Pair{}, fmt.Errorf("%w: line %d: want {\"key\": ..., \"value\": ...}", ErrMalformed, r.line)
		}
		return Pair{Key: []byte(*obj.Key), Value: []byte(*obj.Value), Line: r.line}, nil
	}
	if err := r.lines.Err(); err != nil {
		return Pair{}, fmt.Errorf("%w: line %d: %v", ErrMalformed, r.line+1, err)
	}
	return Pair{}, io.EOF
}

// Check validates a pair against the limits (the error names its line).
func (l Layout) Check(p Pair) error {
	if len(p.Key) > MaxKey {
		return fmt.Errorf("%w: %skey of %d bytes (at most %d)", ErrKeyTooLarge, lineOf(p), len(p.Key), MaxKey)
	}
	if len(p.Value) > l.MaxValue {
		return fmt.Errorf("%w: %svalue of %d bytes (at most %d)", ErrValueTooLarge, lineOf(p), len(p.Value), l.MaxValue)
	}
	return nil
}

// lineOf names a pair's input line (none for a pair not read from input).
func lineOf(p Pair) string {
	if p.Line == 0 {
		return ""
	}
	return fmt.Sprintf("line %d: ", p.Line)
}

// Collect reads every pair of r, splits it into items and checks it: a
// key seen twice, a value over the maximum or a malformed line is an error
// naming the line, and nothing is returned.
func (l Layout) Collect(r *Reader, h *Hasher) ([]Item, int, error) {
	seen := map[Tag]int{}
	var items []Item
	pairs := 0
	for {
		p, err := r.Next()
		if err == io.EOF {
			return items, pairs, nil
		}
		if err != nil {
			return nil, 0, err
		}
		if err := l.Check(p); err != nil {
			return nil, 0, err
		}
		its := l.Split(h, p.Key, p.Value)
		if first, ok := seen[its[0].Tag]; ok {
			return nil, 0, fmt.Errorf("%w: line %d: key %q is also on line %d", ErrDuplicateKey, p.Line, truncate(p.Key), first)
		}
		seen[its[0].Tag] = p.Line
		items = append(items, its...)
		pairs++
	}
}

func truncate(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "…"
	}
	return string(b)
}
