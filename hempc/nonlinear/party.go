package nonlinear

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/hempc/ot"
	"github.com/rosemary-fhe/rosemary/hempc/share"
	"github.com/rosemary-fhe/rosemary/hempc/transport"
)

// Frame types used by this package (0x30–0x3f).
const (
	typeLeafU     byte = 0x30
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
	conn *transport.Conn
	id   int
	ring share.Ring
	snd  *ot.Sender
	rcv  *ot.Receiver
	nsnd *ot.NSender   // party 0 only: millionaires' leaves
	nrcv *ot.NReceiver // party 1 only
	prg  *share.PRG
}

// NewParty sets up OT extension in both directions over conn (2 × 128 base
// OTs for IKNP, 256 for the KK13 1-out-of-N extension from party 0 to 1). The server end becomes party 0, the client end party 1; the peer must
// call NewParty with the same ring. ℓ must be at least 2.
func NewParty(conn *transport.Conn, ring share.Ring) (*Party, error) {
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
		if p.snd, err = ot.NewSender(conn); err == nil {
			if p.rcv, err = ot.NewReceiver(conn); err == nil {
				p.nsnd, err = ot.NewNSender(conn)
			}
		}
	} else {
		if p.rcv, err = ot.NewReceiver(conn); err == nil {
			if p.snd, err = ot.NewSender(conn); err == nil {
				p.nrcv, err = ot.NewNReceiver(conn)
			}
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

// biChosen runs chosen OTs in both directions at once: this party receives
// with its choices and sends (m0[i], m1[i]) for the peer's equally many
// choices. Two flights.
func (p *Party) biChosen(choices []uint8, m0, m1 []uint64, bits int) ([]uint64, error) {
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
	r := p.prg.Uniform(wr, len(a))
	m1 := make([]uint64, len(a))
	for i := range r {
		m1[i] = r[i] ^ b[i]
	}
	got, err := p.biChosen(a, r, m1, w)
	if err != nil {
		return nil, fmt.Errorf("nonlinear: AND: %w", err)
	}
	z := make([]uint64, len(a))
	for i := range z {
		z[i] = (b[i] & -uint64(a[i])) ^ r[i] ^ got[i]
	}
	return z, nil
}
