package ot

import (
	"encoding/binary"
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/share"
)

// The packed masks are slotPad's, slot by slot, for every width that packs.
func TestPackedPadIsSlotPad(t *testing.T) {
	g := testPRG(t)
	for _, c := range []struct{ logN, bits int }{{4, 2}, {4, 4}, {3, 8}, {3, 1}, {2, 2}, {1, 32}, {2, 16}} {
		w := packedWidth(c.logN, c.bits)
		if w == 0 {
			t.Fatalf("%+v does not pack", c)
		}
		masks := slotMasks(c.logN, c.bits)
		for trial := 0; trial < 200; trial++ {
			keys := make([][2]Key, c.logN)
			k0, k1 := make([]uint64, c.logN), make([]uint64, c.logN)
			for b := range keys {
				for s := range keys[b] {
					for j := range keys[b][s] {
						keys[b][s][j] = byte(g.Uint64())
					}
				}
				k0[b] = binary.LittleEndian.Uint64(keys[b][0][:8])
				k1[b] = binary.LittleEndian.Uint64(keys[b][1][:8])
			}
			pad := packedPad(k0, k1, masks)
			for v := 0; v < 1<<c.logN; v++ {
				if got, want := pad>>(v*c.bits)&share.Mask(c.bits), slotPad(v, c.bits, keys); got != want {
					t.Fatalf("%+v slot %d: packed %x, slotPad %x", c, v, got, want)
				}
			}
		}
	}
	if packedWidth(4, 8) != 0 || packedWidth(2, 3) != 0 || packedWidth(2, 1) != 0 {
		t.Error("widths over 64 bits or not in whole bytes must not pack")
	}
}

// ReplyNPacked's replies decode to the chosen messages, through FinishN's
// packed path, and through the generic unpacking with slotPad: its bytes
// are ReplyN's.
func TestReplyNPacked(t *testing.T) {
	snd, rcv := pair(t)
	g := testPRG(t)
	for _, c := range []struct{ logN, bits int }{{4, 2}, {3, 8}, {3, 1}, {1, 4}} {
		N, w := 1<<c.logN, packedWidth(c.logN, c.bits)
		const n = 3000
		words := make([]uint64, n)
		choices := make([]uint16, n)
		for i := range words {
			words[i] = g.Uint64() & share.Mask(w)
			choices[i] = uint16(g.Uint64() % uint64(N))
		}
		req, u, err := rcv.RequestN(choices, c.logN)
		if err != nil {
			t.Fatal(err)
		}
		reply, err := snd.ReplyNPacked(u, words, c.logN, c.bits)
		if err != nil {
			t.Fatal(err)
		}
		got, err := rcv.FinishN(req, reply, c.bits)
		if err != nil {
			t.Fatal(err)
		}
		y, err := share.Unpack(reply, n*N, c.bits)
		if err != nil {
			t.Fatal(err)
		}
		keys := receiverKeys(req.t, req.first)
		for i := range got {
			want := words[i] >> (int(choices[i]) * c.bits) & share.Mask(c.bits)
			if got[i] != want {
				t.Fatalf("%+v instance %d: got %x want %x", c, i, got[i], want)
			}
			view := make([][2]Key, c.logN)
			for b := range view {
				view[b] = [2]Key{keys[i*c.logN+b], keys[i*c.logN+b]}
			}
			if generic := y[i*N+int(choices[i])] ^ slotPad(int(choices[i]), c.bits, view); generic != want {
				t.Fatalf("%+v instance %d: generic decoding %x want %x", c, i, generic, want)
			}
		}
	}
}
