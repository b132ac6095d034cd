package infer

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/transport"
	"github.com/rosemary-fhe/rosemary/optiprime/wire"
)

// Frame types of the inference session (0x40–0x4f; 0x20–0x3f belong to
// packages ot and nonlinear, which run on the same connection).
const (
	frameHello   byte = 0x40 // client → server: version, protocol, log N
	frameModel   byte = 0x41 // server → client: the public model (no weights)
	framePK      byte = 0x42 // client → server: public key
	frameGalois  byte = 0x43 // client → server: one Galois key, seeded (index, total, cheetah.MarshalSeededGaloisKey)
	frameReady   byte = 0x44 // server → client: weights prepared
	frameNext    byte = 0x45 // client → server: 1 = another image follows, 0 = done
	frameLinIn   byte = 0x46 // client → server: a linear layer's input ciphertexts
	frameLinOut  byte = 0x47 // server → client: its output ciphertexts
	frameAbort   byte = 0x4f // either way: the sender gives up (payload: reason)
	wireVersion  byte = 5    // 5: Galois keys sent seeded (b-halves, seed, digest); 4: a millionaires' pass sends all its leaf frames before the first answer (an older party waits for an answer after each frame); 3: OT pads and keys hashed by fixed-key AES (TCCR), not SHA-256; 2: the millionaires' leaves masked by key slots (a party of an older version computes other pads)
	maxMessages       = 1 << 16
	maxGaloisKey      = 1 << 12
)

// protocol is this session's hello version, error prefix and abort frame.
var protocol = wire.Session{Name: "infer", Version: wireVersion, AbortType: frameAbort}

// EncodeMessages frames a list of byte strings: u32 count, then per
// message u32 length and the bytes (big endian).
func EncodeMessages(msgs [][]byte) []byte {
	n := 4
	for _, m := range msgs {
		n += 4 + len(m)
	}
	b := make([]byte, 0, n)
	b = binary.BigEndian.AppendUint32(b, uint32(len(msgs)))
	for _, m := range msgs {
		b = binary.BigEndian.AppendUint32(b, uint32(len(m)))
		b = append(b, m...)
	}
	return b
}

// DecodeMessages parses EncodeMessages' output. The messages alias b.
func DecodeMessages(b []byte) ([][]byte, error) {
	if len(b) < 4 {
		return nil, errors.New("infer: message list truncated")
	}
	n := binary.BigEndian.Uint32(b)
	b = b[4:]
	if n > maxMessages {
		return nil, fmt.Errorf("infer: %d messages exceed the limit %d", n, maxMessages)
	}
	if uint64(n)*4 > uint64(len(b)) {
		return nil, fmt.Errorf("infer: %d messages cannot fit in %d bytes", n, len(b))
	}
	out := make([][]byte, n)
	for i := range out {
		if len(b) < 4 {
			return nil, fmt.Errorf("infer: message %d: length truncated", i)
		}
		l := binary.BigEndian.Uint32(b)
		b = b[4:]
		if uint64(l) > uint64(len(b)) {
			return nil, fmt.Errorf("infer: message %d: length %d exceeds the %d bytes left", i, l, len(b))
		}
		out[i] = b[:l:l]
		b = b[l:]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("infer: %d trailing bytes after the message list", len(b))
	}
	return out, nil
}

// encodeGalois frames one Galois key with its position in the sequence.
func encodeGalois(idx, total int, key []byte) []byte {
	return transport.AppendIndexed(nil, idx, total, key)
}

func decodeGalois(b []byte) (idx, total int, key []byte, err error) {
	return transport.ParseIndexed(b, maxGaloisKey)
}
