package ot

import (
	"crypto/rand"
	"fmt"
	"runtime"

	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// A silent Sender or Receiver draws its correlated OTs from a pool that
// Ferret iterations fill, instead of from an IKNP u matrix: a request then
// costs the receiver one bit per OT (its choice xor the pooled random
// choice) rather than 16 bytes. The correlation is IKNP's — the receiver
// holds t_j = q_j ⊕ c_j·Δ with Δ = the sender's s — so every derived OT in
// this package works unchanged on either source.
//
// Filling the pool is interactive, so it happens only in Reserve, which
// both ends must call with the same count at the same point of their
// protocol; requests then take from the pool without talking.

type senderPool struct {
	p       ferretParams
	base    []block // keys kept for the next iteration (in baseBuf after setup)
	baseBuf []block
	avail   []block // keys not yet used
	iter    uint64
}

type receiverPool struct {
	p         ferretParams
	base      []block
	baseBuf   []block
	baseBits  []uint8
	avail     []block
	availBits []uint8
	iter      uint64
}

// bootstrap returns the parameter sets an iteration chain runs at setup:
// the regular set starts from the small one, whose base IKNP supplies.
func bootstrap(f Ferret) (first ferretParams, steady ferretParams, err error) {
	if steady, err = f.params(); err != nil {
		return
	}
	first = steady
	if f == FerretRegular {
		first, _ = FerretSmall.params()
	}
	return
}

// NewSilentSender sets up a silent OT extension sender: IKNP base OTs,
// IKNP correlated OTs for the first Ferret iteration's base and, for the
// regular set, one small iteration that yields the regular base. The peer
// calls NewSilentReceiver with the same set.
func NewSilentSender(conn *transport.Conn, f Ferret) (*Sender, error) {
	first, steady, err := bootstrap(f)
	if err != nil {
		return nil, err
	}
	s, err := NewSender(conn)
	if err != nil {
		return nil, err
	}
	q, _, err := s.extend(first.base())
	if err != nil {
		return nil, fmt.Errorf("ot: silent sender bootstrap: %w", err)
	}
	pool := &senderPool{p: first, base: q}
	if err := pool.iterate(conn, s.s, steady); err != nil {
		return nil, err
	}
	pool.p = steady
	s.pool = pool
	return s, nil
}

// NewSilentReceiver is the receiver's side of NewSilentSender.
func NewSilentReceiver(conn *transport.Conn, f Ferret) (*Receiver, error) {
	first, steady, err := bootstrap(f)
	if err != nil {
		return nil, err
	}
	r, err := NewReceiver(conn)
	if err != nil {
		return nil, err
	}
	rnd := make([]byte, first.base())
	if _, err := rand.Read(rnd); err != nil {
		return nil, fmt.Errorf("ot: silent receiver bootstrap: %w", err)
	}
	bits := make([]uint8, len(rnd))
	for i, b := range rnd {
		bits[i] = b & 1
	}
	t, _, err := r.extend(bits)
	if err != nil {
		return nil, fmt.Errorf("ot: silent receiver bootstrap: %w", err)
	}
	pool := &receiverPool{p: first, base: t, baseBits: bits}
	if err := pool.iterate(conn, steady); err != nil {
		return nil, err
	}
	pool.p = steady
	r.pool = pool
	return r, nil
}

// iterate runs one Ferret iteration with the pool's parameters and keeps
// the base of the next iteration, which runs with next (larger than this
// one's when bootstrapping the regular set from the small one).
func (sp *senderPool) iterate(conn *transport.Conn, delta block, next ferretParams) error {
	out := make([]block, sp.p.n+len(sp.avail))
	if err := ferretSend(conn, sp.p, delta, sp.base, sp.iter, out[:sp.p.n]); err != nil {
		return err
	}
	parallelCopy(out[sp.p.n:], sp.avail) // unused keys go last, after the next base
	sp.iter++
	return keepBase(len(out), next, func(b int) {
		sp.baseBuf = baseBuffer(sp, sp.baseBuf, b)
		sp.base = sp.baseBuf[:copy(sp.baseBuf, out[:b])]
		sp.avail = out[b:]
	})
}

func (rp *receiverPool) iterate(conn *transport.Conn, next ferretParams) error {
	out := make([]block, rp.p.n+len(rp.avail))
	bits := make([]uint8, rp.p.n+len(rp.availBits))
	if err := ferretReceive(conn, rp.p, rp.base, rp.baseBits, rp.iter, out[:rp.p.n], bits[:rp.p.n]); err != nil {
		return err
	}
	parallelCopy(out[rp.p.n:], rp.avail)
	parallelCopy(bits[rp.p.n:], rp.availBits)
	rp.iter++
	return keepBase(len(out), next, func(b int) {
		rp.baseBuf = baseBuffer(rp, rp.baseBuf, b)
		rp.base = rp.baseBuf[:copy(rp.baseBuf, out[:b])]
		rp.baseBits = append([]uint8(nil), bits[:b]...)
		rp.avail, rp.availBits = out[b:], bits[b:]
	})
}

// baseBuffer returns buf if it holds b blocks, else a new buffer of b
// blocks on huge pages (hugeBlocks), unmapped once pool is unreachable. The
// base is the table the next iteration's LPN encoding gathers from at
// random; one buffer serves every iteration of a pool, since an iteration
// copies the next base in only after it has encoded with this one.
func baseBuffer[P any](pool *P, buf []block, b int) []block {
	if len(buf) >= b {
		return buf
	}
	buf, free := hugeBlocks(b)
	runtime.AddCleanup(pool, func(free func()) { free() }, free)
	return buf
}

// keepBase splits n fresh correlated OTs into the next base and the rest.
func keepBase(n int, p ferretParams, split func(b int)) error {
	b := p.base()
	if n < b {
		return fmt.Errorf("ot: ferret iteration left %d correlated OTs, the next needs %d", n, b)
	}
	split(b)
	return nil
}

// Reserve makes sure the pool holds at least n correlated OTs, running
// Ferret iterations over the connection if it does not; the receiver must
// call Reserve with the same n at the same point. It does nothing for an
// IKNP sender.
func (s *Sender) Reserve(n int) error {
	if s.pool == nil {
		return nil
	}
	if n < 0 {
		return fmt.Errorf("ot: reserve %d correlated OTs", n)
	}
	for len(s.pool.avail) < n {
		if err := s.pool.iterate(s.conn, s.s, s.pool.p); err != nil {
			return err
		}
	}
	return nil
}

// Reserve is the receiver's side of Sender.Reserve.
func (r *Receiver) Reserve(n int) error {
	if r.pool == nil {
		return nil
	}
	if n < 0 {
		return fmt.Errorf("ot: reserve %d correlated OTs", n)
	}
	for len(r.pool.avail) < n {
		if err := r.pool.iterate(r.conn, r.pool.p); err != nil {
			return err
		}
	}
	return nil
}

// Iterations returns how many Ferret iterations have run (0 for IKNP).
func (s *Sender) Iterations() int {
	if s.pool == nil {
		return 0
	}
	return int(s.pool.iter)
}

// Iterations returns how many Ferret iterations have run (0 for IKNP).
func (r *Receiver) Iterations() int {
	if r.pool == nil {
		return 0
	}
	return int(r.pool.iter)
}

func choicesLen(n int) int { return (n + 7) / 8 }

// requestSilent takes len(choices) pooled OTs and returns their rows and
// the packed corrections d_j = c_j ⊕ x_j for the sender.
func (r *Receiver) requestSilent(choices []uint8) ([]block, []byte, error) {
	n := len(choices)
	if n > len(r.pool.avail) {
		return nil, nil, fmt.Errorf("ot: silent pool holds %d correlated OTs, %d requested (Reserve first)", len(r.pool.avail), n)
	}
	for j, c := range choices {
		if c > 1 {
			return nil, nil, fmt.Errorf("ot: choice %d is %d, not a bit", j, c)
		}
	}
	msg := make([]byte, choicesLen(n))
	bits := r.pool.availBits
	inParallelAligned(n, 8, func(lo, hi int) { // ranges of whole bytes
		for j := lo; j < hi; j++ {
			msg[j/8] |= (choices[j] ^ bits[j]) << (j % 8)
		}
	})
	t := r.pool.avail[:n:n]
	r.pool.avail, r.pool.availBits = r.pool.avail[n:], r.pool.availBits[n:]
	return t, msg, nil
}

// processSilent takes n pooled keys and applies the receiver's corrections:
// q_j = K_j ⊕ d_j·Δ, so that t_j = q_j ⊕ c_j·Δ.
func (s *Sender) processSilent(n int, msg []byte) ([]block, error) {
	if len(msg) != choicesLen(n) {
		return nil, fmt.Errorf("ot: silent request has %d bytes, want %d for %d OTs", len(msg), choicesLen(n), n)
	}
	if n > len(s.pool.avail) {
		return nil, fmt.Errorf("ot: silent pool holds %d correlated OTs, %d requested (Reserve first)", len(s.pool.avail), n)
	}
	if n%8 != 0 && msg[n/8]>>(n%8) != 0 {
		return nil, fmt.Errorf("ot: silent request sets bits beyond its %d OTs", n)
	}
	q := make([]block, n)
	keys := s.pool.avail[:n]
	inParallel(n, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			d := uint64(msg[j/8] >> (j % 8) & 1)
			q[j] = keys[j].xor(s.s.and(-d))
		}
	})
	s.pool.avail = s.pool.avail[n:]
	return q, nil
}
