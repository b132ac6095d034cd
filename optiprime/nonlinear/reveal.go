package nonlinear

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/share"
)

const (
	typeReveal byte = 0x36
)

// Reveal opens shared values to both parties: each sends its shares and
// adds the peer's. One flight.
func (p *Party) Reveal(x []uint64) ([]uint64, error) {
	l := p.ring.Bits()
	peer, err := p.conn.Exchange(typeReveal, share.Pack(nil, x, l))
	if err != nil {
		return nil, fmt.Errorf("nonlinear: reveal: %w", err)
	}
	return p.addPeer(peer, x)
}

// RevealTo opens shared values to party `to` only (0 = server, 1 = client):
// the other party sends its shares and gets nil. One flight.
func (p *Party) RevealTo(x []uint64, to int) ([]uint64, error) {
	if to != 0 && to != 1 {
		return nil, fmt.Errorf("nonlinear: reveal to party %d", to)
	}
	l := p.ring.Bits()
	if p.id != to {
		if err := p.conn.Send(typeReveal, share.Pack(nil, x, l)); err != nil {
			return nil, fmt.Errorf("nonlinear: reveal: %w", err)
		}
		return nil, nil
	}
	peer, err := p.conn.RecvType(typeReveal)
	if err != nil {
		return nil, fmt.Errorf("nonlinear: reveal: %w", err)
	}
	return p.addPeer(peer, x)
}

// addPeer opens x with the peer's packed shares of it.
func (p *Party) addPeer(peer []byte, x []uint64) ([]uint64, error) {
	y, err := share.Unpack(peer, len(x), p.ring.Bits())
	if err != nil {
		return nil, fmt.Errorf("nonlinear: reveal: %w", err)
	}
	return p.ring.AddVec(y, y, x), nil
}
