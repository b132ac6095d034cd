package dataset

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
)

// namedErrors are the errors a reader may return on any input read from
// memory.
var namedErrors = []error{
	ErrUnknownFormat, ErrRecordSize, ErrRecordOptions, ErrPartialRecord, ErrRecordTooLong,
	ErrMissingColumn, ErrMalformedCSV, ErrDimensionMismatch, ErrBadDimension, ErrTruncated,
	ErrNotFinite, ErrUnsupportedNPY,
}

func checkNamed(t *testing.T, err error) {
	t.Helper()
	for _, s := range namedErrors {
		if errors.Is(err, s) {
			if !strings.HasPrefix(err.Error(), "dataset: ") {
				t.Fatalf("error %q does not start with \"dataset: \"", err)
			}
			return
		}
	}
	t.Fatalf("error %v wraps no sentinel of the package", err)
}

func FuzzVectorReader(f *testing.F) {
	for _, d := range []int{1, 3, 128} {
		vecs := testVecs(2, d, uint64(d))
		var b bytes.Buffer
		WriteFVecs(&b, vecs)
		f.Add(b.Bytes(), uint8(FVecs))
		b.Reset()
		WriteBVecs(&b, toBytes(vecs))
		f.Add(b.Bytes(), uint8(BVecs))
		b.Reset()
		WriteNPY(&b, vecs)
		f.Add(b.Bytes(), uint8(NPY))
	}
	f.Add(npyFile(2, hdr("'<f8'", "False", "(2,)"), f64bytes(1, 1e300)), uint8(NPY))
	f.Add(npyFile(1, `{"descr":"<f4","fortran_order":False,"shape":(2L,1L)}`, f32bytes(7, 8)), uint8(NPY))
	f.Add(concat(rawVec(2, f32bytes(1, 2)), rawVec(3, nil)), uint8(FVecs))
	f.Add([]byte{}, uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, format uint8) {
		vf := VectorFormat(format % 4) // includes the invalid 0
		v, err := NewVectorReader(bytes.NewReader(data), vf)
		if err != nil {
			checkNamed(t, err)
			return
		}
		for {
			vec, err := v.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				checkNamed(t, err)
				if _, err2 := v.Next(); err2 != err {
					t.Fatalf("Next after %v returned %v", err, err2)
				}
				break
			}
			if d := v.Dim(); d < 1 || d > MaxDim || len(vec) != d {
				t.Fatalf("vector of %d components, Dim() = %d", len(vec), d)
			}
			for j, x := range vec {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("component %d is %v", j, x)
				}
				if vf == BVecs && (x != float32(int(x)) || x < 0 || x > 255) {
					t.Fatalf("bvecs component %d is %v", j, x)
				}
			}
			if vf == NPY && v.Count() > v.Len() {
				t.Fatalf("vector %d of an NPY file of %d", v.Count(), v.Len())
			}
		}
		if vf != NPY && v.Len() != -1 {
			t.Fatalf("Len() = %d for %v", v.Len(), vf)
		}
	})
}

func FuzzRecordReader(f *testing.F) {
	f.Add([]byte("abcdefghij"), uint8(FixedSize), uint16(4), uint8(0), false)
	f.Add([]byte("abc\r\ndef\n\nxy\r\nlonger line\n"), uint8(Lines), uint16(4), uint8(0), false)
	f.Add([]byte(csvInput), uint8(CSVColumn), uint16(10), uint8(2), true)
	f.Add([]byte("\ufeff\"a\",b\r\nc,d\"e\n"), uint8(CSVColumn), uint16(3), uint8(1), false)
	f.Add([]byte("x"), uint8(Lines), uint16(0), uint8(0), false)
	f.Fuzz(func(t *testing.T, data []byte, format uint8, size uint16, column uint8, header bool) {
		rf := RecordFormat(format % 4)
		var opt RecordOptions
		if rf == CSVColumn {
			opt = RecordOptions{Column: int(column % 8), Header: header}
		}
		r, err := NewRecordReader(bytes.NewReader(data), rf, int(size), opt)
		if err != nil {
			checkNamed(t, err)
			if size != 0 && rf != 0 {
				t.Fatalf("NewRecordReader: %v", err)
			}
			return
		}
		var all []byte
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				checkNamed(t, err)
				break
			}
			if len(rec) != int(size) {
				t.Fatalf("record of %d bytes, size %d", len(rec), size)
			}
			all = append(all, rec...)
		}
		if rf == FixedSize && !bytes.HasPrefix(data, all) {
			t.Fatalf("fixed-size records are not the input")
		}
		if rf == Lines && r.Count() > bytes.Count(data, []byte("\n"))+1 {
			t.Fatalf("%d records from %d LFs", r.Count(), bytes.Count(data, []byte("\n")))
		}
	})
}
