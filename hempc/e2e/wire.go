package e2e

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/rosemary-fhe/rosemary/hempc/linear"
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
	maxReasonLen      = 1 << 10
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

func encodeGalois(idx, total int, key []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(idx))
	b = binary.BigEndian.AppendUint32(b, uint32(total))
	return append(b, key...)
}

// decodeGalois parses a Galois-key frame (the key aliases b).
func decodeGalois(b []byte) (idx, total int, key []byte, err error) {
	if len(b) < 8 {
		return 0, 0, nil, errors.New("e2e: Galois key frame truncated")
	}
	i, t := binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[4:])
	if t > maxGaloisKey || i >= t {
		return 0, 0, nil, fmt.Errorf("e2e: Galois key %d of %d out of range", i, t)
	}
	return int(i), int(t), b[8:], nil
}
