package dataset

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
)

// readRecords reads all records of input, returning copies of them and the
// error that ended the reading (nil at io.EOF).
func readRecords(t *testing.T, input string, f RecordFormat, size int, opt RecordOptions) ([]string, error) {
	t.Helper()
	r, err := NewRecordReader(strings.NewReader(input), f, size, opt)
	if err != nil {
		t.Fatalf("NewRecordReader: %v", err)
	}
	var out []string
	for {
		rec, err := r.Next()
		if err == io.EOF {
			if r.Count() != len(out) {
				t.Errorf("Count() = %d, want %d", r.Count(), len(out))
			}
			return out, nil
		}
		if err != nil {
			if r.Count() != len(out) {
				t.Errorf("Count() = %d after error, want %d", r.Count(), len(out))
			}
			if _, err2 := r.Next(); err2 != err {
				t.Errorf("Next after error = %v, want the same error %v", err2, err)
			}
			return out, err
		}
		if len(rec) != size {
			t.Fatalf("record %d has %d bytes, want %d", len(out), len(rec), size)
		}
		out = append(out, string(rec))
	}
}

func wantRecords(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records %q, want %d %q", len(got), got, len(want), want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d = %q, want %q", i, got[i], want[i])
		}
	}
}

// wantErr checks that err wraps sentinel and that its message contains
// every one of parts.
func wantErr(t *testing.T, err, sentinel error, parts ...string) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("error %v, want one wrapping %q", err, sentinel)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
	if !strings.HasPrefix(err.Error(), "dataset: ") {
		t.Errorf("error %q does not start with \"dataset: \"", err)
	}
}

func TestParseRecordFormat(t *testing.T) {
	for s, want := range map[string]RecordFormat{"fixed": FixedSize, "lines": Lines, "csv": CSVColumn, "CSV": CSVColumn} {
		f, err := ParseRecordFormat(s)
		if err != nil || f != want {
			t.Errorf("ParseRecordFormat(%q) = %v, %v; want %v", s, f, err, want)
		}
		if g, _ := ParseRecordFormat(f.String()); g != f {
			t.Errorf("ParseRecordFormat(%v.String()) = %v", f, g)
		}
	}
	for _, s := range []string{"", "tsv", "fixed "} {
		_, err := ParseRecordFormat(s)
		wantErr(t, err, ErrUnknownFormat, "\""+s+"\"")
	}
	_, err := NewRecordReader(strings.NewReader(""), RecordFormat(0), 4, RecordOptions{})
	wantErr(t, err, ErrUnknownFormat)
}

func TestRecordReaderArguments(t *testing.T) {
	for _, size := range []int{0, -1, MaxRecordSize + 1} {
		_, err := NewRecordReader(strings.NewReader(""), FixedSize, size, RecordOptions{})
		wantErr(t, err, ErrRecordSize)
	}
	if _, err := NewRecordReader(strings.NewReader(""), Lines, MaxRecordSize, RecordOptions{}); err != nil {
		t.Errorf("record size MaxRecordSize: %v", err)
	}
	_, err := NewRecordReader(strings.NewReader(""), CSVColumn, 4, RecordOptions{Column: -1})
	wantErr(t, err, ErrRecordOptions, "-1")
	_, err = NewRecordReader(strings.NewReader(""), Lines, 4, RecordOptions{Column: 2})
	wantErr(t, err, ErrRecordOptions, "lines")
	_, err = NewRecordReader(strings.NewReader(""), FixedSize, 4, RecordOptions{Header: true})
	wantErr(t, err, ErrRecordOptions, "fixed")
}

func TestFixedSize(t *testing.T) {
	got, err := readRecords(t, "abcdefghij", FixedSize, 5, RecordOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRecords(t, got, []string{"abcde", "fghij"})

	got, err = readRecords(t, "", FixedSize, 5, RecordOptions{})
	if err != nil || len(got) != 0 {
		t.Fatalf("empty input: %q, %v", got, err)
	}

	// Binary content, including zero bytes, is returned as is.
	in := "\x00\x01\xff\n\r\x00\x00\x00"
	got, err = readRecords(t, in, FixedSize, 4, RecordOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRecords(t, got, []string{"\x00\x01\xff\n", "\r\x00\x00\x00"})

	// 10 bytes of 4-byte records: the third record, at offset 8, has 2.
	got, err = readRecords(t, "abcdefghij", FixedSize, 4, RecordOptions{})
	wantRecords(t, got, []string{"abcd", "efgh"})
	wantErr(t, err, ErrPartialRecord, "record 2", "byte offset 8", "2 of 4 bytes")

	// A record larger than the read buffer.
	big := strings.Repeat("x", 100<<10) + strings.Repeat("y", 100<<10)
	got, err = readRecords(t, big, FixedSize, 100<<10, RecordOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRecords(t, got, []string{big[:100<<10], big[100<<10:]})
}

func pad(s string, n int) string { return s + strings.Repeat("\x00", n-len(s)) }

func TestLines(t *testing.T) {
	got, err := readRecords(t, "abc\r\ndef\n\nxy\r\nabcd\r\n", Lines, 4, RecordOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRecords(t, got, []string{pad("abc", 4), pad("def", 4), pad("", 4), pad("xy", 4), "abcd"})

	// A last line without LF is a record; an empty one is not.
	got, err = readRecords(t, "a\nb", Lines, 2, RecordOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRecords(t, got, []string{pad("a", 2), pad("b", 2)})
	got, err = readRecords(t, "", Lines, 2, RecordOptions{})
	if err != nil || len(got) != 0 {
		t.Fatalf("empty input: %q, %v", got, err)
	}
	got, err = readRecords(t, "\n", Lines, 2, RecordOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRecords(t, got, []string{pad("", 2)})
	// A CR is stripped only before an LF.
	got, err = readRecords(t, "a\rb\r", Lines, 4, RecordOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRecords(t, got, []string{"a\rb\r"})
}

func TestLinesTooLong(t *testing.T) {
	got, err := readRecords(t, "ok\r\nabcd\r\ntoolong\r\nnext\n", Lines, 4, RecordOptions{})
	wantRecords(t, got, []string{pad("ok", 4), "abcd"})
	wantErr(t, err, ErrRecordTooLong, "line 3 ", "7 bytes", "record size 4")

	_, err = readRecords(t, "ok\nabcde", Lines, 4, RecordOptions{})
	wantErr(t, err, ErrRecordTooLong, "line 2 ", "5 bytes")

	// Lines longer than the read buffer (recordSize + 64 KiB) are measured
	// exactly, with or without LF, CRLF or a CR-LF split across chunks.
	const size = 8
	buf := size + lineSlack
	for _, n := range []int{buf - 2, buf - 1, buf, buf + 1, 200 << 10} {
		for _, end := range []string{"", "\n", "\r\n"} {
			in := "first\nsecond\n" + strings.Repeat("z", n) + end + "after\n"
			if end == "" {
				in = in[:len(in)-len("after\n")]
			}
			got, err := readRecords(t, in, Lines, size, RecordOptions{})
			wantRecords(t, got, []string{pad("first", size), pad("second", size)})
			wantErr(t, err, ErrRecordTooLong, "line 3 ", " "+strconv.Itoa(n)+" bytes")
		}
	}
}

const csvInput = `id,name,note
1,"Smith, J","said ""hi"""
2,plain,"multi
line"

3,x
`

func TestCSV(t *testing.T) {
	got, err := readRecords(t, csvInput, CSVColumn, 10, RecordOptions{Column: 1, Header: true})
	if err != nil {
		t.Fatal(err)
	}
	wantRecords(t, got, []string{pad("Smith, J", 10), pad("plain", 10), pad("x", 10)})

	got, err = readRecords(t, csvInput, CSVColumn, 10, RecordOptions{Column: 0})
	if err != nil {
		t.Fatal(err)
	}
	wantRecords(t, got, []string{pad("id", 10), pad("1", 10), pad("2", 10), pad("3", 10)})

	// Column 2: quotes are unescaped, a quoted newline is kept; the last
	// row (line 6, after a blank line) has only two columns.
	got, err = readRecords(t, csvInput, CSVColumn, 10, RecordOptions{Column: 2, Header: true})
	wantRecords(t, got, []string{pad(`said "hi"`, 10), pad("multi\nline", 10)})
	wantErr(t, err, ErrMissingColumn, "line 6:", "2 field(s)", "column 2")

	// CRLF line ends and a byte order mark.
	got, err = readRecords(t, "\ufeff\"a\",b\r\nc,d\r\n", CSVColumn, 3, RecordOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRecords(t, got, []string{pad("a", 3), pad("c", 3)})

	// Header only, and empty input.
	for _, in := range []string{"h1,h2\n", ""} {
		got, err = readRecords(t, in, CSVColumn, 3, RecordOptions{Header: true})
		if err != nil || len(got) != 0 {
			t.Errorf("%q: %q, %v", in, got, err)
		}
	}
}

func TestCSVErrors(t *testing.T) {
	// The value on line 4 (after a two-line quoted field) is too long.
	in := "a,b\n\"x\ny\",c\nd,toolongvalue\n"
	got, err := readRecords(t, in, CSVColumn, 4, RecordOptions{Column: 1})
	wantRecords(t, got, []string{pad("b", 4), pad("c", 4)})
	wantErr(t, err, ErrRecordTooLong, "line 4 ", "12 bytes", "record size 4")

	// A too-long value in a field that starts one line before it ends.
	_, err = readRecords(t, "a,b\nc,\"long\nvalue\"\n", CSVColumn, 4, RecordOptions{Column: 1})
	wantErr(t, err, ErrRecordTooLong, "line 2 ", "10 bytes")

	for _, in := range []string{"a,b\nc,d\"e\n", "a,\"b\n", "a,\"b\"c\n"} {
		got, err := readRecords(t, in, CSVColumn, 4, RecordOptions{})
		wantErr(t, err, ErrMalformedCSV, "line ")
		var pe *csv.ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%q: error %v does not wrap a *csv.ParseError", in, err)
		}
		if in == "a,b\nc,d\"e\n" {
			wantRecords(t, got, []string{pad("a", 4)})
			if pe != nil && pe.Line != 2 {
				t.Errorf("ParseError.Line = %d, want 2", pe.Line)
			}
		}
	}
}

// TestCSVRowLimit checks that an unterminated quote does not make the
// reader buffer the rest of the input.
func TestCSVRowLimit(t *testing.T) {
	in := "a\nb\n\"c\n" + strings.Repeat("filler line\n", 200_000) // 2.4 MB
	got, err := readRecords(t, in, CSVColumn, 4, RecordOptions{})
	wantRecords(t, got, []string{pad("a", 4), pad("b", 4)})
	wantErr(t, err, ErrRecordTooLong, "from line 3", strconv.Itoa(4+csvRowSlack)+" bytes")

	// Rows just under the limit are fine.
	long := strings.Repeat("v", csvRowSlack-100)
	got, err = readRecords(t, "x,"+long+"\ny,"+long+"\n", CSVColumn, 4, RecordOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRecords(t, got, []string{pad("x", 4), pad("y", 4)})
}

type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestRecordReadError(t *testing.T) {
	boom := errors.New("boom")
	for _, f := range []RecordFormat{FixedSize, Lines, CSVColumn} {
		r, err := NewRecordReader(&failingReader{data: []byte("abcd\nef"), err: boom}, f, 4, RecordOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var last error
		for range 5 {
			if _, last = r.Next(); last != nil {
				break
			}
		}
		if !errors.Is(last, boom) || !strings.HasPrefix(last.Error(), "dataset: ") {
			t.Errorf("%v: error %v, want one wrapping %v", f, last, boom)
		}
	}
}

// TestLinesAllocs checks that Next allocates nothing per record.
func TestLinesAllocs(t *testing.T) {
	in := bytes.Repeat([]byte("some record\r\n"), 20000)
	for _, f := range []RecordFormat{Lines, FixedSize} {
		r, err := NewRecordReader(bytes.NewReader(in), f, 13, RecordOptions{})
		if err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(10000, func() {
			if _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%v: %v allocations per Next, want 0", f, allocs)
		}
	}
}
