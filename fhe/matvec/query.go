package matvec

// Query is a vector of uint32 prepared for the kernel selected when it was
// built: signed digit planes for the vector kernels, the words themselves for
// the portable one. Building it costs O(len); it is read-only afterwards and
// may be shared by goroutines.
type Query struct {
	n    int
	kind kernel
	// words: kernelGo; planes8 (4 planes of n 8-bit digits): kernelVNNI;
	// planes16 (2 planes of n 16-bit digits): kernelAVX2.
	words    []uint32
	planes8  []int8
	planes16 []int16
}

// NewQuery prepares q (copied) for this CPU's kernel.
func NewQuery(q []uint32) *Query {
	return newQuery(q, active)
}

func newQuery(q []uint32, k kernel) *Query {
	n := len(q)
	out := &Query{n: n, kind: k}
	switch k {
	case kernelVNNI:
		out.planes8 = make([]int8, 4*n)
		p0, p1, p2, p3 := out.planes8[:n], out.planes8[n:2*n], out.planes8[2*n:3*n], out.planes8[3*n:4*n]
		for i, v := range q {
			d := digits8(v)
			p0[i], p1[i], p2[i], p3[i] = d[0], d[1], d[2], d[3]
		}
	case kernelAVX2:
		out.planes16 = make([]int16, 2*n)
		p0, p1 := out.planes16[:n], out.planes16[n:2*n]
		for i, v := range q {
			p0[i], p1[i] = digits16(v)
		}
	default:
		out.words = append([]uint32(nil), q...)
	}
	return out
}

// Len is the length of the vector.
func (q *Query) Len() int { return q.n }

// digits8 writes v as four signed bytes, v ≡ Σ 2^(8k) d[k] (mod 2^32): each
// digit is the remaining value's low byte read as signed, the remainder
// (value − digit, a multiple of 2^8 modulo 2^32) shifted down.
func digits8(v uint32) [4]int8 {
	var d [4]int8
	for k := range d {
		d[k] = int8(uint8(v))
		v = (v - uint32(int32(d[k]))) >> 8
	}
	return d
}

// digits16 writes v as two signed 16-bit digits, v ≡ d0 + 2^16 d1 (mod 2^32).
func digits16(v uint32) (d0, d1 int16) {
	d0 = int16(uint16(v))
	d1 = int16(uint16((v - uint32(int32(d0))) >> 16))
	return d0, d1
}
