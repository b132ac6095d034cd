package dataset

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
)

// FVecsWriter writes vectors in the .fvecs format one at a time, for
// generating files of any size. It does no buffering of its own (each Write
// is one call to the underlying writer); wrap files in a bufio.Writer.
type FVecsWriter struct {
	w     io.Writer
	dim   int
	buf   []byte
	count int
	err   error
}

// NewFVecsWriter returns a writer of .fvecs vectors to w.
func NewFVecsWriter(w io.Writer) *FVecsWriter { return &FVecsWriter{w: w} }

// Write appends vec. Every vector must have the dimension of the first
// (1..MaxDim) and finite components, so that the output reads back;
// a rejected vector writes nothing. After a write error of the underlying
// writer, Write returns that error.
func (fw *FVecsWriter) Write(vec []float32) error {
	if fw.err != nil {
		return fw.err
	}
	if err := checkVec(fw.count, len(vec), fw.dim); err != nil {
		return err
	}
	for i, x := range vec {
		if x != x || math.IsInf(float64(x), 0) {
			return fmt.Errorf("dataset: writing vector %d: component %d is %v: %w", fw.count, i, x, ErrNotFinite)
		}
	}
	if fw.dim == 0 {
		fw.dim = len(vec)
		fw.buf = make([]byte, 4+4*len(vec))
		binary.LittleEndian.PutUint32(fw.buf, uint32(len(vec)))
	}
	for i, x := range vec {
		binary.LittleEndian.PutUint32(fw.buf[4+4*i:], math.Float32bits(x))
	}
	if _, err := fw.w.Write(fw.buf); err != nil {
		fw.err = fmt.Errorf("dataset: writing vector %d: %w", fw.count, err)
		return fw.err
	}
	fw.count++
	return nil
}

// Count returns the number of vectors written.
func (fw *FVecsWriter) Count() int { return fw.count }

// checkVec checks the dimension d of vector i against the first vector's
// dimension first (0 if i is the first).
func checkVec(i, d, first int) error {
	if d < 1 || d > MaxDim {
		return fmt.Errorf("dataset: writing vector %d: dimension %d (want 1..%d): %w", i, d, MaxDim, ErrBadDimension)
	}
	if first != 0 && d != first {
		return fmt.Errorf("dataset: writing vector %d: dimension %d, vector 0 has %d: %w", i, d, first, ErrDimensionMismatch)
	}
	return nil
}

// WriteFVecs writes vecs to w in the .fvecs format. All vectors must have
// one dimension in 1..MaxDim and finite components.
func WriteFVecs(w io.Writer, vecs [][]float32) error {
	bw := bufio.NewWriter(w)
	fw := NewFVecsWriter(bw)
	for _, vec := range vecs {
		if err := fw.Write(vec); err != nil {
			return err
		}
	}
	return flush(bw)
}

// WriteBVecs writes vecs to w in the .bvecs format. All vectors must have
// one dimension in 1..MaxDim.
func WriteBVecs(w io.Writer, vecs [][]uint8) error {
	bw := bufio.NewWriter(w)
	var hdr [4]byte
	for i, vec := range vecs {
		first := 0
		if i > 0 {
			first = len(vecs[0])
		}
		if err := checkVec(i, len(vec), first); err != nil {
			return err
		}
		binary.LittleEndian.PutUint32(hdr[:], uint32(len(vec)))
		bw.Write(hdr[:])
		if _, err := bw.Write(vec); err != nil {
			return fmt.Errorf("dataset: writing vector %d: %w", i, err)
		}
	}
	return flush(bw)
}

// WriteNPY writes vecs to w as a NumPy .npy file, format version 1.0, dtype
// '<f4', C order, shape (len(vecs), dim). There must be at least one vector
// (an empty array has no dimension); all must have one dimension in
// 1..MaxDim and finite components.
func WriteNPY(w io.Writer, vecs [][]float32) error {
	if len(vecs) == 0 {
		return fmt.Errorf("dataset: WriteNPY of no vectors, whose dimension is unknown: %w", ErrBadDimension)
	}
	dim := len(vecs[0])
	for i, vec := range vecs {
		first := 0
		if i > 0 {
			first = dim
		}
		if err := checkVec(i, len(vec), first); err != nil {
			return err
		}
		for j, x := range vec {
			if x != x || math.IsInf(float64(x), 0) {
				return fmt.Errorf("dataset: writing vector %d: component %d is %v: %w", i, j, x, ErrNotFinite)
			}
		}
	}
	dict := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }", len(vecs), dim)
	// Pad with spaces and end with a newline so that the data starts at a
	// multiple of 64 bytes, as NumPy does.
	pre := len(npyMagic) + 2 + 2
	total := (pre + len(dict) + 1 + 63) / 64 * 64
	hdr := dict + strings.Repeat(" ", total-pre-len(dict)-1) + "\n"

	bw := bufio.NewWriter(w)
	bw.WriteString(npyMagic)
	bw.Write([]byte{1, 0})
	var lb [4]byte
	binary.LittleEndian.PutUint16(lb[:], uint16(len(hdr)))
	bw.Write(lb[:2])
	bw.WriteString(hdr)
	for _, vec := range vecs {
		for _, x := range vec {
			binary.LittleEndian.PutUint32(lb[:], math.Float32bits(x))
			bw.Write(lb[:])
		}
	}
	return flush(bw)
}

func flush(bw *bufio.Writer) error {
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	return nil
}
