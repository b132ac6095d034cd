package matvec

// mulAddGo is the portable kernel: rows in fours, so that each query word
// loaded serves four rows, and each block of rows (in cache) serves every
// query before the next is read.
func mulAddGo(accs [][]uint32, tile []byte, qs []*Query, off int) {
	rows := len(accs[0])
	cols := len(tile) / rows
	ws := make([][]uint32, len(qs))
	for b, q := range qs {
		ws[b] = q.words[off : off+cols]
	}
	mulAddWords(accs, tile, ws, 0, rows)
}

// mulAddWords adds to accs[b][i], for rows lo ≤ i < hi, row i of tile (of
// len(ws[b]) columns, one width for all b) times ws[b].
func mulAddWords(accs [][]uint32, tile []byte, ws [][]uint32, lo, hi int) {
	cols := len(ws[0])
	i := lo
	for ; i+4 <= hi; i += 4 {
		r0 := tile[i*cols : (i+1)*cols]
		r1 := tile[(i+1)*cols : (i+2)*cols]
		r2 := tile[(i+2)*cols : (i+3)*cols]
		r3 := tile[(i+3)*cols : (i+4)*cols]
		for b, w := range ws {
			var s0, s1, s2, s3 uint32
			w = w[:len(r0)]
			r1, r2, r3 := r1[:len(w)], r2[:len(w)], r3[:len(w)]
			for j, x := range w {
				s0 += uint32(r0[j]) * x
				s1 += uint32(r1[j]) * x
				s2 += uint32(r2[j]) * x
				s3 += uint32(r3[j]) * x
			}
			a := accs[b][i : i+4]
			a[0] += s0
			a[1] += s1
			a[2] += s2
			a[3] += s3
		}
	}
	for ; i < hi; i++ {
		r := tile[i*cols : (i+1)*cols]
		for b, w := range ws {
			accs[b][i] += dot(r, w)
		}
	}
}

// dot is row · w modulo 2^32 (len(row) == len(w)).
func dot(row []byte, w []uint32) uint32 {
	var s uint32
	w = w[:len(row)]
	for j, x := range row {
		s += uint32(x) * w[j]
	}
	return s
}

// words32 returns q[lo:hi] as uint32, from whichever layout q has.
func (q *Query) words32(lo, hi int) []uint32 {
	if q.words != nil {
		return q.words[lo:hi]
	}
	out := make([]uint32, hi-lo)
	n := q.n
	switch {
	case q.planes8 != nil:
		for j := range out {
			var v uint32
			for k := 3; k >= 0; k-- {
				v = v<<8 + uint32(int32(q.planes8[k*n+lo+j]))
			}
			out[j] = v
		}
	case q.planes16 != nil:
		for j := range out {
			out[j] = uint32(int32(q.planes16[lo+j])) + uint32(int32(q.planes16[n+lo+j]))<<16
		}
	}
	return out
}

// mulAddTail does what the vector kernels leave: columns [width, cols) of
// rows [0, rows4), and every column of rows [rows4, rows).
func mulAddTail(accs [][]uint32, tile []byte, qs []*Query, off, rows4, width int) {
	rows := len(accs[0])
	cols := len(tile) / rows
	if width == cols && rows4 == rows {
		return
	}
	ws := make([][]uint32, len(qs))
	for b, q := range qs {
		ws[b] = q.words32(off, off+cols)
	}
	if width < cols {
		for i := 0; i < rows4; i++ {
			r := tile[i*cols+width : (i+1)*cols]
			for b, w := range ws {
				accs[b][i] += dot(r, w[width:])
			}
		}
	}
	mulAddWords(accs, tile, ws, rows4, rows)
}
