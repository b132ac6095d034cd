package nonlinear

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/ot"
	"github.com/rosemary-fhe/rosemary/optiprime/share"
)

// Millionaires returns this party's boolean shares (0/1) of 1{a_i > b_i},
// where party 0 passes a and party 1 passes b, both k-bit unsigned values
// (1 ≤ k ≤ 64; higher bits must be 0).
func (p *Party) Millionaires(x []uint64, k int) ([]uint8, error) {
	out, err := p.millionaires([]compareBatch{{x, k}})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// compareBatch is one batch of a millionaires' run: values of k bits.
type compareBatch struct {
	x []uint64
	k int
}

// millionaires compares several batches, each of its own width, in one
// run: their leaves in the same passes and their trees level by level in
// the same AND batches, so the run takes the flights of its widest batch
// and the bytes of all. A single batch is Millionaires.
func (p *Party) millionaires(batches []compareBatch) ([][]uint8, error) {
	for _, b := range batches {
		if b.k < 1 || b.k > 64 {
			return nil, fmt.Errorf("nonlinear: millionaires on %d bits, want 1..64", b.k)
		}
		for i, v := range b.x {
			if v&^share.Mask(b.k) != 0 {
				return nil, fmt.Errorf("nonlinear: millionaires input %d = %#x exceeds %d bits", i, v, b.k)
			}
		}
	}
	defer p.step(StepMillionaires)()
	// Leaves: instance i*q+j of a batch compares block j of its element i,
	// by 1-out-of-16 OT from four silent correlated OTs (Naor–Pinkas); in
	// passes, two flights each.
	gt := make([][]uint8, len(batches))
	eq := make([][]uint8, len(batches))
	for bi, b := range batches {
		q := blocks(b.k)
		gt[bi], eq[bi] = make([]uint8, len(b.x)*q), make([]uint8, len(b.x)*q)
	}
	for _, pass := range leafPasses(batches, gt, eq) {
		if err := p.leaves(pass); err != nil {
			return nil, fmt.Errorf("nonlinear: millionaires leaves: %w", err)
		}
	}
	return p.combine(batches, gt, eq)
}

// blocks is the leaves of a k-bit comparison.
func blocks(k int) int { return (k + blockBits - 1) / blockBits }

// millionairesChunk bounds the elements of one leaf frame, so that the
// sender's hashed keys (9 blocks × 4 OTs × 2 keys per element at ℓ = 37)
// stay near 40 MB while it answers a frame.
var millionairesChunk = 1 << 16

// millionairesPassOTs bounds the correlated OTs one pass of leaves draws:
// a pass sends all its leaf frames in one flight and answers them in the
// next, so the receiver holds every frame's OTs until the answers arrive
// (2^24: 256 MB of pool per party). Larger batches run several passes of
// leaves (two flights each); the tree combines the whole batch, two
// flights a level. Before, each 2^16 elements ran leaves and tree on their
// own, 10–12 flights each: ResNet-18's first ReLU (802,816 values) took 13
// such passes, now 4 + 8 flights.
var millionairesPassOTs = 1 << 24

// millionairesPassLen is the elements of k bits one pass of leaves
// compares: a whole number of leaf frames within millionairesPassOTs.
func millionairesPassLen(k int) int {
	return framesPerPass(blocks(k)) * millionairesChunk
}

// framesPerPass is the full frames of q-block elements one pass holds.
func framesPerPass(q int) int {
	return max(1, millionairesPassOTs/(q*blockBits)/millionairesChunk)
}

// leafFrame is one frame of leaves: elements of one batch, q blocks each,
// and where their instances' shares go.
type leafFrame struct {
	x      []uint64
	q      int
	gt, eq []uint8
}

// frameSpan is a leaf frame's elements lo..hi of batch b.
type frameSpan struct{ b, lo, hi int }

// leafPlan cuts batches of ns[b] elements of ks[b] bits into frames of
// millionairesChunk (one frame, maybe empty, for an empty batch) and the
// frames, batch after batch, into passes: a frame of q-block elements
// weighs 1/framesPerPass(q) of a pass (a short frame as a full one), and a
// pass takes frames while they fit. A single batch's passes are
// millionairesPassLen elements.
func leafPlan(ns, ks []int) [][]frameSpan {
	var passes [][]frameSpan
	var cur []frameSpan
	weight := 0.0
	for b, n := range ns {
		w := 1 / float64(framesPerPass(blocks(ks[b])))
		for lo := 0; lo < n || lo == 0; lo += millionairesChunk {
			hi := min(lo+millionairesChunk, n)
			if len(cur) > 0 && weight+w > 1+1e-9 {
				passes, cur, weight = append(passes, cur), nil, 0
			}
			cur = append(cur, frameSpan{b, lo, hi})
			weight += w
			if hi == n {
				break
			}
		}
	}
	return append(passes, cur)
}

// leafPasses is leafPlan's passes over the batches, each frame with its
// elements and where their instances' shares go.
func leafPasses(batches []compareBatch, gt, eq [][]uint8) [][]leafFrame {
	ns, ks := make([]int, len(batches)), make([]int, len(batches))
	for b, bt := range batches {
		ns[b], ks[b] = len(bt.x), bt.k
	}
	plan := leafPlan(ns, ks)
	passes := make([][]leafFrame, len(plan))
	for i, spans := range plan {
		for _, sp := range spans {
			q := blocks(ks[sp.b])
			passes[i] = append(passes[i], leafFrame{x: batches[sp.b].x[sp.lo:sp.hi], q: q,
				gt: gt[sp.b][sp.lo*q : sp.hi*q], eq: eq[sp.b][sp.lo*q : sp.hi*q]})
		}
	}
	return passes
}

// leaves is one pass of leaves: all its frames sent in one flight and
// answered in the next. It fills this party's shares gt and eq of the
// frames' instances.
func (p *Party) leaves(pass []leafFrame) error {
	ots := 0
	for _, f := range pass {
		ots += len(f.x) * f.q * blockBits
	}
	if err := p.reserve(ots, 0); err != nil {
		return err
	}
	if p.id == 0 {
		return p.leavesSend(pass)
	}
	return p.leavesReceive(pass)
}

// combine runs the batches' trees, level by level, each level's ANDs of
// all batches in one call, and returns the shares of each element's
// comparison, per batch.
func (p *Party) combine(batches []compareBatch, gt, eq [][]uint8) ([][]uint8, error) {
	cur := make([]int, len(batches))
	for bi, b := range batches {
		cur[bi] = blocks(b.k)
	}
	// Combine adjacent blocks, low (even) with high (odd), level by level.
	for anyAbove1(cur) {
		// The level's pairs, batch after batch: batch bi's from offset
		// offs[bi], element i's c/2 pairs together.
		offs := make([]int, len(batches))
		total := 0
		for bi, c := range cur {
			offs[bi] = total
			if c > 1 {
				total += len(batches[bi].x) * (c / 2)
			}
		}
		a := make([]uint8, total)
		b := make([]uint64, total)
		for bi, c := range cur {
			if c <= 1 {
				continue
			}
			gtb, eqb, off, pairs := gt[bi], eq[bi], offs[bi], c/2
			split(len(batches[bi].x), func(lo, hi int) {
				for i := lo; i < hi; i++ {
					for t := 0; t < pairs; t++ {
						l, h, o := i*c+2*t, i*c+2*t+1, off+i*pairs+t
						a[o] = eqb[h]
						b[o] = uint64(gtb[l]) | uint64(eqb[l])<<1
					}
				}
			})
		}
		z, err := p.and(a, b, 2)
		if err != nil {
			return nil, fmt.Errorf("nonlinear: millionaires tree level: %w", err)
		}
		for bi, c := range cur {
			if c <= 1 {
				continue
			}
			n, pairs, next, off := len(batches[bi].x), c/2, (c+1)/2, offs[bi]
			ngt := make([]uint8, n*next)
			neq := make([]uint8, n*next)
			gtb, eqb := gt[bi], eq[bi]
			split(n, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					for t := 0; t < pairs; t++ {
						h := i*c + 2*t + 1
						zz := z[off+i*pairs+t]
						ngt[i*next+t] = gtb[h] ^ uint8(zz&1)
						neq[i*next+t] = uint8(zz >> 1)
					}
					if c%2 == 1 { // the top block has no partner yet
						ngt[i*next+next-1] = gtb[i*c+c-1]
						neq[i*next+next-1] = eqb[i*c+c-1]
					}
				}
			})
			gt[bi], eq[bi], cur[bi] = ngt, neq, next
		}
	}
	return gt, nil
}

func anyAbove1(cur []int) bool {
	for _, c := range cur {
		if c > 1 {
			return true
		}
	}
	return false
}

// leavesSend is party 0's side of a pass's leaves: it receives every
// frame's request, then answers each. Instance idx's 16 two-bit messages,
// packed (message v at bits 2v, 2v+1): low bit 1{aj > v} ⊕ g, high bit
// 1{aj = v} ⊕ e, for the fresh random shares g, e of this party. Shifts
// by the secret aj, not a table indexed by it (constant time).
func (p *Party) leavesSend(pass []leafFrame) error {
	const N = 1 << blockBits
	us := make([][]byte, len(pass))
	for f := range us {
		var err error
		if us[f], err = p.conn.RecvType(typeLeafU); err != nil {
			return err
		}
	}
	const lowBits, highBits = 0x55555555, 0xaaaaaaaa
	for f, u := range us {
		fr := pass[f]
		q := fr.q
		words := make([]uint64, len(fr.x)*q)
		p.splitRand(len(fr.x), func(lo, hi int, prg *share.PRG) {
			bits := prg.Bits(2 * (hi - lo) * q)
			for i := lo; i < hi; i++ {
				a := fr.x[i]
				for j := 0; j < q; j++ {
					idx := i*q + j
					aj := a >> (j * blockBits) & (N - 1)
					g, e := bits[2*(idx-lo*q)], bits[2*(idx-lo*q)+1]
					fr.gt[idx], fr.eq[idx] = g, e
					w := (uint64(1)<<(2*aj)-1)&lowBits | uint64(2)<<(2*aj)
					words[idx] = w ^ lowBits&-uint64(g) ^ highBits&-uint64(e)
				}
			}
		})
		reply, err := p.snd.ReplyNPacked(u, words, blockBits, 2)
		if err != nil {
			return err
		}
		if err := p.conn.Send(typeLeafReply, reply); err != nil {
			return err
		}
	}
	return nil
}

// leavesReceive is party 1's side: it sends every frame's request in one
// flight, then finishes each frame with its answer.
func (p *Party) leavesReceive(pass []leafFrame) error {
	const N = 1 << blockBits
	reqs := make([]*ot.Request, len(pass))
	for f, fr := range pass {
		q := fr.q
		choices := make([]uint16, len(fr.x)*q)
		split(len(fr.x), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				b := fr.x[i]
				for j := 0; j < q; j++ {
					choices[i*q+j] = uint16(b >> (j * blockBits) & (N - 1))
				}
			}
		})
		req, u, err := p.rcv.RequestN(choices, blockBits)
		if err != nil {
			return err
		}
		if err := p.conn.Send(typeLeafU, u); err != nil {
			return err
		}
		reqs[f] = req
	}
	for f, req := range reqs {
		reply, err := p.conn.RecvType(typeLeafReply)
		if err != nil {
			return err
		}
		got, err := p.rcv.FinishN(req, reply, 2)
		if err != nil {
			return err
		}
		reqs[f] = nil
		fr := pass[f]
		split(len(got), func(lo, hi int) {
			for idx := lo; idx < hi; idx++ {
				m := got[idx]
				fr.gt[idx], fr.eq[idx] = uint8(m&1), uint8(m>>1)
			}
		})
	}
	return nil
}

// Carry returns boolean shares of 1{x0_i + x1_i ≥ 2^k}, where each party
// passes its k-bit value.
func (p *Party) Carry(x []uint64, k int) ([]uint8, error) {
	b, err := p.carryBatch(x, k)
	if err != nil {
		return nil, err
	}
	return p.Millionaires(b.x, b.k)
}

// carryBatch is the millionaires' batch whose result is Carry(x, k):
// x0 > 2^k − 1 − x1, party 1 passing the right side.
func (p *Party) carryBatch(x []uint64, k int) (compareBatch, error) {
	if p.id == 0 || k < 1 || k > 64 {
		return compareBatch{x, k}, nil
	}
	m := share.Mask(k)
	y := make([]uint64, len(x))
	for i, v := range x {
		if v&^m != 0 {
			return compareBatch{}, fmt.Errorf("nonlinear: carry input %d = %#x exceeds %d bits", i, v, k)
		}
		y[i] = m - v
	}
	return compareBatch{y, k}, nil
}

// carries returns Carry of each batch (values, width) from one
// millionaires' run: the flights of the widest, the bytes of all.
func (p *Party) carries(batches ...compareBatch) ([][]uint8, error) {
	in := make([]compareBatch, len(batches))
	for i, b := range batches {
		var err error
		if in[i], err = p.carryBatch(b.x, b.k); err != nil {
			return nil, err
		}
	}
	return p.millionaires(in)
}

// DReLU returns boolean shares of 1{x ≥ 0} for shared x (signed ℓ-bit).
func (p *Party) DReLU(x []uint64) ([]uint8, error) {
	return p.dreluLow(x, p.ring.Bits())
}

// dreluLow is DReLU over the low w bits of the shares (2 ≤ w ≤ ℓ): shares
// mod 2^ℓ reduce locally to shares mod 2^w, whose top bit is the sign of
// x as long as x lies in [−2^{w−1}, 2^{w−1}). A narrower comparison is a
// shorter millionaires' run (fewer leaves and tree levels).
func (p *Party) dreluLow(x []uint64, w int) ([]uint8, error) {
	if w < 2 || w > p.ring.Bits() {
		return nil, fmt.Errorf("nonlinear: DReLU over %d of %d bits", w, p.ring.Bits())
	}
	low := make([]uint64, len(x))
	for i, v := range x {
		low[i] = v & share.Mask(w-1)
	}
	c, err := p.Carry(low, w-1)
	if err != nil {
		return nil, fmt.Errorf("nonlinear: DReLU: %w", err)
	}
	d := make([]uint8, len(x))
	for i, v := range x {
		d[i] = uint8(v>>(w-1)&1) ^ c[i] ^ uint8(1-p.id) // party 0 adds the constant 1
	}
	return d, nil
}

// Mux returns arithmetic shares of d_i·x_i for a shared bit d (boolean
// shares) and shared x (arithmetic shares). Two flights.
func (p *Party) Mux(d []uint8, x []uint64) ([]uint64, error) {
	if len(d) != len(x) {
		return nil, fmt.Errorf("nonlinear: mux of %d bits and %d values", len(d), len(x))
	}
	r := p.ring
	for i := range x {
		if d[i] > 1 {
			return nil, fmt.Errorf("nonlinear: mux bit %d is %d", i, d[i])
		}
	}
	delta := make([]uint64, len(x))
	split(len(x), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			delta[i] = r.Mul(1-2*uint64(d[i]), x[i]) // (1-2d)·x
		}
	})
	xs, ys, err := p.biCorrelated(d, delta, r)
	if err != nil {
		return nil, fmt.Errorf("nonlinear: mux: %w", err)
	}
	out := make([]uint64, len(x))
	split(len(x), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = r.Add(r.Sub(r.Mul(uint64(d[i]), x[i]), xs[i]), ys[i])
		}
	})
	return out, nil
}

// ReLU returns shares of max(x, 0) for shared signed x.
func (p *Party) ReLU(x []uint64) ([]uint64, error) {
	d, err := p.DReLU(x)
	if err != nil {
		return nil, err
	}
	return p.Mux(d, x)
}

// B2A converts boolean shares of bits into arithmetic shares in ring r, with
// one correlated OT per bit (party 0 sends). Two flights.
func (p *Party) B2A(d []uint8, r share.Ring) ([]uint64, error) {
	prod, err := p.crossProduct(d, r)
	if err != nil {
		return nil, fmt.Errorf("nonlinear: B2A: %w", err)
	}
	for i, b := range d { // d0 ⊕ d1 = d0 + d1 − 2·d0·d1
		prod[i] = r.Sub(uint64(b), r.Add(prod[i], prod[i]))
	}
	return prod, nil
}

// crossProduct returns arithmetic shares in r of d0_i·d1_i, the product of
// the two parties' own bits, with one correlated OT per bit: party 0 sends
// with Δ = d0 and gets x, party 1 chooses with d1 and gets x + d0·d1; the
// shares are −x and x + d0·d1. Two flights.
func (p *Party) crossProduct(d []uint8, r share.Ring) ([]uint64, error) {
	for i, b := range d {
		if b > 1 {
			return nil, fmt.Errorf("bit %d is %d", i, b)
		}
	}
	if err := p.reserve(len(d), 0); err != nil {
		return nil, err
	}
	if p.id == 0 {
		u, err := p.conn.RecvType(typeB2AU)
		if err != nil {
			return nil, err
		}
		delta := make([]uint64, len(d))
		for i, b := range d {
			delta[i] = uint64(b)
		}
		x, reply, err := p.snd.ReplyCorrelated(u, delta, r)
		if err != nil {
			return nil, err
		}
		if err := p.conn.Send(typeB2AReply, reply); err != nil {
			return nil, err
		}
		return r.SubVec(x, make([]uint64, len(x)), x), nil
	}
	req, u, err := p.rcv.Request(d)
	if err != nil {
		return nil, err
	}
	if err := p.conn.Send(typeB2AU, u); err != nil {
		return nil, err
	}
	reply, err := p.conn.RecvType(typeB2AReply)
	if err != nil {
		return nil, err
	}
	return p.rcv.FinishCorrelated(req, reply, r)
}

// Truncate returns shares of ⌊x/2^s⌋ − c_i with c_i ∈ {0, 1}, for shared
// signed x and 1 ≤ s < ℓ (arithmetic right shift off by at most one).
func (p *Party) Truncate(x []uint64, s int) ([]uint64, error) {
	r := p.ring
	l := r.Bits()
	if s < 1 || s >= l {
		return nil, fmt.Errorf("nonlinear: truncation by 2^%d in a %d-bit ring", s, l)
	}
	X := make([]uint64, len(x))
	for i, v := range x {
		X[i] = r.Reduce(v)
		if p.id == 0 {
			X[i] = r.Add(X[i], 1<<(l-1))
		}
	}
	w, err := p.Carry(X, l)
	if err != nil {
		return nil, fmt.Errorf("nonlinear: truncate: %w", err)
	}
	rs, err := share.NewRing(s)
	if err != nil {
		return nil, fmt.Errorf("nonlinear: truncate: %w", err)
	}
	wa, err := p.B2A(w, rs) // shares of w mod 2^s
	if err != nil {
		return nil, fmt.Errorf("nonlinear: truncate: %w", err)
	}
	out := make([]uint64, len(x))
	for i := range x {
		v := r.Sub(X[i]>>s, wa[i]<<(l-s))
		if p.id == 0 {
			v = r.Sub(v, 1<<(l-1-s))
		}
		out[i] = v
	}
	return out, nil
}

// TruncateExact returns shares of ⌊x/2^s⌋ exactly, for shared signed x and
// 1 ≤ s < ℓ. Beside Truncate's wrap bit w it computes the carry
// c = 1{(X0 mod 2^s) + (X1 mod 2^s) ≥ 2^s} of the low halves (millionaires
// on s bits) and adds it back: with U = x + 2^{ℓ-1} = X0 + X1 − w·2^ℓ,
// ⌊U/2^s⌋ = (X0 >> s) + (X1 >> s) + c − w·2^{ℓ-s}. The two comparisons run
// as one millionaires' (their leaves in the same pass, their trees' levels
// in the same AND batches: the flights of the ℓ-bit one alone), and both
// bits are converted to arithmetic shares in one B2A. This costs a
// millionaires' on s bits' bytes and n more B2A bits beyond Truncate, and
// makes a fixed-point network's private result equal its plaintext
// reference bit for bit.
func (p *Party) TruncateExact(x []uint64, s int) ([]uint64, error) {
	r := p.ring
	l := r.Bits()
	if s < 1 || s >= l {
		return nil, fmt.Errorf("nonlinear: truncation by 2^%d in a %d-bit ring", s, l)
	}
	n := len(x)
	X := make([]uint64, n)
	low := make([]uint64, n)
	for i, v := range x {
		X[i] = r.Reduce(v)
		if p.id == 0 {
			X[i] = r.Add(X[i], 1<<(l-1))
		}
		low[i] = X[i] & share.Mask(s)
	}
	wc, err := p.carries(compareBatch{X, l}, compareBatch{low, s})
	if err != nil {
		return nil, fmt.Errorf("nonlinear: exact truncate: %w", err)
	}
	a, err := p.B2A(append(wc[0], wc[1]...), r)
	if err != nil {
		return nil, fmt.Errorf("nonlinear: exact truncate: %w", err)
	}
	out := make([]uint64, n)
	for i := range x {
		v := r.Add(r.Sub(X[i]>>s, a[i]<<(l-s)), a[n+i])
		if p.id == 0 {
			v = r.Sub(v, 1<<(l-1-s))
		}
		out[i] = v
	}
	return out, nil
}

// TruncateNonneg returns shares of ⌊x/2^s⌋ exactly, for shared x known to
// lie in [0, 2^{ℓ-1}) — a ReLU's output — and 1 ≤ s < ℓ. A known zero top
// bit makes the wrap bit of the shares w = 1{x0 + x1 ≥ 2^ℓ} simply
// msb(x0) ∨ msb(x1) (with m_i = msb(x_i) and c the carry into bit ℓ−1,
// m0 + m1 + c = 2w), one correlated OT instead of a millionaires' on ℓ
// bits; the low halves' carry is a millionaires' on s bits, as in
// TruncateExact. Both bits become arithmetic in one batch of correlated
// OTs. Its result on an x outside the range is meaningless.
func (p *Party) TruncateNonneg(x []uint64, s int) ([]uint64, error) {
	r := p.ring
	l := r.Bits()
	if s < 1 || s >= l {
		return nil, fmt.Errorf("nonlinear: truncation by 2^%d in a %d-bit ring", s, l)
	}
	n := len(x)
	low := make([]uint64, n)
	bits := make([]uint8, 2*n) // carries of the low halves, then top bits
	for i, v := range x {
		v = r.Reduce(v)
		low[i] = v & share.Mask(s)
		bits[n+i] = uint8(r.MSB(v))
	}
	c, err := p.Carry(low, s)
	if err != nil {
		return nil, fmt.Errorf("nonlinear: nonnegative truncate: %w", err)
	}
	copy(bits, c)
	prod, err := p.crossProduct(bits, r)
	if err != nil {
		return nil, fmt.Errorf("nonlinear: nonnegative truncate: %w", err)
	}
	out := make([]uint64, n)
	for i, v := range x {
		carry := r.Sub(uint64(bits[i]), r.Add(prod[i], prod[i])) // c0 ⊕ c1
		wrap := r.Sub(uint64(bits[n+i]), prod[n+i])              // m0 ∨ m1 = m0 + m1 − m0·m1
		out[i] = r.Add(r.Sub(r.Reduce(v)>>s, wrap<<(l-s)), carry)
	}
	return out, nil
}

// ReLUTruncate returns shares of ⌊ReLU(x)/2^s⌋ exactly, for shared signed
// x and 1 ≤ s < ℓ: ReLU then TruncateNonneg, in fewer flights. The ReLU's
// comparison (the carry of the low ℓ−1 bits) and the truncation's (the
// carry of the low s bits) are both taken from x's shares in one
// millionaires' run, and the truncation is applied before the
// multiplexer: t = TruncateNonneg's formula on x, which is ⌊x/2^s⌋
// whenever x ≥ 0, then d·t with d = DReLU(x) — zero where x < 0, whatever
// t is there, and ⌊0/2^s⌋ = 0. Flights: the ℓ−1-bit millionaires' alone,
// one exchange of correlated OTs (the truncation's two bits), the mux —
// 14 at ℓ = 37, against ReLU's 12 and TruncateNonneg's 8; bytes the same.
func (p *Party) ReLUTruncate(x []uint64, s int) ([]uint64, error) {
	r := p.ring
	l := r.Bits()
	if s < 1 || s >= l {
		return nil, fmt.Errorf("nonlinear: truncation by 2^%d in a %d-bit ring", s, l)
	}
	n := len(x)
	lowD := make([]uint64, n) // low ℓ−1 bits: DReLU's carry
	lowS := make([]uint64, n) // low s bits: the truncation's carry
	X := make([]uint64, n)
	split(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			X[i] = r.Reduce(x[i])
			lowD[i] = X[i] & share.Mask(l-1)
			lowS[i] = X[i] & share.Mask(s)
		}
	})
	cs, err := p.carries(compareBatch{lowD, l - 1}, compareBatch{lowS, s})
	if err != nil {
		return nil, fmt.Errorf("nonlinear: ReLU and truncate: %w", err)
	}
	d := make([]uint8, n)
	bits := make([]uint8, 2*n) // carries of the low s bits, then top bits
	split(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			m := uint8(r.MSB(X[i]))
			d[i] = m ^ cs[0][i] ^ uint8(1-p.id) // DReLU: party 0 adds the constant 1
			bits[i], bits[n+i] = cs[1][i], m
		}
	})
	prod, err := p.crossProduct(bits, r)
	if err != nil {
		return nil, fmt.Errorf("nonlinear: ReLU and truncate: %w", err)
	}
	t := make([]uint64, n)
	split(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			carry := r.Sub(uint64(bits[i]), r.Add(prod[i], prod[i])) // c0 ⊕ c1
			wrap := r.Sub(uint64(bits[n+i]), prod[n+i])              // m0 ∨ m1, the wrap when x ≥ 0
			t[i] = r.Add(r.Sub(X[i]>>s, wrap<<(l-s)), carry)
		}
	})
	out, err := p.Mux(d, t)
	if err != nil {
		return nil, fmt.Errorf("nonlinear: ReLU and truncate: %w", err)
	}
	return out, nil
}
