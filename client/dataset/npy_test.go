package dataset

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"testing"
)

// Files written by NumPy 1.24 (numpy.lib.format.write_array).
var numpyFiles = []struct {
	name string
	hex  string
	dim  int
	want [][]float32
}{
	// np.array([[1.5,-2,0.25],[3e38,-1e-45,0]], dtype='<f4'), version 1.0.
	{"f4 (2, 3) v1.0", "934e554d5059010076007b276465736372273a20273c6634272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a0000c03f000000c00000803ee6b1617f0100008000000000",
		3, [][]float32{{1.5, -2, 0.25}, {3e38, -1e-45, 0}}},
	// np.array([[0.1,-2.5],[1e10,7]], dtype='<f8'), version 2.0.
	{"f8 (2, 2) v2.0", "934e554d50590200740000007b276465736372273a20273c6638272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028322c2032292c207d20202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a9a9999999999b93f00000000000004c0000000205fa002420000000000001c40",
		2, [][]float32{{0.1, -2.5}, {1e10, 7}}},
	// np.array([4,5,6], dtype='<f4'): 1-D, one vector.
	{"f4 (3,) v1.0", "934e554d5059010076007b276465736372273a20273c6634272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028332c292c207d2020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a000080400000a0400000c040",
		3, [][]float32{{4, 5, 6}}},
	// np.array([[1,2]], dtype='<f4'), version 3.0.
	{"f4 (1, 2) v3.0", "934e554d50590300740000007b276465736372273a20273c6634272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028312c2032292c207d20202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a0000803f00000040",
		2, [][]float32{{1, 2}}},
}

func TestNumPyFiles(t *testing.T) {
	for _, c := range numpyFiles {
		data, err := hex.DecodeString(c.hex)
		if err != nil {
			t.Fatal(err)
		}
		v := mustReader(t, data, NPY)
		if v.Dim() != c.dim || v.Len() != len(c.want) {
			t.Errorf("%s: Dim, Len = %d, %d; want %d, %d", c.name, v.Dim(), v.Len(), c.dim, len(c.want))
		}
		got, err := readVectors(t, v)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		sameVecs(t, got, c.want)

		// Every proper prefix of the data is ErrTruncated.
		for cut := 0; cut < len(data); cut++ {
			v, err := NewVectorReader(bytes.NewReader(data[:cut]), NPY)
			if err == nil {
				_, err = readVectors(t, v)
			}
			if err == nil {
				t.Fatalf("%s cut at %d: no error", c.name, cut)
			}
			wantErr(t, err, ErrTruncated)
		}
	}
}

// TestWriteNPYFormat checks the header WriteNPY writes byte for byte.
func TestWriteNPYFormat(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteNPY(&buf, [][]float32{{1, 2, 3}, {4, 5, 6}}); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	dict := "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
	// The data starts at byte 128, a multiple of 64.
	hdr := dict + strings.Repeat(" ", 128-10-len(dict)-1) + "\n"
	want := append([]byte("\x93NUMPY\x01\x00"), byte(len(hdr)), 0)
	want = append(want, hdr...)
	want = append(want, f32bytes(1, 2, 3, 4, 5, 6)...)
	if !bytes.Equal(b, want) {
		t.Errorf("WriteNPY wrote\n%q\nwant\n%q", b, want)
	}
}

// npyFile builds an NPY file of the given version with header dict and
// data.
func npyFile(major byte, dict string, data []byte) []byte {
	b := []byte(npyMagic)
	b = append(b, major, 0)
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(dict)))
	}
	return append(append(b, dict...), data...)
}

func f64bytes(xs ...float64) []byte {
	var b []byte
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

func hdr(descr, fortran, shape string) string {
	return fmt.Sprintf("{'descr': %s, 'fortran_order': %s, 'shape': %s, }\n", descr, fortran, shape)
}

func TestNPYHeaders(t *testing.T) {
	ok := []struct {
		name      string
		file      []byte
		dim, rows int
		want      [][]float32
	}{
		{"python 2 longs, double quotes, no trailing comma", npyFile(1, `{"descr":"<f4","fortran_order":False,"shape":(2L,1L)}`, f32bytes(7, 8)),
			1, 2, [][]float32{{7}, {8}}},
		{"keys in another order, tabs", npyFile(2, "{ 'shape' : ( 1 , 2 , ) ,\t'fortran_order': False, 'descr': '<f8' }  \n", f64bytes(-0.5, 1e-3)),
			2, 1, [][]float32{{-0.5, 1e-3}}},
		{"zero rows", npyFile(1, hdr("'<f4'", "False", "(0, 4)"), nil), 4, 0, nil},
		{"trailing data ignored", npyFile(1, hdr("'<f4'", "False", "(1, 1)"), f32bytes(1, 2, 3)), 1, 1, [][]float32{{1}}},
	}
	for _, c := range ok {
		v, err := NewVectorReader(bytes.NewReader(c.file), NPY)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if v.Dim() != c.dim || v.Len() != c.rows {
			t.Errorf("%s: Dim, Len = %d, %d; want %d, %d", c.name, v.Dim(), v.Len(), c.dim, c.rows)
		}
		got, err := readVectors(t, v)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		sameVecs(t, got, c.want)
	}

	bad := []struct {
		name     string
		file     []byte
		sentinel error
		parts    []string
	}{
		{"empty", nil, ErrTruncated, []string{"0 of 8 bytes"}},
		{"bad magic", []byte("\x93NUMPZ\x01\x00"), ErrUnsupportedNPY, []string{"magic"}},
		{"short bad magic", []byte("PK"), ErrUnsupportedNPY, []string{"magic"}},
		{"short preamble", []byte("\x93NUM"), ErrTruncated, []string{"4 of 8 bytes"}},
		{"version 4.0", []byte("\x93NUMPY\x04\x00\x00\x00"), ErrUnsupportedNPY, []string{"version 4.0"}},
		{"version 1.1", []byte("\x93NUMPY\x01\x01\x00\x00"), ErrUnsupportedNPY, []string{"version 1.1"}},
		{"short length", []byte("\x93NUMPY\x02\x00\x10\x00"), ErrTruncated, []string{"2 of 4 bytes"}},
		{"short header", npyFile(1, hdr("'<f4'", "False", "(1, 1)"), nil)[:20], ErrTruncated, []string{"10 of"}},
		{"huge header", []byte("\x93NUMPY\x02\x00\x00\x00\x00\x01"), ErrUnsupportedNPY, []string{"header length 16777216"}},
		{"big endian", npyFile(1, hdr("'>f4'", "False", "(1, 1)"), nil), ErrUnsupportedNPY, []string{`dtype ">f4"`}},
		{"int32", npyFile(1, hdr("'<i4'", "False", "(1, 1)"), nil), ErrUnsupportedNPY, []string{`dtype "<i4"`}},
		{"structured", npyFile(1, hdr("[('x', '<f4')]", "False", "(1,)"), nil), ErrUnsupportedNPY, []string{"'descr' is a tuple or list"}},
		{"fortran", npyFile(1, hdr("'<f4'", "True", "(2, 2)"), nil), ErrUnsupportedNPY, []string{"fortran_order True"}},
		{"fortran not bool", npyFile(1, hdr("'<f4'", "0", "(2, 2)"), nil), ErrUnsupportedNPY, []string{"'fortran_order' is an integer"}},
		{"3-D", npyFile(1, hdr("'<f4'", "False", "(2, 2, 2)"), nil), ErrUnsupportedNPY, []string{"(2, 2, 2) has 3 dimensions"}},
		{"scalar", npyFile(1, hdr("'<f4'", "False", "()"), nil), ErrUnsupportedNPY, []string{"() has 0 dimensions"}},
		{"negative shape", npyFile(1, hdr("'<f4'", "False", "(-1, 2)"), nil), ErrUnsupportedNPY, []string{"entry 0"}},
		{"shape not tuple", npyFile(1, hdr("'<f4'", "False", "4"), nil), ErrUnsupportedNPY, []string{"'shape' is an integer"}},
		{"huge int", npyFile(1, hdr("'<f4'", "False", "(99999999999999999999, 2)"), nil), ErrUnsupportedNPY, []string{"out of range"}},
		{"zero dim", npyFile(1, hdr("'<f4'", "False", "(3, 0)"), nil), ErrBadDimension, []string{"dimension 0"}},
		{"empty 1-D", npyFile(1, hdr("'<f4'", "False", "(0,)"), nil), ErrBadDimension, []string{"dimension 0"}},
		{"huge dim", npyFile(1, hdr("'<f4'", "False", "(1, 65537)"), nil), ErrBadDimension, []string{"dimension 65537"}},
		{"missing key", npyFile(1, "{'descr': '<f4', 'shape': (1, 1)}", nil), ErrUnsupportedNPY, []string{`no "fortran_order" key`}},
		{"extra key", npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), 'x': 1}", nil), ErrUnsupportedNPY, []string{`unexpected key "x"`}},
		{"duplicate key", npyFile(1, "{'descr': '<f4', 'descr': '<f4'}", nil), ErrUnsupportedNPY, []string{`duplicate key "descr"`}},
		{"not a dict", npyFile(1, "('<f4', False, (1, 1))", nil), ErrUnsupportedNPY, []string{"want a dict"}},
		{"garbage after", npyFile(1, hdr("'<f4'", "False", "(1, 1)")+"x", nil), ErrUnsupportedNPY, []string{`unexpected 'x'`}},
		{"unterminated", npyFile(1, "{'descr': '<f4", nil), ErrUnsupportedNPY, []string{"unterminated string"}},
		{"open dict", npyFile(1, "{'descr': '<f4'", nil), ErrUnsupportedNPY, []string{"end of the header"}},
		{"escape", npyFile(1, `{'descr': '<f\4'}`, nil), ErrUnsupportedNPY, []string{"escape"}},
		{"name", npyFile(1, "{'descr': float32}", nil), ErrUnsupportedNPY, []string{`name "float32"`}},
		{"deep", npyFile(1, "{'descr': "+strings.Repeat("(", 100), nil), ErrUnsupportedNPY, []string{"nesting"}},
	}
	for _, c := range bad {
		_, err := NewVectorReader(bytes.NewReader(c.file), NPY)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		t.Run(c.name, func(t *testing.T) { wantErr(t, err, c.sentinel, c.parts...) })
	}
}

func TestNPYDataErrors(t *testing.T) {
	h := hdr("'<f4'", "False", "(3, 2)")
	cases := []struct {
		name     string
		file     []byte
		good     int
		sentinel error
		parts    []string
	}{
		{"truncated", npyFile(1, h, f32bytes(1, 2, 3, 4, 5)), 2, ErrTruncated, []string{"vector 2 ", "4 of 8 data bytes present (4 missing)"}},
		{"no data", npyFile(1, h, nil), 0, ErrTruncated, []string{"vector 0 ", "0 of 8"}},
		{"NaN", npyFile(1, h, f32bytes(1, 2, 3, float32(math.NaN()), 5, 6)), 1, ErrNotFinite, []string{"vector 1 ", "component 1 "}},
		{"f8 Inf", npyFile(1, hdr("'<f8'", "False", "(2, 2)"), f64bytes(1, 2, math.Inf(-1), 4)), 1, ErrNotFinite, []string{"vector 1 ", "component 0 ", "-Inf"}},
		{"f8 overflow", npyFile(1, hdr("'<f8'", "False", "(1, 3)"), f64bytes(1, 2, 1e300)), 0, ErrNotFinite, []string{"vector 0 ", "component 2 ", "1e+300", "float32"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := readVectors(t, mustReader(t, c.file, NPY))
			if len(got) != c.good {
				t.Errorf("%d vectors before the error, want %d", len(got), c.good)
			}
			wantErr(t, err, c.sentinel, c.parts...)
		})
	}
}
