package lwepir

import (
	"context"
	"fmt"
	"math/bits"
	"runtime"
)

// PackedAnswer is a packed answer: for each pack, the a-part of its RLWE
// ciphertext rounded to 2^LogQA (query-independent: the same in every
// answer of a generation) and its b-part rounded to 2^LogQB.
type PackedAnswer struct {
	A [][]uint32 // Packs × N, below 2^LogQA; shared with the Packer: read only
	B [][]uint32 // Packs × N, below 2^LogQB
}

// Prepared is the key-switching half of one query's packed answer: for each
// pack, Σ over the tree's merge nodes of their key switchings' b-parts,
// carried to the root (coefficient domain, modulo Q). It depends on the
// query's keys and the precomputed digits only, not on the scan: it can
// run beside the scan, or before it.
type Prepared struct {
	c [][]uint64
}

// SumQuery is Σ_j q_j mod 2^32 over a query vector: what centres the
// database's bytes (the answer's b_i is (D·q)_i − 128·Σ_j q_j).
func SumQuery(q []uint32) uint32 {
	var s uint32
	for _, v := range q {
		s += v
	}
	return s
}

// Prepare computes the key-switching halves of a batch of queries' answers
// from their keys: one pass over the precomputed digits for the batch
// (each node's digits are read once and multiplied into every query's
// sums while in cache), packs spread over workers goroutines (at most
// GOMAXPROCS; ≤ 0: GOMAXPROCS). What cannot be shared is each query's
// products with its own keys: Digits·N products a merge node. Each stored
// node's work for the batch holds a core of gate (nil: none), as the
// scan's blocks do.
func (pk *Packer) Prepare(ctx context.Context, keys []*PackingKeys, workers int, gate Gate) ([]*Prepared, error) {
	for i, k := range keys {
		if err := pk.pr.checkKeys(k); err != nil {
			return nil, fmt.Errorf("query %d: %w", i, err)
		}
	}
	if workers <= 0 || workers > runtime.GOMAXPROCS(0) {
		workers = runtime.GOMAXPROCS(0)
	}
	n := pk.p.N()
	out := make([]*Prepared, len(keys))
	for i := range out {
		out[i] = &Prepared{c: make([][]uint64, pk.packs)}
		for k := range out[i].c {
			out[i].c[k] = make([]uint64, n)
		}
	}
	// Units of work: one pack for a group of queries. A batch is cut in
	// groups only when there are fewer packs than workers.
	groups := 1
	if pk.packs < workers {
		groups = min(len(keys), (workers+pk.packs-1)/pk.packs)
	}
	kvs := make([][][]uint64, len(keys))
	for i, k := range keys {
		if pk.pr.pp.TwoKeys {
			kvs[i] = pk.keyTableTwo(k)
		} else {
			kvs[i] = pk.keyTable(k)
		}
	}
	err := each(ctx, pk.packs*groups, workers, func(u int) error {
		k, g := u%pk.packs, u/pk.packs
		lo, hi := g*len(keys)/groups, (g+1)*len(keys)/groups
		dst := make([][]uint64, hi-lo)
		for i := range dst {
			dst[i] = out[lo+i].c[k]
		}
		if pk.guard != nil {
			return pk.guard(func() error { return pk.prepareRange(ctx, k, kvs[lo:hi], dst, gate) })
		}
		return pk.prepareRange(ctx, k, kvs[lo:hi], dst, gate)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// prepareRange replays pack k's stored nodes for the queries whose key
// tables are kvs (keyTable), leaving each query's root sum in dst
// (coefficient domain).
func (pk *Packer) prepareRange(ctx context.Context, k int, kvs [][][]uint64, dst [][]uint64, gate Gate) error {
	if pk.pr.pp.TwoKeys {
		return pk.prepareTwoKeys(ctx, k, kvs, dst, gate)
	}
	pr, n := pk.pr, pk.p.N()
	ell, q, mred := pr.pp.Digits, pr.q, pr.mred
	// bufs[query][level][side]: a node's sum, kept until its parent runs.
	bufs := make([][][2][]uint64, len(kvs))
	for i := range bufs {
		bufs[i] = make([][2][]uint64, pr.logN+1)
		for l := pk.absorb; l < len(bufs[i]); l++ {
			bufs[i][l] = [2][]uint64{make([]uint64, n), make([]uint64, n)}
		}
	}
	u := make([]uint64, n)
	var ps [][][]uint64 // the node's factors, each in pieces
	var ks [][]uint64
	polys, nodes := pk.polys[k], pk.nodes[k]
	idx := 0
	next := func() (packNode, error) {
		if idx >= len(nodes) {
			return packNode{}, fmt.Errorf("lwepir: pack %d: more nodes replayed than stored", k)
		}
		idx++
		node := nodes[idx-1]
		ps = ps[:0]
		for t := range node.terms {
			ps = append(ps, polys[node.off/n+t])
		}
		return node, nil
	}
	pw := pk.pieceWords
	var sp, sk [][]uint64 // one piece of each factor, and of each key
	// dot sets out to the node's dot product, piece by piece.
	dot := func(out []uint64, ks [][]uint64) {
		for pi, o := 0, 0; o < n; pi, o = pi+1, o+pw {
			sp, sk = sp[:0], sk[:0]
			for t := range ps {
				sp, sk = append(sp, ps[t][pi]), append(sk, ks[t][o:o+pw])
			}
			dotMontTerms(out[o:o+pw], sp, sk, q, mred)
		}
	}
	// walk returns whether the subtree holds a row (its sum is then in
	// bufs[·][level][side]).
	var walk func(level, off, step, side int) (bool, error)
	walk = func(level, off, step, side int) (bool, error) {
		if level == pk.absorb {
			if !pk.present(k, level, off, step) {
				return false, nil
			}
			node, err := next()
			if err != nil {
				return false, err
			}
			release, err := enter(ctx, gate)
			if err != nil {
				return false, err
			}
			for qi, kv := range kvs {
				ks = ks[:0]
				for _, t := range node.terms {
					ks = append(ks, kv[t])
				}
				dot(bufs[qi][level][side], ks)
			}
			release()
			return true, nil
		}
		ep, err := walk(level-1, off, 2*step, 0)
		if err != nil {
			return false, err
		}
		op, err := walk(level-1, off+step, 2*step, 1)
		if err != nil || (!ep && !op) {
			return false, err
		}
		if err := ctx.Err(); err != nil {
			return false, err
		}
		node, err := next()
		if err != nil {
			return false, err
		}
		if node.level != level || len(node.terms) != ell {
			return false, fmt.Errorf("lwepir: pack %d: stored node of level %d replayed at %d", k, node.level, level)
		}
		auto, mono := pr.auto[level], pr.mono[level]
		release, err := enter(ctx, gate)
		if err != nil {
			return false, err
		}
		defer release()
		for qi, kv := range kvs {
			ks = ks[:0]
			for _, t := range node.terms {
				ks = append(ks, kv[t])
			}
			// out = e + t + τ(e − t) + Σ_j g_j·K0_j, t = X^(N/2^level)·o.
			out := bufs[qi][level][side]
			var e, o []uint64
			if ep {
				e = bufs[qi][level-1][0]
			}
			if op {
				o = bufs[qi][level-1][1]
			}
			if e != nil && o != nil {
				mergeSumsBoth(out, u, e, o, mono, q, mred)
			} else {
				mergeSums(out, u, e, o, mono, q, mred)
			}
			for pi, o := 0, 0; o < n; pi, o = pi+1, o+pw {
				e := o + pw
				switch ell {
				case 3:
					mergeAutoMac3(out[o:e], u, auto[o:e], ps[0][pi], ps[1][pi], ps[2][pi], ks[0][o:e], ks[1][o:e], ks[2][o:e], q, mred)
					continue
				case 2:
					mergeAutoMac2(out[o:e], u, auto[o:e], ps[0][pi], ps[1][pi], ks[0][o:e], ks[1][o:e], q, mred)
					continue
				}
				sp, sk = sp[:0], sk[:0]
				for t := range ps {
					sp, sk = append(sp, ps[t][pi]), append(sk, ks[t][o:e])
				}
				mergeAutoMac(out[o:e], u, auto[o:e], sp, sk, q, mred)
			}
		}
		return true, nil
	}
	if _, err := walk(pr.logN, 0, 1, 0); err != nil {
		return err
	}
	if idx != len(nodes) {
		return fmt.Errorf("lwepir: pack %d replayed %d nodes of %d", k, idx, len(nodes))
	}
	p := pr.r.NewPoly()
	for qi := range kvs {
		copy(p.Coeffs[0], bufs[qi][pr.logN][0])
		pr.r.INTT(p, p)
		copy(dst[qi], p.Coeffs[0])
	}
	return nil
}

// mergeSums sets s = e + t and u = e − t, t = o·mono (mono in Montgomery
// form); a nil e or o is zero.
func mergeSums(s, u, e, o, mono []uint64, q, mred uint64) {
	for i := range s {
		var ei, t uint64
		if e != nil {
			ei = e[i]
		}
		if o != nil {
			hi, lo := bits.Mul64(o[i], mono[i])
			t = montReduce(hi, lo, q, mred)
		}
		x := ei + t
		if x >= q {
			x -= q
		}
		s[i] = x
		y := ei + q - t
		if y >= q {
			y -= q
		}
		u[i] = y
	}
}

// mergeAutoMac adds u permuted by the automorphism's NTT index and the key
// switching Σ_j ds_j·ks_j (ds in Montgomery form) to out: one 128-bit sum
// and one reduction a coefficient.
func mergeAutoMac(out, u []uint64, auto []uint64, ds, ks [][]uint64, q, mred uint64) {
	for i := range out {
		var hi, lo uint64
		for j := range ds {
			h, l := bits.Mul64(ds[j][i], ks[j][i])
			var c uint64
			lo, c = bits.Add64(lo, l, 0)
			hi += h + c
		}
		r := montReduce(hi, lo, q, mred) + out[i]
		if r >= q {
			r -= q
		}
		r += u[auto[i]]
		if r >= q {
			r -= q
		}
		out[i] = r
	}
}

// Finish completes a query's packed answer from its prepared half, its
// query vector and the scan's column D·q: each row's b_i = (D·q)_i −
// 128·Σ q_j, rounded from 2^32 to Q, lands at its coefficient; each
// pack is then rounded down to 2^LogQB.
func (pk *Packer) Finish(prep *Prepared, sumQ uint32, column []uint32) (*PackedAnswer, error) {
	if prep == nil || len(prep.c) != pk.packs || len(column) != pk.shape.Rows {
		return nil, fmt.Errorf("%w: a column of %d words for %d rows", ErrParams, len(column), pk.shape.Rows)
	}
	pr, n := pk.pr, pk.p.N()
	for _, c := range prep.c {
		if len(c) != n {
			return nil, fmt.Errorf("%w: prepared sums of another ring", ErrParams)
		}
	}
	a := &PackedAnswer{A: pk.aOut, B: make([][]uint32, pk.packs)}
	for k := range a.B {
		a.B[k] = make([]uint32, n)
	}
	b := make([]uint64, n)
	for k := range pk.packs {
		copy(b, prep.c[k])
		for r := 0; r < pk.perPack; r++ {
			i := k*pk.perPack + r
			if i >= pk.shape.Rows {
				break
			}
			c := r * pk.stride
			x := b[c] + pr.scaleFrom32(column[i]-centre*sumQ)
			if x >= pr.q {
				x -= pr.q
			}
			b[c] = x
		}
		for c, x := range b {
			a.B[k][c] = pr.roundTo(x, pr.pp.LogQB)
		}
	}
	return a, nil
}

// Pack is Prepare and Finish for one query: its answer from its keys, its
// vector and the scan's column.
func (pk *Packer) Pack(ctx context.Context, keys *PackingKeys, query, column []uint32) (*PackedAnswer, error) {
	if len(query) != pk.shape.Cols {
		return nil, fmt.Errorf("%w: query vector of the wrong length", ErrParams)
	}
	preps, err := pk.Prepare(ctx, []*PackingKeys{keys}, 0, nil)
	if err != nil {
		return nil, err
	}
	return pk.Finish(preps[0], SumQuery(query), column)
}
