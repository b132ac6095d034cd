package e2e

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/linear"
)

// Frame types of an end-to-end session (0x50–0x5f).
const (
	frameHello  byte = 0x50 // client → server: version, protocol, log N, architecture digest
	frameAccept byte = 0x51 // server → client: network accepted
	framePK     byte = 0x52 // client → server: public key
	frameGalois byte = 0x53 // client → server: one Galois key (index, total, key)
	frameReady  byte = 0x54 // server → client: keys accepted
	frameLinIn  byte = 0x55 // client → server: one input ciphertext of a convolution
	frameLinOut byte = 0x56 // server → client: one output ciphertext
	frameStats  byte = 0x57 // server → client: its per-operation times (JSON)
	frameAbort  byte = 0x5f // either way: the sender gives up (payload: reason)

	wireVersion  byte = 1
	helloLen          = 3 + 32
	maxGaloisKey      = 1 << 12
)

// hello is the client's opening message.
type hello struct {
	Version  byte
	Protocol linear.Protocol
	LogN     int
	Digest   [32]byte
}

func (h hello) encode() []byte {
	return append([]byte{h.Version, byte(h.Protocol), byte(h.LogN)}, h.Digest[:]...)
}

// decodeHello parses and checks a hello frame.
func decodeHello(b []byte) (hello, error) {
	if len(b) != helloLen {
		return hello{}, fmt.Errorf("e2e: hello has %d bytes, want %d", len(b), helloLen)
	}
	h := hello{Version: b[0], Protocol: linear.Protocol(b[1]), LogN: int(b[2])}
	copy(h.Digest[:], b[3:])
	if h.Version != wireVersion {
		return hello{}, fmt.Errorf("e2e: protocol version %d, want %d", h.Version, wireVersion)
	}
	if int(b[1]) >= len(linear.Protocols) {
		return hello{}, fmt.Errorf("e2e: unknown linear protocol %d", b[1])
	}
	if h.LogN < 12 || h.LogN > 15 {
		return hello{}, fmt.Errorf("e2e: log N = %d outside [12, 15]", h.LogN)
	}
	return h, nil
}
