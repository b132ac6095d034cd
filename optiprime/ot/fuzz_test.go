package ot

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/share"
)

// FuzzPeerMessages feeds arbitrary bytes, as a malicious or broken peer
// could, to every function that decodes a peer's IKNP OT message: the
// senders' u-matrix decoders and the receivers' reply decoders. They must
// return errors, not panic, and accept only messages of the exact expected
// size.
func FuzzPeerMessages(f *testing.F) {
	f.Add([]byte{}, uint8(1))
	f.Add(make([]byte, kappa*8), uint8(1))
	f.Add(make([]byte, 16*3), uint8(3))
	snd, rcv := pair(f)
	r, _ := share.NewRing(37)
	f.Fuzz(func(t *testing.T, msg []byte, n uint8) {
		m := make([]uint64, n)
		wantU := kappa * ((int(n) + 63) / 64) * 8
		if _, err := snd.ReplyChosen(msg, m, m, 37); (err == nil) != (len(msg) == wantU) {
			t.Fatalf("ReplyChosen: %d-byte u for %d OTs: err %v", len(msg), n, err)
		}
		if _, _, err := snd.ReplyCorrelated(msg, m, r); (err == nil) != (len(msg) == wantU) {
			t.Fatalf("ReplyCorrelated: err %v", err)
		}
		req, _, err := rcv.Request(make([]uint8, n))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rcv.FinishChosen(req, msg, 37); err == nil && len(msg) != share.PackedLen(2*int(n), 37) {
			t.Fatalf("FinishChosen accepted a %d-byte reply for %d OTs", len(msg), n)
		}
		if _, err := rcv.FinishCorrelated(req, msg, r); err == nil && len(msg) != share.PackedLen(int(n), 37) {
			t.Fatalf("FinishCorrelated accepted a %d-byte reply for %d OTs", len(msg), n)
		}
		nreq, _, err := rcv.RequestN(make([]uint16, n), 4)
		if err != nil {
			t.Fatal(err)
		}
		rcv.FinishN(nreq, msg, 2)
		if _, err := rcv.FinishN(req, msg, 2); err == nil {
			t.Fatal("FinishN accepted a 1-of-2 request")
		}
	})
}

// FuzzSilentMessages does the same for the silent source: the sender's
// decoder of choice corrections (exactly ⌈n/8⌉ bytes, no bit set beyond n)
// and the Ferret receiver's decoder of a tree message.
func FuzzSilentMessages(f *testing.F) {
	f.Add([]byte{}, uint8(1))
	f.Add([]byte{0xff}, uint8(8))
	f.Add([]byte{0x01, 0x02}, uint8(9))
	snd, _ := silentPair(f, FerretSmall)
	f.Fuzz(func(t *testing.T, msg []byte, n uint8) {
		pooled := len(snd.pool.avail)
		if pooled < 256 {
			t.Skip("pool drained (refilling needs the peer)")
		}
		valid := len(msg) == choicesLen(int(n)) && (n%8 == 0 || msg[n/8]>>(n%8) == 0)
		_, _, err := snd.process(int(n), msg)
		if (err == nil) != valid {
			t.Fatalf("%d-byte request %x for %d OTs: err %v", len(msg), msg, n, err)
		}
		if err != nil && len(snd.pool.avail) != pooled {
			t.Fatal("a rejected request consumed pooled OTs")
		}
	})
}
