// Package matvec: temporary pure-Go stand-in, replaced by the helper's kernel at merge.
package matvec

type Query struct{ q []uint32 }

func NewQuery(q []uint32) *Query { return &Query{q: append([]uint32(nil), q...)} }
func (q *Query) Len() int        { return len(q.q) }

func MulAdd(acc []uint32, tile []byte, q *Query, off int) {
	cols := len(tile) / len(acc)
	v := q.q[off : off+cols]
	for i := range acc {
		row := tile[i*cols : (i+1)*cols]
		var s uint32
		for j, d := range row {
			s += uint32(d) * v[j]
		}
		acc[i] += s
	}
}

func MulAddBatch(accs [][]uint32, tile []byte, qs []*Query, off int) {
	for b := range qs {
		MulAdd(accs[b], tile, qs[b], off)
	}
}
