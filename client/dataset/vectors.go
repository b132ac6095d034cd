package dataset

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// MaxDim is the largest vector dimension the readers and writers accept.
const MaxDim = 1 << 16

// VectorFormat is the encoding of a vector file.
type VectorFormat int

// Vector formats. The zero VectorFormat is not a valid format.
const (
	// FVecs: each vector is a little-endian int32 dimension d followed by d
	// little-endian float32 (the TEXMEX/SIFT .fvecs format).
	FVecs VectorFormat = iota + 1
	// BVecs: each vector is a little-endian int32 dimension d followed by d
	// uint8 (the TEXMEX .bvecs format).
	BVecs
	// NPY: a NumPy .npy file (version 1.0, 2.0 or 3.0) holding a C-order
	// '<f4' or '<f8' array of shape (rows, dim) or (dim,).
	NPY
)

// String returns the file extension of the format without the dot.
func (f VectorFormat) String() string {
	switch f {
	case FVecs:
		return "fvecs"
	case BVecs:
		return "bvecs"
	case NPY:
		return "npy"
	}
	return fmt.Sprintf("VectorFormat(%d)", int(f))
}

// VectorFormatOf returns the format of path from its extension: .fvecs,
// .bvecs or .npy (case-insensitive).
func VectorFormatOf(path string) (VectorFormat, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".fvecs":
		return FVecs, nil
	case ".bvecs":
		return BVecs, nil
	case ".npy":
		return NPY, nil
	default:
		return 0, fmt.Errorf("dataset: %s: extension %q (want .fvecs, .bvecs or .npy): %w", path, ext, ErrUnknownFormat)
	}
}

// VectorReader reads vectors of one dimension from a stream. It is not
// safe for concurrent use.
type VectorReader struct {
	format VectorFormat
	br     *bufio.Reader
	dim    int
	rows   int // NPY: from the header; -1 for fvecs/bvecs
	elem   int // bytes per component in the input
	offset int64
	count  int
	vec    []float32
	raw    []byte
	hdr    [4]byte // fvecs/bvecs dimension header (a field, not to allocate)
	err    error
}

// NewVectorReader returns a reader of vectors in format f from r. For NPY
// it reads and checks the header, so Dim and Len are known at once; bytes
// after the declared rows are not read.
//
// Every vector must have the dimension of the first (else
// ErrDimensionMismatch), in 1..MaxDim (else ErrBadDimension), with finite
// components (else ErrNotFinite); input ending inside a vector is
// ErrTruncated. Errors name the vector's 0-based index.
func NewVectorReader(r io.Reader, f VectorFormat) (*VectorReader, error) {
	v := &VectorReader{format: f, br: bufio.NewReaderSize(r, 64<<10), rows: -1}
	switch f {
	case FVecs:
		v.elem = 4
	case BVecs:
		v.elem = 1
	case NPY:
		if err := v.readNPYHeader(); err != nil {
			return nil, err
		}
		v.vec = make([]float32, v.dim)
		v.raw = make([]byte, v.dim*v.elem)
	default:
		return nil, fmt.Errorf("dataset: vector format %d: %w", int(f), ErrUnknownFormat)
	}
	return v, nil
}

// OpenVectors opens the vector file at path, choosing the format by its
// extension (see VectorFormatOf). The caller closes the returned Closer
// when done with the reader.
func OpenVectors(path string) (*VectorReader, io.Closer, error) {
	f, err := VectorFormatOf(path)
	if err != nil {
		return nil, nil, err
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("dataset: %w", err)
	}
	v, err := NewVectorReader(file, f)
	if err != nil {
		file.Close()
		return nil, nil, &pathError{path, err}
	}
	return v, file, nil
}

// Dim returns the dimension of the vectors: from the header for NPY, from
// the first vector for fvecs and bvecs (0 before it has been read).
func (v *VectorReader) Dim() int { return v.dim }

// Len returns the number of vectors an NPY header declares, or -1 for
// fvecs and bvecs, whose length is unknown until the end.
func (v *VectorReader) Len() int { return v.rows }

// Count returns the number of vectors Next has returned.
func (v *VectorReader) Count() int { return v.count }

// Next returns the next vector, or io.EOF at the end of the input. The
// returned slice is reused by the next call.
func (v *VectorReader) Next() ([]float32, error) {
	if v.err != nil {
		return nil, v.err
	}
	var err error
	if v.format == NPY {
		err = v.nextNPY()
	} else {
		err = v.nextVecs()
	}
	if err != nil {
		v.err = err
		return nil, err
	}
	v.count++
	return v.vec, nil
}

func (v *VectorReader) nextVecs() error {
	n, err := io.ReadFull(v.br, v.hdr[:])
	switch {
	case err == io.EOF:
		return io.EOF
	case err == io.ErrUnexpectedEOF:
		return fmt.Errorf("dataset: vector %d at byte offset %d: dimension header has %d of 4 bytes (%d missing): %w",
			v.count, v.offset, n, 4-n, ErrTruncated)
	case err != nil:
		return fmt.Errorf("dataset: reading vector %d at byte offset %d: %w", v.count, v.offset, err)
	}
	d := int64(int32(binary.LittleEndian.Uint32(v.hdr[:])))
	if d < 1 || d > MaxDim {
		return fmt.Errorf("dataset: vector %d at byte offset %d: dimension %d (want 1..%d): %w",
			v.count, v.offset, d, MaxDim, ErrBadDimension)
	}
	if v.dim == 0 {
		v.dim = int(d)
		v.vec = make([]float32, v.dim)
		v.raw = make([]byte, v.dim*v.elem)
	} else if int(d) != v.dim {
		return fmt.Errorf("dataset: vector %d at byte offset %d has dimension %d, vector 0 has %d: %w",
			v.count, v.offset, d, v.dim, ErrDimensionMismatch)
	}
	if err := v.readBody(v.offset + 4); err != nil {
		return err
	}
	v.offset += 4 + int64(len(v.raw))
	if v.format == BVecs {
		for i, b := range v.raw {
			v.vec[i] = float32(b)
		}
		return nil
	}
	return v.decodeF32()
}

// readBody fills v.raw with the components of vector v.count, which start
// at byte offset at.
func (v *VectorReader) readBody(at int64) error {
	n, err := io.ReadFull(v.br, v.raw)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return fmt.Errorf("dataset: vector %d at byte offset %d: %d of %d data bytes present (%d missing): %w",
			v.count, at, n, len(v.raw), len(v.raw)-n, ErrTruncated)
	case err != nil:
		return fmt.Errorf("dataset: reading vector %d at byte offset %d: %w", v.count, at+int64(n), err)
	}
	return nil
}

func (v *VectorReader) decodeF32() error {
	for i := range v.vec {
		x := math.Float32frombits(binary.LittleEndian.Uint32(v.raw[4*i:]))
		if x != x || math.IsInf(float64(x), 0) {
			return fmt.Errorf("dataset: vector %d component %d is %v: %w", v.count, i, x, ErrNotFinite)
		}
		v.vec[i] = x
	}
	return nil
}

func (v *VectorReader) decodeF64() error {
	for i := range v.vec {
		x := math.Float64frombits(binary.LittleEndian.Uint64(v.raw[8*i:]))
		if x != x || math.IsInf(x, 0) {
			return fmt.Errorf("dataset: vector %d component %d is %v: %w", v.count, i, x, ErrNotFinite)
		}
		f := float32(x)
		if math.IsInf(float64(f), 0) {
			return fmt.Errorf("dataset: vector %d component %d is %v, beyond float32 range: %w", v.count, i, x, ErrNotFinite)
		}
		v.vec[i] = f
	}
	return nil
}

// pathError puts a file name into an error of this package.
type pathError struct {
	path string
	err  error
}

func (e *pathError) Error() string {
	return "dataset: " + e.path + ": " + strings.TrimPrefix(e.err.Error(), "dataset: ")
}

func (e *pathError) Unwrap() error { return e.err }
