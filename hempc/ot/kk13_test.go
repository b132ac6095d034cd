package ot

import (
	"math/bits"
	"testing"

	"github.com/rosemary-fhe/rosemary/hempc/share"
	"github.com/rosemary-fhe/rosemary/hempc/transport"
)

func kkPair(t testing.TB) (*NSender, *NReceiver) {
	c, s := transport.Pipe()
	t.Cleanup(func() { c.Close(); s.Close() })
	var snd *NSender
	wait := run(func() (err error) { snd, err = NewNSender(s); return })
	rcv, err := NewNReceiver(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	return snd, rcv
}

// The code must have minimum distance κ = 128 between distinct codewords.
func TestWalshHadamardDistance(t *testing.T) {
	for a := 0; a < 256; a++ {
		for b := a + 1; b < 256; b++ {
			d := 0
			for i := range whTable[a] {
				d += bits.OnesCount64(whTable[a][i] ^ whTable[b][i])
			}
			if d != 128 {
				t.Fatalf("codewords %d and %d at distance %d", a, b, d)
			}
		}
	}
	if whTable[0] != (row256{}) || whTable[1][0] != 0xAAAAAAAAAAAAAAAA {
		t.Fatalf("known codewords wrong: %x %x", whTable[0], whTable[1])
	}
}

func TestKK13(t *testing.T) {
	snd, rcv := kkPair(t)
	g := testPRG(t)
	r64, _ := share.NewRing(64)
	for _, logN := range []int{1, 2, 4, 8} {
		N := 1 << logN
		n := 300
		if logN == 8 {
			n = 70
		}
		msgs := make([][]uint64, n)
		choices := make([]uint16, n)
		for i := range msgs {
			msgs[i] = g.Uniform(r64, N)
			choices[i] = uint16(g.Uint64() % uint64(N))
		}
		choices[0], choices[1] = 0, uint16(N-1)
		wait := run(func() error { return snd.Send(msgs, logN, 64) })
		got, err := rcv.Receive(choices, logN, 64)
		if err != nil {
			t.Fatal(err)
		}
		if err := wait(); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i] != msgs[i][choices[i]] {
				t.Fatalf("N=%d instance %d: got %x want %x", N, i, got[i], msgs[i][choices[i]])
			}
		}
	}
}

// TestKK13ReceiverView: with its row t_j the receiver unmasks exactly its
// choice; every other message comes out wrong (and about half its bits
// differ).
func TestKK13ReceiverView(t *testing.T) {
	snd, rcv := kkPair(t)
	g := testPRG(t)
	const n, logN, N = 400, 4, 16
	r64, _ := share.NewRing(64)
	msgs := make([][]uint64, n)
	choices := make([]uint16, n)
	for i := range msgs {
		msgs[i] = g.Uniform(r64, N)
		choices[i] = uint16(g.Uint64() % N)
	}
	req, u, err := rcv.Request(choices, logN)
	if err != nil {
		t.Fatal(err)
	}
	if len(u) != n*32+(64-n%64)%64*32 {
		t.Errorf("u is %d bytes, want 32 per instance (padded to 64)", len(u))
	}
	reply, err := snd.Reply(u, msgs, logN, 64)
	if err != nil {
		t.Fatal(err)
	}
	y, _ := share.Unpack(reply, n*N, 64)
	diff := 0
	for j := 0; j < n; j++ {
		mine := kkHash(req.first+uint64(j), req.t[j])
		for v := 0; v < N; v++ {
			dec := y[j*N+v] ^ mine
			if (dec == msgs[j][v]) != (v == int(choices[j])) {
				t.Fatalf("instance %d message %d (choice %d) decrypts=%v", j, v, choices[j], dec == msgs[j][v])
			}
			if v != int(choices[j]) {
				diff += bits.OnesCount64(dec ^ msgs[j][v])
			}
		}
	}
	if mean := 32 * n * (N - 1); diff < mean-mean/20 || diff > mean+mean/20 {
		t.Errorf("wrong unmaskings differ in %d bits, want ≈ %d", diff, mean)
	}
	out, err := rcv.Finish(req, reply, 64)
	if err != nil {
		t.Fatal(err)
	}
	for j := range out {
		if out[j] != msgs[j][choices[j]] {
			t.Fatalf("Finish %d wrong", j)
		}
	}
}

func TestKK13Errors(t *testing.T) {
	snd, rcv := kkPair(t)
	if _, _, err := rcv.Request([]uint16{16}, 4); err == nil {
		t.Error("choice 16 of 16 accepted")
	}
	if _, _, err := rcv.Request(nil, 9); err == nil {
		t.Error("log N 9 accepted")
	}
	if err := snd.Send([][]uint64{{1, 2}}, 2, 8); err == nil {
		t.Error("1-of-4 with 2 messages accepted")
	}
	if _, err := snd.Reply(make([]byte, 5), [][]uint64{{1, 2}}, 1, 8); err == nil {
		t.Error("short u accepted")
	}
}

// BenchmarkOneOutOf16 compares the two 1-out-of-16 constructions on 2-bit
// messages (the millionaires' leaves): IKNP + Naor–Pinkas vs KK13.
func BenchmarkOneOutOf16(b *testing.B) {
	const n = 1 << 14
	g := testPRG(b)
	r2, _ := share.NewRing(2)
	msgs := make([][]uint64, n)
	choices := make([]uint16, n)
	for i := range msgs {
		msgs[i] = g.Uniform(r2, 16)
		choices[i] = uint16(g.Uint64() % 16)
	}
	b.Run("iknp-np", func(b *testing.B) {
		snd, rcv := pair(b)
		for i := 0; i < b.N; i++ {
			wait := run(func() error { return snd.SendN(msgs, 4, 2) })
			if _, err := rcv.ReceiveN(choices, 4, 2); err != nil {
				b.Fatal(err)
			}
			if err := wait(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(rcv.conn.Stats().BytesC2S+rcv.conn.Stats().BytesS2C)/float64(n*b.N), "B/OT")
	})
	b.Run("kk13", func(b *testing.B) {
		snd, rcv := kkPair(b)
		for i := 0; i < b.N; i++ {
			wait := run(func() error { return snd.Send(msgs, 4, 2) })
			if _, err := rcv.Receive(choices, 4, 2); err != nil {
				b.Fatal(err)
			}
			if err := wait(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(rcv.conn.Stats().BytesC2S+rcv.conn.Stats().BytesS2C)/float64(n*b.N), "B/OT")
	})
}
