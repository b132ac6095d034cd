package nonlinear

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/ot"
	"github.com/rosemary-fhe/rosemary/optiprime/share"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// Frame types used by this package (0x30–0x3f).
const (
	typeLeafU     byte = 0x30 // the leaves' choice corrections
	typeLeafReply byte = 0x31
	typeBiU       byte = 0x32
	typeBiReply   byte = 0x33
	typeB2AU      byte = 0x34
	typeB2AReply  byte = 0x35
	blockBits          = 4 // m: bits per millionaires' leaf
)

// Party is one side of a nonlinear-protocol session. It is not safe for
// concurrent use: calls run one protocol at a time over the Conn. After any
// error the two parties are out of step (one may wait for a message the
// other will not send): close the Conn, which unblocks the peer, and start a
// new session.
type Party struct {
	conn    *transport.Conn
	id      int
	ring    share.Ring
	snd     *ot.Sender
	rcv     *ot.Receiver
	prg     *share.PRG
	refills transport.Stats // traffic of the silent-OT pool refills
	trace   func(step string) (end func())
}

// Trace steps: SetTrace's callback receives these names.
const (
	StepOTExtension  = "ot-extension" // silent-OT pool refills (Ferret iterations)
	StepMillionaires = "millionaires" // the millionaires' protocol (comparison tree), refills excluded
)

// SetTrace has every later traced step call f when it starts and the
// function f returns when it ends (nil: no tracing). Steps nest: the OT
// extension a millionaires' protocol runs is traced inside it. A profiler
// charges the time between the calls to the step.
func (p *Party) SetTrace(f func(step string) (end func())) { p.trace = f }

// step traces one step (see SetTrace).
func (p *Party) step(name string) (end func()) {
	if p.trace == nil {
		return func() {}
	}
	return p.trace(name)
}

// NewParty sets up silent OT extension (Ferret, regular parameters) in both
// directions over conn: 128 base OTs and an IKNP-made base for one small
// Ferret iteration each way. The server end becomes party 0, the client end
// party 1; the peer must call NewParty with the same ring. ℓ must be at
// least 2.
func NewParty(conn *transport.Conn, ring share.Ring) (*Party, error) {
	return newParty(conn, ring, ot.FerretRegular)
}

func newParty(conn *transport.Conn, ring share.Ring, f ot.Ferret) (*Party, error) {
	if ring.Bits() < 2 {
		return nil, fmt.Errorf("nonlinear: ring of %d bits, need at least 2", ring.Bits())
	}
	prg, err := share.NewPRG()
	if err != nil {
		return nil, fmt.Errorf("nonlinear: %w", err)
	}
	p := &Party{conn: conn, ring: ring, prg: prg, id: 1}
	if conn.Role() == transport.Server {
		p.id = 0
	}
	if p.id == 0 {
		if p.snd, err = ot.NewSilentSender(conn, f); err == nil {
			p.rcv, err = ot.NewSilentReceiver(conn, f)
		}
	} else {
		if p.rcv, err = ot.NewSilentReceiver(conn, f); err == nil {
			p.snd, err = ot.NewSilentSender(conn, f)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("nonlinear: OT setup: %w", err)
	}
	return p, nil
}

// ID returns 0 for the server's party and 1 for the client's.
func (p *Party) ID() int { return p.id }

// Ring returns the share ring.
func (p *Party) Ring() share.Ring { return p.ring }

// Conn returns the transport, e.g. to read its counters.
func (p *Party) Conn() *transport.Conn { return p.conn }

// Refills returns the Ferret iterations run since setup (both directions)
// and their traffic, which the counters of the steps that ran them include.
func (p *Party) Refills() (iterations int, traffic transport.Stats) {
	return p.snd.Iterations() + p.rcv.Iterations() - 2, p.refills // setup ran one each way
}

// reserve makes the silent OT pools hold what the next step draws: n01
// correlated OTs from party 0 to party 1 and n10 the other way. Both
// parties call it with the same counts at the same point, direction 0→1
// first, so the refills' flights pair up.
func (p *Party) reserve(n01, n10 int) error {
	defer p.step(StepOTExtension)()
	before := p.conn.Stats()
	var err error
	if p.id == 0 {
		if err = p.snd.Reserve(n01); err == nil {
			err = p.rcv.Reserve(n10)
		}
	} else {
		if err = p.rcv.Reserve(n01); err == nil {
			err = p.snd.Reserve(n10)
		}
	}
	p.refills = add(p.refills, p.conn.Stats().Sub(before))
	if err != nil {
		return fmt.Errorf("nonlinear: refill silent OT: %w", err)
	}
	return nil
}

// biChosen runs chosen OTs in both directions at once: this party receives
// with its choices and sends (m0[i], m1[i]) for the peer's equally many
// choices. Two flights.
func (p *Party) biChosen(choices []uint8, m0, m1 []uint64, bits int) ([]uint64, error) {
	if err := p.reserve(len(choices), len(choices)); err != nil {
		return nil, err
	}
	req, u, err := p.rcv.Request(choices)
	if err != nil {
		return nil, err
	}
	peerU, err := p.conn.Exchange(typeBiU, u)
	if err != nil {
		return nil, err
	}
	reply, err := p.snd.ReplyChosen(peerU, m0, m1, bits)
	if err != nil {
		return nil, err
	}
	peerReply, err := p.conn.Exchange(typeBiReply, reply)
	if err != nil {
		return nil, err
	}
	return p.rcv.FinishChosen(req, peerReply, bits)
}

// biCorrelated runs correlated OTs in both directions at once: it returns
// this party's sender output x and its receiver output y = x_peer + c·Δ_peer.
func (p *Party) biCorrelated(choices []uint8, delta []uint64, ring share.Ring) (x, y []uint64, err error) {
	if err := p.reserve(len(choices), len(choices)); err != nil {
		return nil, nil, err
	}
	req, u, err := p.rcv.Request(choices)
	if err != nil {
		return nil, nil, err
	}
	peerU, err := p.conn.Exchange(typeBiU, u)
	if err != nil {
		return nil, nil, err
	}
	x, reply, err := p.snd.ReplyCorrelated(peerU, delta, ring)
	if err != nil {
		return nil, nil, err
	}
	peerReply, err := p.conn.Exchange(typeBiReply, reply)
	if err != nil {
		return nil, nil, err
	}
	y, err = p.rcv.FinishCorrelated(req, peerReply, ring)
	return x, y, err
}

// andBatch is the most ANDs one batch of chosen OTs carries (the OT batch
// limit; a variable for tests).
var andBatch = ot.MaxBatch

// and returns shares of a_i ∧ b_i, where a_i is a shared bit and b_i a shared
// w-bit vector (1 ≤ w ≤ 64), combined bitwise.
func (p *Party) and(a []uint8, b []uint64, w int) ([]uint64, error) {
	if len(a) != len(b) {
		return nil, fmt.Errorf("nonlinear: AND of %d and %d shares", len(a), len(b))
	}
	wr, err := share.NewRing(w)
	if err != nil {
		return nil, fmt.Errorf("nonlinear: AND width: %w", err)
	}
	r := make([]uint64, len(a))
	m1 := make([]uint64, len(a))
	p.splitRand(len(a), func(lo, hi int, g *share.PRG) {
		copy(r[lo:hi], g.Uniform(wr, hi-lo))
		for i := lo; i < hi; i++ {
			m1[i] = r[i] ^ b[i]
		}
	})
	// One batch of chosen OTs each way, or several above the OT batch
	// limit (two flights each).
	got := make([]uint64, 0, len(a))
	for lo := 0; lo < len(a) || lo == 0; lo += andBatch {
		hi := min(lo+andBatch, len(a))
		g, err := p.biChosen(a[lo:hi], r[lo:hi], m1[lo:hi], w)
		if err != nil {
			return nil, fmt.Errorf("nonlinear: AND: %w", err)
		}
		got = append(got, g...)
		if hi == len(a) {
			break
		}
	}
	z := make([]uint64, len(a))
	split(len(a), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			z[i] = (b[i] & -uint64(a[i])) ^ r[i] ^ got[i]
		}
	})
	return z, nil
}
