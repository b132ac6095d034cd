package dataset

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testVecs returns n deterministic vectors of dimension d with varied
// finite values: signs, zeros (both), subnormals, extremes.
func testVecs(n, d int, seed uint64) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	special := []float32{0, float32(math.Copysign(0, -1)), 1, -1, math.MaxFloat32, -math.MaxFloat32,
		math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1e-40, 3.14159}
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = make([]float32, d)
		for j := range vecs[i] {
			if rng.IntN(4) == 0 {
				vecs[i][j] = special[rng.IntN(len(special))]
			} else {
				vecs[i][j] = float32(rng.NormFloat64() * 100)
			}
		}
	}
	return vecs
}

// readVectors reads all vectors from v, returning copies, and the error
// that ended the reading (nil at io.EOF).
func readVectors(t *testing.T, v *VectorReader) ([][]float32, error) {
	t.Helper()
	var out [][]float32
	for {
		vec, err := v.Next()
		if err == io.EOF {
			if v.Count() != len(out) {
				t.Errorf("Count() = %d, want %d", v.Count(), len(out))
			}
			if _, err := v.Next(); err != io.EOF {
				t.Errorf("Next after io.EOF = %v", err)
			}
			return out, nil
		}
		if err != nil {
			if _, err2 := v.Next(); err2 != err {
				t.Errorf("Next after error = %v, want the same error %v", err2, err)
			}
			return out, err
		}
		if len(vec) != v.Dim() {
			t.Fatalf("vector %d has %d components, Dim() = %d", len(out), len(vec), v.Dim())
		}
		out = append(out, append([]float32(nil), vec...))
	}
}

func sameVecs(t *testing.T, got, want [][]float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d vectors, want %d", len(got), len(want))
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("vector %d: %d components, want %d", i, len(got[i]), len(want[i]))
		}
		for j := range want[i] {
			if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
				t.Fatalf("vector %d component %d = %v, want %v", i, j, got[i][j], want[i][j])
			}
		}
	}
}

func toBytes(vecs [][]float32) [][]uint8 {
	out := make([][]uint8, len(vecs))
	for i, v := range vecs {
		out[i] = make([]uint8, len(v))
		for j := range v {
			out[i][j] = uint8(i*31 + j*7)
		}
	}
	return out
}

func bytesToFloats(vecs [][]uint8) [][]float32 {
	out := make([][]float32, len(vecs))
	for i, v := range vecs {
		out[i] = make([]float32, len(v))
		for j, b := range v {
			out[i][j] = float32(b)
		}
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	for _, d := range []int{1, 2, 3, 128, 960} {
		for _, n := range []int{1, 2, 37} {
			vecs := testVecs(n, d, uint64(d*1000+n))
			bvecs := toBytes(vecs)
			for _, f := range []VectorFormat{FVecs, BVecs, NPY} {
				var buf bytes.Buffer
				var err error
				want := vecs
				switch f {
				case FVecs:
					err = WriteFVecs(&buf, vecs)
				case BVecs:
					err = WriteBVecs(&buf, bvecs)
					want = bytesToFloats(bvecs)
				case NPY:
					err = WriteNPY(&buf, vecs)
				}
				if err != nil {
					t.Fatalf("%v d=%d n=%d: write: %v", f, d, n, err)
				}
				if f == FVecs && buf.Len() != n*(4+4*d) || f == BVecs && buf.Len() != n*(4+d) {
					t.Errorf("%v d=%d n=%d: %d bytes written", f, d, n, buf.Len())
				}
				v, err := NewVectorReader(&buf, f)
				if err != nil {
					t.Fatalf("%v d=%d n=%d: %v", f, d, n, err)
				}
				wantDim, wantLen := 0, -1
				if f == NPY {
					wantDim, wantLen = d, n
				}
				if v.Dim() != wantDim || v.Len() != wantLen {
					t.Errorf("%v: before reading Dim, Len = %d, %d; want %d, %d", f, v.Dim(), v.Len(), wantDim, wantLen)
				}
				got, err := readVectors(t, v)
				if err != nil {
					t.Fatalf("%v d=%d n=%d: read: %v", f, d, n, err)
				}
				sameVecs(t, got, want)
				if v.Dim() != d || v.Count() != n {
					t.Errorf("%v: Dim, Count = %d, %d; want %d, %d", f, v.Dim(), v.Count(), d, n)
				}
			}
		}
	}
}

func TestFVecsWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewFVecsWriter(&buf)
	vecs := testVecs(5, 4, 9)
	for _, vec := range vecs {
		if err := w.Write(vec); err != nil {
			t.Fatal(err)
		}
	}
	err := w.Write([]float32{1, 2, 3})
	wantErr(t, err, ErrDimensionMismatch, "vector 5", "dimension 3", "has 4")
	err = w.Write([]float32{1, float32(math.NaN()), 3, 4})
	wantErr(t, err, ErrNotFinite, "vector 5", "component 1")
	if w.Count() != 5 || buf.Len() != 5*20 {
		t.Fatalf("Count %d, %d bytes after rejected writes; want 5, 100", w.Count(), buf.Len())
	}
	// The exact encoding of the first vector.
	want := make([]byte, 20)
	binary.LittleEndian.PutUint32(want, 4)
	for j, x := range vecs[0] {
		binary.LittleEndian.PutUint32(want[4+4*j:], math.Float32bits(x))
	}
	if !bytes.Equal(buf.Bytes()[:20], want) {
		t.Errorf("first vector encoded as % x, want % x", buf.Bytes()[:20], want)
	}
	got, err := readVectors(t, mustReader(t, buf.Bytes(), FVecs))
	if err != nil {
		t.Fatal(err)
	}
	sameVecs(t, got, vecs)

	boom := errors.New("boom")
	fw := NewFVecsWriter(&failingWriter{err: boom})
	if err := fw.Write([]float32{1}); !errors.Is(err, boom) {
		t.Errorf("write error %v, want boom", err)
	}
	if err := fw.Write([]float32{1}); !errors.Is(err, boom) {
		t.Errorf("second write error %v, want boom", err)
	}
}

type failingWriter struct{ err error }

func (f *failingWriter) Write(p []byte) (int, error) { return 0, f.err }

func TestWriterErrors(t *testing.T) {
	for _, d := range []int{0, MaxDim + 1} {
		wantErr(t, WriteFVecs(io.Discard, [][]float32{make([]float32, d)}), ErrBadDimension, "vector 0")
		wantErr(t, WriteBVecs(io.Discard, [][]uint8{{1}, make([]uint8, d)}), ErrBadDimension, "vector 1")
		wantErr(t, WriteNPY(io.Discard, [][]float32{make([]float32, d)}), ErrBadDimension, "vector 0")
	}
	wantErr(t, WriteBVecs(io.Discard, [][]uint8{{1, 2}, {1}}), ErrDimensionMismatch, "vector 1")
	wantErr(t, WriteNPY(io.Discard, [][]float32{{1, 2}, {1, 2}, {1}}), ErrDimensionMismatch, "vector 2")
	wantErr(t, WriteNPY(io.Discard, [][]float32{{1, 2}, {1, float32(math.Inf(-1))}}), ErrNotFinite, "vector 1", "component 1")
	wantErr(t, WriteNPY(io.Discard, nil), ErrBadDimension)
	if err := WriteFVecs(io.Discard, nil); err != nil {
		t.Errorf("WriteFVecs of nothing: %v", err)
	}
	boom := errors.New("boom")
	if err := WriteNPY(&failingWriter{err: boom}, [][]float32{{1}}); !errors.Is(err, boom) {
		t.Errorf("WriteNPY to a failing writer: %v", err)
	}
	if err := WriteBVecs(&failingWriter{err: boom}, [][]uint8{{1}}); !errors.Is(err, boom) {
		t.Errorf("WriteBVecs to a failing writer: %v", err)
	}
}

func mustReader(t *testing.T, data []byte, f VectorFormat) *VectorReader {
	t.Helper()
	v, err := NewVectorReader(bytes.NewReader(data), f)
	if err != nil {
		t.Fatalf("NewVectorReader(%v): %v", f, err)
	}
	return v
}

// rawVec encodes one fvecs (elem 4) or bvecs (elem 1) vector with header
// dimension d and the given component bytes.
func rawVec(d int32, body []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(d))
	return append(b, body...)
}

func f32bytes(xs ...float32) []byte {
	var b []byte
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func concat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestVecsErrors(t *testing.T) {
	v3 := rawVec(3, f32bytes(1, 2, 3))
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	cases := []struct {
		name     string
		f        VectorFormat
		data     []byte
		good     int // vectors read before the error
		sentinel error
		parts    []string
	}{
		{"mismatch", FVecs, concat(v3, v3, rawVec(4, f32bytes(1, 2, 3, 4))), 2, ErrDimensionMismatch,
			[]string{"vector 2 ", "byte offset 32", "dimension 4", "vector 0 has 3"}},
		{"bvecs mismatch", BVecs, concat(rawVec(2, []byte{1, 2}), rawVec(1, []byte{1})), 1, ErrDimensionMismatch,
			[]string{"vector 1 ", "dimension 1", "vector 0 has 2"}},
		{"zero dim", FVecs, concat(v3, rawVec(0, nil)), 1, ErrBadDimension, []string{"vector 1 ", "dimension 0"}},
		{"negative dim", FVecs, rawVec(-1, nil), 0, ErrBadDimension, []string{"vector 0 ", "dimension -1"}},
		{"huge dim", BVecs, rawVec(MaxDim+1, nil), 0, ErrBadDimension, []string{"vector 0 ", "dimension 65537"}},
		{"truncated header", FVecs, concat(v3, []byte{3, 0}), 1, ErrTruncated,
			[]string{"vector 1 ", "byte offset 16", "2 of 4 bytes", "2 missing"}},
		{"truncated body", FVecs, concat(v3, v3[:12]), 1, ErrTruncated,
			[]string{"vector 1 ", "8 of 12 data bytes present (4 missing)"}},
		{"truncated empty body", BVecs, rawVec(5, nil), 0, ErrTruncated,
			[]string{"vector 0 ", "0 of 5 data bytes present (5 missing)"}},
		{"NaN", FVecs, concat(v3, rawVec(3, f32bytes(1, 2, nan))), 1, ErrNotFinite, []string{"vector 1 ", "component 2 ", "NaN"}},
		{"+Inf", FVecs, concat(v3, v3, rawVec(3, f32bytes(inf, 2, 3))), 2, ErrNotFinite, []string{"vector 2 ", "component 0 ", "+Inf"}},
		{"-Inf", FVecs, rawVec(3, f32bytes(1, -inf, 3)), 0, ErrNotFinite, []string{"vector 0 ", "component 1 ", "-Inf"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := readVectors(t, mustReader(t, c.data, c.f))
			if len(got) != c.good {
				t.Errorf("%d vectors before the error, want %d", len(got), c.good)
			}
			wantErr(t, err, c.sentinel, c.parts...)
		})
	}
}

func TestVectorFormatOf(t *testing.T) {
	for path, want := range map[string]VectorFormat{"a/sift_base.fvecs": FVecs, "B.BVECS": BVecs, "x.tar.npy": NPY} {
		f, err := VectorFormatOf(path)
		if err != nil || f != want {
			t.Errorf("VectorFormatOf(%q) = %v, %v; want %v", path, f, err, want)
		}
	}
	for _, path := range []string{"gt.ivecs", "data", "x.npz", "fvecs"} {
		_, err := VectorFormatOf(path)
		wantErr(t, err, ErrUnknownFormat, path)
	}
	_, err := NewVectorReader(strings.NewReader(""), VectorFormat(7))
	wantErr(t, err, ErrUnknownFormat)
}

func TestOpenVectors(t *testing.T) {
	dir := t.TempDir()
	vecs := testVecs(3, 8, 5)
	write := func(name string, fn func(io.Writer) error) string {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := fn(f); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	paths := []string{
		write("v.fvecs", func(w io.Writer) error { return WriteFVecs(w, vecs) }),
		write("v.npy", func(w io.Writer) error { return WriteNPY(w, vecs) }),
	}
	for _, path := range paths {
		v, c, err := OpenVectors(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readVectors(t, v)
		if err != nil {
			t.Fatal(err)
		}
		sameVecs(t, got, vecs)
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}
	b := toBytes(vecs)
	v, c, err := OpenVectors(write("v.bvecs", func(w io.Writer) error { return WriteBVecs(w, b) }))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readVectors(t, v)
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	sameVecs(t, got, bytesToFloats(b))

	_, _, err = OpenVectors(filepath.Join(dir, "missing.fvecs"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	_, _, err = OpenVectors(write("bad.npy", func(w io.Writer) error { _, err := w.Write([]byte("PK\x03\x04")); return err }))
	wantErr(t, err, ErrUnsupportedNPY, "bad.npy", "magic")
	_, _, err = OpenVectors(write("v.txt", func(io.Writer) error { return nil }))
	wantErr(t, err, ErrUnknownFormat, "v.txt")
}

func TestVectorReadError(t *testing.T) {
	boom := errors.New("boom")
	var buf bytes.Buffer
	WriteFVecs(&buf, testVecs(2, 3, 1))
	data := buf.Bytes()
	for _, cut := range []int{0, 2, 4, 10, 16, 20} {
		v, err := NewVectorReader(&failingReader{data: data[:cut], err: boom}, FVecs)
		if err != nil {
			t.Fatal(err)
		}
		_, err = readVectors(t, v)
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), "vector") {
			t.Errorf("cut %d: error %v, want one wrapping boom", cut, err)
		}
	}
}
