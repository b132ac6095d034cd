package e2e

import "github.com/rosemary-fhe/rosemary/optiprime/wire"

// Frame types of an end-to-end session (0x50–0x5f).
const (
	frameHello  byte = 0x50 // client → server: version, protocol, log N, architecture digest
	frameAccept byte = 0x51 // server → client: network accepted
	framePK     byte = 0x52 // client → server: public key
	frameGalois byte = 0x53 // client → server: one Galois key, seeded (index, total, cheetah.MarshalSeededGaloisKey)
	frameReady  byte = 0x54 // server → client: keys accepted
	frameLinIn  byte = 0x55 // client → server: one input ciphertext of a convolution
	frameLinOut byte = 0x56 // server → client: one output ciphertext
	frameStats  byte = 0x57 // server → client: its per-operation times (JSON)
	frameAbort  byte = 0x5f // either way: the sender gives up (payload: reason)

	wireVersion  byte = 6 // 6: a max-pool runs before the ReLU it alone reads (pooledReLUs); 5: Galois keys sent seeded (b-halves, seed, digest); 4: a millionaires' pass sends all its leaf frames before the first answer (an older party waits for an answer after each frame); 3: OT pads and keys hashed by fixed-key AES (TCCR), not SHA-256; 2: the millionaires' leaves masked by key slots (a party of an older version computes other pads)
	helloLen          = wire.HelloLen + 32
	maxGaloisKey      = 1 << 12
)

// protocol is this session's hello version, error prefix and abort frame.
var protocol = wire.Session{Name: "e2e", Version: wireVersion, AbortType: frameAbort}

// hello is the client's opening message: the common fields and the
// digest of the network's architecture, which the server must share.
type hello struct {
	wire.Hello
	Digest [32]byte
}

func (h hello) encode() []byte {
	return append(h.Append(make([]byte, 0, helloLen)), h.Digest[:]...)
}

// decodeHello parses and checks a hello frame.
func decodeHello(b []byte) (hello, error) {
	common, digest, err := protocol.ParseHello(b, len(hello{}.Digest))
	if err != nil {
		return hello{}, err
	}
	h := hello{Hello: common}
	copy(h.Digest[:], digest)
	return h, nil
}
