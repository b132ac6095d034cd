package ot

import (
	"math/bits"
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/share"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

func testPRG(t testing.TB) *share.PRG {
	g, err := share.NewPRG()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// pair sets up an extension sender (server side) and receiver (client side)
// over an in-memory pipe.
func pair(t testing.TB) (*Sender, *Receiver) {
	c, s := transport.Pipe()
	t.Cleanup(func() { c.Close(); s.Close() })
	errc := make(chan error, 1)
	var snd *Sender
	go func() {
		var err error
		snd, err = NewSender(s)
		errc <- err
	}()
	rcv, err := NewReceiver(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	return snd, rcv
}

// run executes f in a goroutine and returns a function that waits for it.
func run(f func() error) func() error {
	errc := make(chan error, 1)
	go func() { errc <- f() }()
	return func() error { return <-errc }
}

func TestTranspose64(t *testing.T) {
	g := testPRG(t)
	var a, orig [64]uint64
	for i := range a {
		a[i] = g.Uint64()
	}
	orig = a
	transpose64(&a)
	for i := 0; i < 64; i++ {
		for k := 0; k < 64; k++ {
			if a[k]>>i&1 != orig[i]>>k&1 {
				t.Fatalf("bit (%d,%d) wrong", i, k)
			}
		}
	}
}

func TestBaseOT(t *testing.T) {
	c, s := transport.Pipe()
	defer c.Close()
	g := testPRG(t)
	const n = 64
	choices := g.Bits(n)
	var keys [][2]Key
	wait := run(func() (err error) { keys, err = BaseSend(s, n); return })
	got, err := BaseReceive(c, choices)
	if err != nil {
		t.Fatal(err)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	for i := range choices {
		if got[i] != keys[i][choices[i]] {
			t.Fatalf("OT %d: receiver key is not k_%d", i, choices[i])
		}
		if got[i] == keys[i][1-choices[i]] || keys[i][0] == keys[i][1] {
			t.Fatalf("OT %d: keys collide", i)
		}
	}
	// Traffic: one point from the sender, one per OT from the receiver.
	if st := c.Stats(); st.BytesS2C != pointLen+transport.HeaderSize || st.BytesC2S != n*pointLen+transport.HeaderSize {
		t.Errorf("base OT traffic %+v", st)
	}
}

func TestBaseOTRejectsBadPoints(t *testing.T) {
	c, s := transport.Pipe()
	defer c.Close()
	wait := run(func() error { _, err := BaseSend(s, 2); return err })
	// Play a receiver that sends garbage instead of points.
	if _, err := c.RecvType(typeBaseA); err != nil {
		t.Fatal(err)
	}
	if err := c.Send(typeBaseB, make([]byte, 2*pointLen)); err != nil {
		t.Fatal(err)
	}
	if err := wait(); err == nil {
		t.Fatal("sender accepted invalid points")
	}
	c2, s2 := transport.Pipe()
	defer c2.Close()
	if err := s2.Send(typeBaseA, []byte{4, 1, 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := BaseReceive(c2, []uint8{0}); err == nil {
		t.Fatal("receiver accepted an invalid A")
	}
}

// TestIKNPCorrelation checks the invariant q_j = t_j ⊕ r_j·s directly.
func TestIKNPCorrelation(t *testing.T) {
	snd, rcv := pair(t)
	g := testPRG(t)
	for _, n := range []int{1, 63, 64, 1000} {
		choices := g.Bits(n)
		var q []block
		wait := run(func() (err error) { q, _, err = snd.extend(n); return })
		tt, _, err := rcv.extend(choices)
		if err != nil {
			t.Fatal(err)
		}
		if err := wait(); err != nil {
			t.Fatal(err)
		}
		for j := range choices {
			want := tt[j]
			if choices[j] == 1 {
				want = want.xor(snd.s)
			}
			if q[j] != want {
				t.Fatalf("n=%d OT %d: q != t ⊕ r·s", n, j)
			}
		}
	}
	if snd.next != rcv.next {
		t.Fatalf("indices diverged: %d vs %d", snd.next, rcv.next)
	}
}

func TestChosenOT(t *testing.T) {
	snd, rcv := pair(t)
	g := testPRG(t)
	for _, width := range []int{1, 2, 37, 44, 64} {
		const n = 2000
		r, _ := share.NewRing(width)
		m0, m1 := g.Uniform(r, n), g.Uniform(r, n)
		m0[0], m1[0] = 0, r.Mask() // edge values
		choices := g.Bits(n)
		wait := run(func() error { return snd.SendChosen(m0, m1, width) })
		got, err := rcv.ReceiveChosen(choices, width)
		if err != nil {
			t.Fatal(err)
		}
		if err := wait(); err != nil {
			t.Fatal(err)
		}
		for j := range got {
			want := m0[j]
			if choices[j] == 1 {
				want = m1[j]
			}
			if got[j] != want {
				t.Fatalf("width %d OT %d (c=%d): got %x want %x", width, j, choices[j], got[j], want)
			}
		}
	}
}

// TestChosenOTReceiverView plays the receiver by hand and checks what it can
// compute about the message it did not choose: unmasking it with its own key
// gives a value that differs from m_{1-c} in about half of its 64 bits, and
// is never equal to it.
func TestChosenOTReceiverView(t *testing.T) {
	snd, rcv := pair(t)
	g := testPRG(t)
	const n = 4000
	r, _ := share.NewRing(64)
	m0, m1 := g.Uniform(r, n), g.Uniform(r, n)
	choices := g.Bits(n)
	wait := run(func() error { return snd.SendChosen(m0, m1, 64) })
	tt, first, err := rcv.extend(choices)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := rcv.conn.RecvType(typeExtMsgs)
	if err != nil {
		t.Fatal(err)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	y, err := share.Unpack(msg, 2*n, 64)
	if err != nil {
		t.Fatal(err)
	}
	diffBits := 0
	for j := 0; j < n; j++ {
		c := choices[j]
		mine := crhOne(first+uint64(j), tt[j]).lo64()
		mc, mo := m0[j], m1[j]
		if c == 1 {
			mc, mo = m1[j], m0[j]
		}
		if y[2*j+int(c)]^mine != mc {
			t.Fatalf("OT %d: chosen message does not decrypt", j)
		}
		guess := y[2*j+1-int(c)] ^ mine
		if guess == mo {
			t.Fatalf("OT %d: receiver recovers the other message", j)
		}
		diffBits += bits.OnesCount64(guess ^ mo)
	}
	// Binomial(64n, 1/2): mean 128000, sd ≈ 253; allow 8 sd.
	if mean := 32 * n; diffBits < mean-2000 || diffBits > mean+2000 {
		t.Errorf("other-message guess differs in %d bits, want ≈ %d", diffBits, 32*n)
	}
}

func TestCorrelatedOT(t *testing.T) {
	snd, rcv := pair(t)
	g := testPRG(t)
	r, _ := share.NewRing(37)
	const n = 3000
	delta := g.Uniform(r, n)
	choices := g.Bits(n)
	var x []uint64
	wait := run(func() (err error) { x, err = snd.SendCorrelated(delta, r); return })
	y, err := rcv.ReceiveCorrelated(choices, r)
	if err != nil {
		t.Fatal(err)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	for j := range y {
		if want := r.Add(x[j], r.Mul(uint64(choices[j]), delta[j])); y[j] != want {
			t.Fatalf("COT %d: got %x want %x", j, y[j], want)
		}
	}
}

func TestRandomOT(t *testing.T) {
	snd, rcv := pair(t)
	choices := testPRG(t).Bits(500)
	var keys [][2]Key
	wait := run(func() (err error) { keys, err = snd.SendRandom(500); return })
	got, err := rcv.ReceiveRandom(choices)
	if err != nil {
		t.Fatal(err)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	for j := range got {
		if got[j] != keys[j][choices[j]] || got[j] == keys[j][1-choices[j]] {
			t.Fatalf("ROT %d wrong", j)
		}
	}
}

func TestOneOutOfN(t *testing.T) {
	snd, rcv := pair(t)
	g := testPRG(t)
	for _, logN := range []int{1, 2, 3, 4} {
		N := 1 << logN
		const n = 700
		r, _ := share.NewRing(64)
		msgs := make([][]uint64, n)
		choices := make([]uint16, n)
		for i := range msgs {
			msgs[i] = g.Uniform(r, N)
			choices[i] = uint16(g.Uint64() % uint64(N))
		}
		choices[0], choices[1] = 0, uint16(N-1)
		wait := run(func() error { return snd.SendN(msgs, logN, 64) })
		got, err := rcv.ReceiveN(choices, logN, 64)
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

// TestOneOutOfNReceiverView: with the keys it holds, the receiver's
// unmasking of any message other than its choice is wrong.
func TestOneOutOfNReceiverView(t *testing.T) {
	snd, rcv := pair(t)
	g := testPRG(t)
	const n, logN, N = 300, 4, 16
	r, _ := share.NewRing(64)
	msgs := make([][]uint64, n)
	choices := make([]uint16, n)
	cb := make([]uint8, 0, n*logN)
	for i := range msgs {
		msgs[i] = g.Uniform(r, N)
		choices[i] = uint16(g.Uint64() % N)
		for b := 0; b < logN; b++ {
			cb = append(cb, uint8(choices[i]>>b&1))
		}
	}
	wait := run(func() error { return snd.SendN(msgs, logN, 64) })
	keys, err := rcv.ReceiveRandom(cb)
	if err != nil {
		t.Fatal(err)
	}
	first := rcv.next - uint64((len(cb)+63)/64*64)
	msg, err := rcv.conn.RecvType(typeExtMsgs)
	if err != nil {
		t.Fatal(err)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	y, _ := share.Unpack(msg, n*N, 64)
	for i := 0; i < n; i++ {
		ks := make([][2]Key, logN)
		for b := range ks {
			ks[b] = [2]Key{keys[i*logN+b], keys[i*logN+b]}
		}
		for v := 0; v < N; v++ {
			dec := y[i*N+v] ^ nPad(first+uint64(i*logN), v, ks)
			if (dec == msgs[i][v]) != (v == int(choices[i])) {
				t.Fatalf("instance %d message %d (choice %d): decrypts=%v", i, v, choices[i], dec == msgs[i][v])
			}
		}
	}
}

func TestOTInputErrors(t *testing.T) {
	snd, rcv := pair(t)
	if err := snd.SendChosen([]uint64{1}, nil, 8); err == nil {
		t.Error("mismatched message lists accepted")
	}
	if err := snd.SendChosen(nil, nil, 65); err == nil {
		t.Error("width 65 accepted")
	}
	if _, err := rcv.ReceiveChosen([]uint8{2}, 8); err == nil {
		t.Error("choice 2 accepted")
	}
	if _, err := rcv.ReceiveN([]uint16{16}, 4, 8); err == nil {
		t.Error("choice 16 of 16 accepted")
	}
	if err := snd.SendN([][]uint64{{1, 2, 3}}, 2, 8); err == nil {
		t.Error("1-of-4 with 3 messages accepted")
	}
	if err := snd.SendN(nil, 9, 8); err == nil {
		t.Error("log N 9 accepted")
	}
}

// A sender fed a u matrix of the wrong size fails with an error.
func TestSenderRejectsBadU(t *testing.T) {
	snd, rcv := pair(t)
	if err := rcv.conn.Send(typeExtU, make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	if err := snd.SendChosen([]uint64{1}, []uint64{2}, 8); err == nil {
		t.Fatal("short u matrix accepted")
	}
}

// BenchmarkIKNPChosen measures 1-out-of-2 chosen OT on 37-bit strings, both
// parties in one process over the in-memory pipe.
func BenchmarkIKNPChosen(b *testing.B) {
	snd, rcv := pair(b)
	benchChosen(b, snd, rcv)
}

// benchChosen runs batches of 2^16 chosen OTs on 37-bit strings and reports
// OTs per second; a silent pair draws each batch from its pool (Reserve
// does nothing under IKNP).
func benchChosen(b *testing.B, snd *Sender, rcv *Receiver) {
	g := testPRG(b)
	const n = 1 << 16
	r, _ := share.NewRing(37)
	m0, m1 := g.Uniform(r, n), g.Uniform(r, n)
	choices := g.Bits(n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		reserve(b, snd, rcv, n)
		wait := run(func() error { return snd.SendChosen(m0, m1, 37) })
		if _, err := rcv.ReceiveChosen(choices, 37); err != nil {
			b.Fatal(err)
		}
		if err := wait(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "OT/s")
}

// BenchmarkIKNPCorrelated measures additive correlated OT on 37-bit values.
func BenchmarkIKNPCorrelated(b *testing.B) {
	snd, rcv := pair(b)
	g := testPRG(b)
	const n = 1 << 16
	r, _ := share.NewRing(37)
	delta := g.Uniform(r, n)
	choices := g.Bits(n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		wait := run(func() error { _, err := snd.SendCorrelated(delta, r); return err })
		if _, err := rcv.ReceiveCorrelated(choices, r); err != nil {
			b.Fatal(err)
		}
		if err := wait(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "OT/s")
}

// BenchmarkBaseOT measures the 128 base OTs of one extension setup.
func BenchmarkBaseOT(b *testing.B) {
	for i := 0; i < b.N; i++ {
		pair(b)
	}
}

// TestOneOutOfNSlots: instances whose messages fit one key (the
// millionaires' leaves: 16 messages of 2 bits; 16 of 8 fill it) take
// their pads from key slots (slotPad); the chosen message arrives, and the
// receiver's keys unmask the others no better than chance.
func TestOneOutOfNSlots(t *testing.T) {
	snd, rcv := pair(t)
	g := testPRG(t)
	for _, c := range []struct{ logN, bits int }{{4, 2}, {4, 8}, {3, 16}, {2, 32}, {1, 64}} {
		if !useSlots(c.logN, c.bits) {
			t.Fatalf("%+v: expected slot pads", c)
		}
		N := 1 << c.logN
		const n = 2000
		r, _ := share.NewRing(c.bits)
		msgs := make([][]uint64, n)
		choices := make([]uint16, n)
		for i := range msgs {
			msgs[i] = g.Uniform(r, N)
			choices[i] = uint16(g.Uint64() % uint64(N))
		}
		wait := run(func() error { return snd.SendN(msgs, c.logN, c.bits) })
		got, err := rcv.ReceiveN(choices, c.logN, c.bits)
		if err != nil {
			t.Fatal(err)
		}
		if err := wait(); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i] != msgs[i][choices[i]] {
				t.Fatalf("%+v instance %d: got %x want %x", c, i, got[i], msgs[i][choices[i]])
			}
		}
	}
	if useSlots(4, 9) || useSlots(5, 8) || useSlots(4, 64) {
		t.Error("messages beyond one key must use hashed pads")
	}
	// The receiver's view: with only K_b^{c_b}, slot pads of the other
	// messages are independent of its keys. Take the keys of one instance
	// and check that pads of v ≠ c computed from them match the sender's
	// at the rate of chance (2^-8 for 8 bits).
	var keys [4][2]Key
	for b := range keys {
		for s := range keys[b] {
			for j := range keys[b][s] {
				keys[b][s][j] = byte(g.Uint64())
			}
		}
	}
	const trials = 4000
	hits := 0
	for trial := 0; trial < trials; trial++ {
		for b := range keys {
			for j := range keys[b][1] {
				keys[b][0][j], keys[b][1][j] = byte(g.Uint64()), byte(g.Uint64())
			}
		}
		c := int(g.Uint64() % 16)
		view := make([][2]Key, 4)
		for b := range view {
			k := keys[b][c>>b&1]
			view[b] = [2]Key{k, k}
		}
		for v := 0; v < 16; v++ {
			same := slotPad(v, 8, keys[:]) == slotPad(v, 8, view)
			if v == c && !same {
				t.Fatal("the chosen pad differs")
			}
			if v != c && same {
				hits++
			}
		}
	}
	if rate := float64(hits) / (trials * 15); rate > 3.0/256 {
		t.Errorf("non-chosen pads guessed at rate %.4f, chance is %.4f", rate, 1.0/256)
	}
}
