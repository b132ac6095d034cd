package dataset

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
)

// npyMagic starts every NPY file.
const npyMagic = "\x93NUMPY"

// maxNPYHeader bounds the NPY header length; NumPy itself refuses headers
// over 10000 bytes by default.
const maxNPYHeader = 64 << 10

// npyErr returns an ErrUnsupportedNPY error saying what.
func npyErr(format string, args ...any) error {
	return fmt.Errorf("dataset: NPY: %s: %w", fmt.Sprintf(format, args...), ErrUnsupportedNPY)
}

// readNPYHeader reads the NPY preamble and header and sets dim, rows, elem
// and offset.
func (v *VectorReader) readNPYHeader() error {
	var pre [8]byte
	n, err := io.ReadFull(v.br, pre[:])
	if m := min(n, len(npyMagic)); string(pre[:m]) != npyMagic[:m] {
		return npyErr("bad magic %q (want %q)", pre[:m], npyMagic)
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("dataset: NPY preamble has %d of 8 bytes (%d missing): %w", n, 8-n, ErrTruncated)
	} else if err != nil {
		return fmt.Errorf("dataset: reading NPY preamble: %w", err)
	}
	major, minor := pre[6], pre[7]
	if major < 1 || major > 3 || minor != 0 {
		return npyErr("format version %d.%d (want 1.0, 2.0 or 3.0)", major, minor)
	}
	lenSize := 2
	if major > 1 {
		lenSize = 4
	}
	var lb [4]byte
	n, err = io.ReadFull(v.br, lb[:lenSize])
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("dataset: NPY header length field has %d of %d bytes (%d missing): %w", n, lenSize, lenSize-n, ErrTruncated)
	} else if err != nil {
		return fmt.Errorf("dataset: reading NPY header length: %w", err)
	}
	hlen := int64(binary.LittleEndian.Uint16(lb[:]))
	if lenSize == 4 {
		hlen = int64(binary.LittleEndian.Uint32(lb[:]))
	}
	if hlen > maxNPYHeader {
		return npyErr("header length %d exceeds %d", hlen, maxNPYHeader)
	}
	hdr := make([]byte, hlen)
	n, err = io.ReadFull(v.br, hdr)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("dataset: NPY header has %d of %d bytes (%d missing): %w", n, hlen, hlen-int64(n), ErrTruncated)
	} else if err != nil {
		return fmt.Errorf("dataset: reading NPY header: %w", err)
	}
	v.offset = 8 + int64(lenSize) + hlen

	d, err := parseNPYHeader(string(hdr))
	if err != nil {
		return err
	}
	descr, ok := d["descr"].(string)
	if !ok {
		return npyErr("'descr' is %s, want a dtype string such as '<f4'", pyKind(d["descr"]))
	}
	switch descr {
	case "<f4":
		v.elem = 4
	case "<f8":
		v.elem = 8
	default:
		return npyErr("dtype %q (want '<f4' or '<f8')", descr)
	}
	fortran, ok := d["fortran_order"].(bool)
	if !ok {
		return npyErr("'fortran_order' is %s, want True or False", pyKind(d["fortran_order"]))
	}
	if fortran {
		return npyErr("fortran_order True (only C order is supported)")
	}
	shapeV, ok := d["shape"].([]any)
	if !ok {
		return npyErr("'shape' is %s, want a tuple", pyKind(d["shape"]))
	}
	shape := make([]int64, len(shapeV))
	for i, s := range shapeV {
		x, ok := s.(int64)
		if !ok || x < 0 {
			return npyErr("shape %s: entry %d is not a non-negative integer", pyShape(shapeV), i)
		}
		shape[i] = x
	}
	var rows, dim int64
	switch len(shape) {
	case 1:
		rows, dim = 1, shape[0]
	case 2:
		rows, dim = shape[0], shape[1]
	default:
		return npyErr("shape %s has %d dimensions (want (rows, dim) or (dim,))", pyShape(shapeV), len(shape))
	}
	if dim < 1 || dim > MaxDim {
		return fmt.Errorf("dataset: NPY shape %s: dimension %d (want 1..%d): %w", pyShape(shapeV), dim, MaxDim, ErrBadDimension)
	}
	if int64(int(rows)) != rows {
		return npyErr("shape %s: %d rows is more than this platform can count", pyShape(shapeV), rows)
	}
	v.rows, v.dim = int(rows), int(dim)
	return nil
}

// nextNPY reads row v.count of the array.
func (v *VectorReader) nextNPY() error {
	if v.count >= v.rows {
		return io.EOF
	}
	if err := v.readBody(v.offset); err != nil {
		return err
	}
	v.offset += int64(len(v.raw))
	if v.elem == 8 {
		return v.decodeF64()
	}
	return v.decodeF32()
}

// parseNPYHeader parses the Python dict literal of an NPY header: string
// keys and values that are strings, True/False/None, integers and tuples
// or lists of them. It requires exactly the keys descr, fortran_order and
// shape, as NumPy does.
func parseNPYHeader(s string) (map[string]any, error) {
	p := &pyParser{s: s}
	val, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, npyErr("header: unexpected %q at byte %d after the dict", p.s[p.i], p.i)
	}
	d, ok := val.(map[string]any)
	if !ok {
		return nil, npyErr("header is %s, want a dict", pyKind(val))
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if _, ok := d[k]; !ok {
			return nil, npyErr("header has no %q key", k)
		}
	}
	if len(d) != 3 {
		for k := range d {
			if k != "descr" && k != "fortran_order" && k != "shape" {
				return nil, npyErr("header has unexpected key %q", k)
			}
		}
	}
	return d, nil
}

// pyParser parses the subset of Python literals NPY headers use.
type pyParser struct {
	s     string
	i     int
	depth int
}

const maxPyDepth = 16

func (p *pyParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *pyParser) fail(what string) error {
	if p.i >= len(p.s) {
		return npyErr("header: %s, found the end of the header", what)
	}
	return npyErr("header: %s, found %q at byte %d", what, p.s[p.i], p.i)
}

// value parses one literal: a dict, tuple, list, string, True, False, None
// or integer.
func (p *pyParser) value() (any, error) {
	p.space()
	if p.i >= len(p.s) {
		return nil, p.fail("want a value")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.dict()
	case c == '(':
		return p.seq(')')
	case c == '[':
		return p.seq(']')
	case c == '\'' || c == '"':
		return p.str()
	case c == '-' || c == '+' || (c >= '0' && c <= '9'):
		return p.int()
	case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
		start := p.i
		for p.i < len(p.s) && isNameByte(p.s[p.i]) {
			p.i++
		}
		switch w := p.s[start:p.i]; w {
		case "True":
			return true, nil
		case "False":
			return false, nil
		case "None":
			return nil, nil
		default:
			return nil, npyErr("header: unsupported name %q at byte %d", w, start)
		}
	}
	return nil, p.fail("want a value")
}

func isNameByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
}

func (p *pyParser) enter() error {
	p.depth++
	if p.depth > maxPyDepth {
		return npyErr("header: nesting deeper than %d at byte %d", maxPyDepth, p.i)
	}
	return nil
}

func (p *pyParser) dict() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.i++ // '{'
	d := map[string]any{}
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return d, nil
		}
		if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
			return nil, p.fail("want a string key or '}'")
		}
		at := p.i
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := d[k]; dup {
			return nil, npyErr("header: duplicate key %q at byte %d", k, at)
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, p.fail("want ':'")
		}
		p.i++
		val, err := p.value()
		if err != nil {
			return nil, err
		}
		d[k] = val
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return d, nil
		}
		return nil, p.fail("want ',' or '}'")
	}
}

func (p *pyParser) seq(end byte) (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.i++ // '(' or '['
	var items []any
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			return items, nil
		}
		val, err := p.value()
		if err != nil {
			return nil, err
		}
		items = append(items, val)
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			return items, nil
		}
		return nil, p.fail(fmt.Sprintf("want ',' or '%c'", end))
	}
}

func (p *pyParser) str() (string, error) {
	q := p.s[p.i]
	start := p.i
	p.i++
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case q:
			p.i++
			return p.s[start+1 : p.i-1], nil
		case '\\':
			return "", npyErr("header: escape sequence in string at byte %d", p.i)
		case '\n':
			return "", npyErr("header: newline in string at byte %d", p.i)
		}
		p.i++
	}
	return "", npyErr("header: unterminated string at byte %d", start)
}

func (p *pyParser) int() (any, error) {
	start := p.i
	if p.s[p.i] == '-' || p.s[p.i] == '+' {
		p.i++
	}
	digits := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	if p.i == digits {
		return nil, p.fail("want a digit")
	}
	x, err := strconv.ParseInt(p.s[start:p.i], 10, 64)
	if err != nil {
		return nil, npyErr("header: integer %s at byte %d out of range", p.s[start:p.i], start)
	}
	if p.i < len(p.s) && (p.s[p.i] == 'L' || p.s[p.i] == 'l') { // Python 2 long
		p.i++
	}
	return x, nil
}

// pyKind names the Python type of a parsed header value.
func pyKind(v any) string {
	switch v.(type) {
	case nil:
		return "None"
	case string:
		return "a string"
	case bool:
		return "a bool"
	case int64:
		return "an integer"
	case []any:
		return "a tuple or list"
	case map[string]any:
		return "a dict"
	}
	return fmt.Sprintf("%T", v)
}

// pyShape formats a parsed shape tuple as Python would.
func pyShape(items []any) string {
	b := []byte{'('}
	for i, it := range items {
		if i > 0 {
			b = append(b, ", "...)
		}
		switch x := it.(type) {
		case int64:
			b = strconv.AppendInt(b, x, 10)
		case string:
			b = strconv.AppendQuote(b, x)
		default:
			b = append(b, pyKind(x)...)
		}
	}
	if len(items) == 1 {
		b = append(b, ',')
	}
	return string(append(b, ')'))
}
