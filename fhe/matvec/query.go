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
		p1, p2, p3 = p1[:len(p0)], p2[:len(p0)], p3[:len(p0)]
		for i, v := range q[:len(p0)] {
			w := v + bias8
			p0[i], p1[i], p2[i], p3[i] = int8(uint8(w)^0x80), int8(uint8(w>>8)^0x80), int8(uint8(w>>16)^0x80), int8(uint8(w>>24)^0x80)
		}
	case kernelAVX2:
		out.planes16 = make([]int16, 2*n)
		p0, p1 := out.planes16[:n], out.planes16[n:2*n]
		p1 = p1[:len(p0)]
		for i, v := range q[:len(p0)] {
			w := v + bias16
			p0[i], p1[i] = int16(uint16(w)^0x8000), int16(uint16(w>>16)^0x8000)
		}
	default:
		out.words = append([]uint32(nil), q...)
	}
	return out
}

// Len is the length of the vector.
func (q *Query) Len() int { return q.n }

// Balanced digits by a bias: with b_k the bytes of v + Σ_k 128·2^(8k),
// v ≡ Σ_k 2^(8k)·(b_k − 128) (mod 2^32), each digit in [−128, 127] — the
// digit a borrow-propagating split (low byte read as signed, the rest
// shifted down) gives, in one addition a word rather than a carry chain.
// Likewise for 16-bit digits.
const (
	bias8  = 0x80808080
	bias16 = 0x80008000
)

// digits8 writes v as four signed bytes, v ≡ Σ 2^(8k) d[k] (mod 2^32).
func digits8(v uint32) [4]int8 {
	w := v + bias8
	return [4]int8{int8(uint8(w) ^ 0x80), int8(uint8(w>>8) ^ 0x80), int8(uint8(w>>16) ^ 0x80), int8(uint8(w>>24) ^ 0x80)}
}

// digits16 writes v as two signed 16-bit digits, v ≡ d0 + 2^16 d1 (mod 2^32).
func digits16(v uint32) (d0, d1 int16) {
	w := v + bias16
	return int16(uint16(w) ^ 0x8000), int16(uint16(w>>16) ^ 0x8000)
}
