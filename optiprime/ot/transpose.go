package ot

// transpose64 transposes a 64×64 bit matrix in place: afterwards bit i of
// a[k] is what bit k of a[i] was (bit 0 is the least significant).
func transpose64(a *[64]uint64) {
	m := uint64(0x00000000FFFFFFFF)
	for j := 32; j != 0; j >>= 1 {
		for k := 0; k < 64; k = ((k | j) + 1) &^ j {
			t := ((a[k] >> uint(j)) ^ a[k|j]) & m
			a[k] ^= t << uint(j)
			a[k|j] ^= t
		}
		m ^= m << uint(j>>1)
	}
}

// block is one 128-bit row of the IKNP matrix; bit i of the row is base OT i
// (word i/64, bit i%64).
type block [2]uint64

func (b block) xor(c block) block { return block{b[0] ^ c[0], b[1] ^ c[1]} }

// transposeCols turns 128 columns of `words` 64-bit words (column i, word w,
// bit t is OT w*64+t) into words*64 rows.
func transposeCols(cols *[kappa][]uint64, words int) []block {
	rows := make([]block, words*64)
	var m [64]uint64
	for g := 0; g < 2; g++ {
		for w := 0; w < words; w++ {
			for i := 0; i < 64; i++ {
				m[i] = cols[g*64+i][w]
			}
			transpose64(&m)
			for t := 0; t < 64; t++ {
				rows[w*64+t][g] = m[t]
			}
		}
	}
	return rows
}
