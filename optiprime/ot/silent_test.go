package ot

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/share"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// silentPair sets up a silent sender (server side) and receiver (client
// side) with parameter set f over an in-memory pipe.
func silentPair(t testing.TB, f Ferret) (*Sender, *Receiver) {
	c, s := transport.Pipe()
	t.Cleanup(func() { c.Close(); s.Close() })
	var snd *Sender
	wait := run(func() (err error) { snd, err = NewSilentSender(s, f); return })
	rcv, err := NewSilentReceiver(c, f)
	if err != nil {
		t.Fatal(err)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	return snd, rcv
}

// reserve runs Reserve(n) on both ends.
func reserve(t testing.TB, snd *Sender, rcv *Receiver, n int) {
	t.Helper()
	wait := run(func() error { return snd.Reserve(n) })
	if err := rcv.Reserve(n); err != nil {
		t.Fatal(err)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
}

func TestGGMPuncture(t *testing.T) {
	g := testPRG(t)
	for _, h := range []int{1, 2, 5} {
		full := make([]block, 1<<h)
		full[0] = block{g.Uint64(), g.Uint64()}
		sums := make([][2]block, h)
		ggmExpand(new(hasher), full, h, sums)
		seen := map[block]bool{}
		for _, v := range full {
			if seen[v] {
				t.Fatalf("h=%d: two leaves are equal", h)
			}
			seen[v] = true
		}
		for alpha := 0; alpha < 1<<h; alpha++ {
			sib := make([]block, h)
			for l := range sib {
				sib[l] = sums[l][1^alpha>>(h-1-l)&1]
			}
			got := make([]block, 1<<h)
			ggmPuncture(new(hasher), got, h, alpha, sib)
			for j := range got {
				want := full[j]
				if j == alpha {
					want = block{}
				}
				if got[j] != want {
					t.Fatalf("h=%d α=%d: leaf %d wrong", h, alpha, j)
				}
			}
		}
	}
}

// checkPools asserts M_j = K_j ⊕ x_j·Δ for every pooled and base OT, and
// that the choice bits are balanced (the LPN output is pseudorandom, not
// the sparse noise alone).
func checkPools(t *testing.T, snd *Sender, rcv *Receiver) {
	t.Helper()
	sp, rp := snd.pool, rcv.pool
	if len(sp.avail) != len(rp.avail) || len(sp.base) != len(rp.base) {
		t.Fatalf("pools differ: %d/%d avail, %d/%d base", len(sp.avail), len(rp.avail), len(sp.base), len(rp.base))
	}
	ones := 0
	for _, c := range []struct {
		k, m []block
		x    []uint8
	}{{sp.avail, rp.avail, rp.availBits}, {sp.base, rp.base, rp.baseBits}} {
		for j := range c.k {
			if c.x[j] > 1 || c.m[j] != c.k[j].xor(snd.s.and(-uint64(c.x[j]))) {
				t.Fatalf("correlated OT %d of %d: M != K ⊕ x·Δ", j, len(c.k))
			}
			ones += int(c.x[j])
		}
	}
	n := len(sp.avail) + len(sp.base)
	if f := float64(ones) / float64(n); f < 0.49 || f > 0.51 {
		t.Fatalf("%d of %d choice bits are 1", ones, n)
	}
}

func TestSilentCorrelation(t *testing.T) {
	snd, rcv := silentPair(t, FerretSmall)
	p, _ := FerretSmall.params()
	if got := len(snd.pool.avail); got != p.yield() {
		t.Fatalf("after setup %d pooled, want %d", got, p.yield())
	}
	checkPools(t, snd, rcv)
	// Draining past the pool runs iterations; the unused rest is kept.
	reserve(t, snd, rcv, 2*p.yield()-5)
	if snd.Iterations() != 2 || rcv.Iterations() != 2 || len(snd.pool.avail) != 2*p.yield() {
		t.Fatalf("after reserve: %d/%d iterations, %d pooled", snd.Iterations(), rcv.Iterations(), len(snd.pool.avail))
	}
	checkPools(t, snd, rcv)
	// The pooled OTs are all distinct keys (a broken tree repeats leaves).
	seen := make(map[block]bool, len(snd.pool.avail))
	for _, k := range snd.pool.avail {
		if seen[k] {
			t.Fatal("two pooled keys are equal")
		}
		seen[k] = true
	}
}

// TestSilentRegular runs the regular set's bootstrap (IKNP → small
// iteration → regular base) and one regular iteration.
func TestSilentRegular(t *testing.T) {
	if testing.Short() {
		t.Skip("one regular Ferret iteration holds ≈ 0.7 GB on both ends in one process; runs without -short")
	}
	snd, rcv := silentPair(t, FerretRegular)
	small, _ := FerretSmall.params()
	reg, _ := FerretRegular.params()
	if got := len(snd.pool.avail); got != small.n-reg.base() {
		t.Fatalf("after bootstrap %d pooled, want %d", got, small.n-reg.base())
	}
	reserve(t, snd, rcv, len(snd.pool.avail)+1)
	if got, want := len(snd.pool.avail), small.n-reg.base()+reg.yield(); got != want {
		t.Fatalf("after one regular iteration %d pooled, want %d", got, want)
	}
	checkPools(t, snd, rcv)
}

// TestSilentTraffic checks an iteration's bytes against iterationBytes and
// that a request costs one bit per OT.
func TestSilentTraffic(t *testing.T) {
	snd, rcv := silentPair(t, FerretSmall)
	p, _ := FerretSmall.params()
	before := rcv.conn.Stats()
	reserve(t, snd, rcv, len(snd.pool.avail)+1)
	st := rcv.conn.Stats().Sub(before)
	c2s, s2c := p.iterationBytes()
	if st.BytesC2S != uint64(c2s+transport.HeaderSize) || st.BytesS2C != uint64(s2c+transport.HeaderSize) || st.Flights != 2 {
		t.Fatalf("iteration traffic %+v, want %d / %d bytes in 2 flights", st, c2s, s2c)
	}
	_, msg, err := rcv.Request(make([]uint8, 1001))
	if err != nil {
		t.Fatal(err)
	}
	if len(msg) != 126 {
		t.Fatalf("request for 1001 OTs is %d bytes, want 126", len(msg))
	}
}

// TestSilentDerivedOTs runs every derived OT over the silent source.
func TestSilentDerivedOTs(t *testing.T) {
	snd, rcv := silentPair(t, FerretSmall)
	g := testPRG(t)
	const n = 3000
	r, _ := share.NewRing(37)
	m0, m1 := g.Uniform(r, n), g.Uniform(r, n)
	choices := g.Bits(n)
	reserve(t, snd, rcv, 3*n+4*n)

	wait := run(func() error { return snd.SendChosen(m0, m1, 37) })
	got, err := rcv.ReceiveChosen(choices, 37)
	if err != nil || wait() != nil {
		t.Fatal(err)
	}
	for j := range got {
		if want := [2]uint64{m0[j], m1[j]}[choices[j]]; got[j] != want {
			t.Fatalf("chosen OT %d wrong", j)
		}
	}

	var x []uint64
	wait = run(func() (err error) { x, err = snd.SendCorrelated(m0, r); return })
	y, err := rcv.ReceiveCorrelated(choices, r)
	if err != nil || wait() != nil {
		t.Fatal(err)
	}
	for j := range y {
		if want := r.Add(x[j], m0[j]*uint64(choices[j])); y[j] != r.Reduce(want) {
			t.Fatalf("correlated OT %d wrong", j)
		}
	}

	var keys [][2]Key
	wait = run(func() (err error) { keys, err = snd.SendRandom(n); return })
	rk, err := rcv.ReceiveRandom(choices)
	if err != nil || wait() != nil {
		t.Fatal(err)
	}
	for j := range rk {
		if rk[j] != keys[j][choices[j]] || rk[j] == keys[j][1-choices[j]] {
			t.Fatalf("random OT %d wrong", j)
		}
	}

	msgs := make([][]uint64, n)
	nch := make([]uint16, n)
	for i := range msgs {
		msgs[i] = g.Uniform(r, 16)
		nch[i] = uint16(g.Uint64() % 16)
	}
	wait = run(func() error { return snd.SendN(msgs, 4, 37) })
	gotN, err := rcv.ReceiveN(nch, 4, 37)
	if err != nil || wait() != nil {
		t.Fatal(err)
	}
	for i := range gotN {
		if gotN[i] != msgs[i][nch[i]] {
			t.Fatalf("1-out-of-16 OT %d wrong", i)
		}
	}
}

func TestSilentRejectsBadRequests(t *testing.T) {
	snd, rcv := silentPair(t, FerretSmall)
	pooled := len(snd.pool.avail)
	if _, _, err := rcv.Request(make([]uint8, pooled+1)); err == nil {
		t.Fatal("receiver overdrew its pool")
	}
	if _, _, err := snd.process(pooled+1, make([]byte, choicesLen(pooled+1))); err == nil {
		t.Fatal("sender overdrew its pool")
	}
	for _, msg := range [][]byte{nil, make([]byte, 3), {0, 0x80}} {
		if _, _, err := snd.process(9, msg); err == nil {
			t.Fatalf("sender accepted a %d-byte request %x for 9 OTs", len(msg), msg)
		}
	}
	if len(snd.pool.avail) != pooled {
		t.Fatal("a rejected request consumed pooled OTs")
	}
	if _, _, err := rcv.Request([]uint8{2}); err == nil {
		t.Fatal("receiver accepted choice 2")
	}
	if _, err := NewSilentSender(nil, Ferret(9)); err == nil {
		t.Fatal("unknown parameter set accepted")
	}
}

// TestFerretRejectsBadTrees feeds a truncated tree message to the receiver.
func TestFerretRejectsBadTrees(t *testing.T) {
	c, s := transport.Pipe()
	defer c.Close()
	p := ferretParams{n: 8, k: 2, t: 2, h: 2}
	go func() {
		if _, err := s.RecvType(typeFerretChoice); err == nil {
			s.Send(typeFerretTrees, make([]byte, 7))
		}
	}()
	err := ferretReceive(c, p, make([]block, p.base()), make([]uint8, p.base()), 0, make([]block, p.n), make([]uint8, p.n))
	if err == nil {
		t.Fatal("receiver accepted a 7-byte tree message")
	}
}

// BenchmarkFerretRegular runs regular Ferret iterations, both ends in this
// process (so on the same cores), and reports correlated OTs per second,
// bytes per correlated OT and the CPU time (both parties) an iteration.
func BenchmarkFerretRegular(b *testing.B) {
	snd, rcv := silentPair(b, FerretRegular)
	before := rcv.conn.Stats()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		reserve(b, snd, rcv, len(snd.pool.avail)+1)
	}
	b.ReportMetric(float64((cpuTime()-cpu).Milliseconds())/float64(b.N), "cpu-ms/op")
	st := rcv.conn.Stats().Sub(before)
	made := float64(b.N * FerretRegular.Yield())
	b.ReportMetric(made/b.Elapsed().Seconds(), "COT/s")
	b.ReportMetric(float64(st.BytesC2S+st.BytesS2C)/made, "B/COT")
}

// BenchmarkSilentChosen is BenchmarkIKNPChosen over the silent source.
func BenchmarkSilentChosen(b *testing.B) {
	snd, rcv := silentPair(b, FerretRegular)
	reserve(b, snd, rcv, 1<<23) // the iterations are BenchmarkFerretRegular's
	benchChosen(b, snd, rcv)
}
