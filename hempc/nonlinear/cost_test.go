package nonlinear

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/hempc/share"
	"github.com/rosemary-fhe/rosemary/hempc/transport"
)

// uBytes is the IKNP receiver message for n OTs: 128 columns of ⌈n/64⌉ words.
func uBytes(n int) uint64 { return uint64(128 * ((n + 63) / 64) * 8) }

// expectedMillionaires is the traffic of one millionaires' batch on k bits.
func expectedMillionaires(n, k int) transport.Stats {
	const h = transport.HeaderSize
	var st transport.Stats
	q := (k + blockBits - 1) / blockBits
	// Leaves: client sends the KK13 u matrix (256 bits per block), server
	// the 16 two-bit masked messages.
	st.BytesC2S += uint64(256*((n*q+63)/64)*8) + h
	st.BytesS2C += uint64(share.PackedLen(n*q*16, 2)) + h
	st.Flights += 2
	st.Frames += 2
	for cur := q; cur > 1; cur = (cur + 1) / 2 {
		na := n * (cur / 2)
		st = addStats(st, bothWays(uBytes(na), uint64(share.PackedLen(2*na, 2))))
	}
	return st
}

// bothWays is an OT step run in both directions: two exchanges.
func bothWays(u, reply uint64) transport.Stats {
	const h = transport.HeaderSize
	b := u + h + reply + h
	return transport.Stats{BytesC2S: b, BytesS2C: b, Flights: 2, Frames: 4}
}

func addStats(a, b transport.Stats) transport.Stats {
	return transport.Stats{BytesC2S: a.BytesC2S + b.BytesC2S, BytesS2C: a.BytesS2C + b.BytesS2C, Frames: a.Frames + b.Frames, Flights: a.Flights + b.Flights}
}

// expectedReLU computes, from the protocol description in doc.go, the exact
// traffic of one ReLU batch of n values in an ℓ-bit ring.
func expectedReLU(n, l int) transport.Stats {
	return addStats(expectedMillionaires(n, l-1), bothWays(uBytes(n), uint64(share.PackedLen(n, l))))
}

// expectedTruncate is the traffic of truncating n values by 2^s: a
// millionaires' on ℓ bits and a one-way B2A in s-bit correlated OTs.
func expectedTruncate(n, l, s int) transport.Stats {
	const h = transport.HeaderSize
	b2a := transport.Stats{BytesC2S: uBytes(n) + h, BytesS2C: uint64(share.PackedLen(n, s)) + h, Flights: 2, Frames: 2}
	return addStats(expectedMillionaires(n, l), b2a)
}

// TestReLUCost measures a ReLU batch of 4096 at ℓ = 37 over the counted
// transport and checks every counter against the protocol's formula.
func TestReLUCost(t *testing.T) {
	const n, l = 4096, 37
	p0, p1 := pair(t, l)
	g := testPRG(t)
	r := p0.Ring()
	x0, x1 := r.Split(g, signedInputs(g, r, n))
	// The setup ends with a client→server flight that the first leaf message
	// would continue; one small batch first makes the measured batch start
	// after an exchange, as every batch but the first does.
	both(t, func() ([]uint64, error) { return p0.ReLU(x0[:1]) }, func() ([]uint64, error) { return p1.ReLU(x1[:1]) })
	before := p1.Conn().Stats()
	both(t, func() ([]uint64, error) { return p0.ReLU(x0) }, func() ([]uint64, error) { return p1.ReLU(x1) })
	got := p1.Conn().Stats().Sub(before)
	want := expectedReLU(n, l)
	if got != want {
		t.Fatalf("client counters %+v, want %+v", got, want)
	}
	if srv := p0.Conn().Stats(); srv.BytesC2S != p1.Conn().Stats().BytesC2S || srv.BytesS2C != p1.Conn().Stats().BytesS2C || srv.Flights != p1.Conn().Stats().Flights {
		t.Fatalf("server and client disagree: %+v vs %+v", srv, p1.Conn().Stats())
	}
	if got.Flights != 12 || got.Rounds() != 6 {
		t.Errorf("flights %d rounds %d, want 12 and 6", got.Flights, got.Rounds())
	}
	t.Logf("ReLU ℓ=%d batch %d: c2s %d B, s2c %d B, %.1f B/ReLU, %d flights (%d rounds)",
		l, n, got.BytesC2S, got.BytesS2C, float64(got.BytesC2S+got.BytesS2C)/n, got.Flights, got.Rounds())
}

// BenchmarkReLU runs ReLU batches of 4096 at ℓ = 37, both parties in this
// process over the in-memory pipe, and reports the traffic per ReLU.
func BenchmarkReLU(b *testing.B) {
	const n, l = 4096, 37
	p0, p1 := pair(b, l)
	g := testPRG(b)
	r := p0.Ring()
	x0, x1 := r.Split(g, signedInputs(g, r, n))
	before := p1.Conn().Stats()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		both(b, func() ([]uint64, error) { return p0.ReLU(x0) }, func() ([]uint64, error) { return p1.ReLU(x1) })
	}
	st := p1.Conn().Stats().Sub(before)
	b.ReportMetric(float64(st.BytesC2S)/float64(n*b.N), "c2s_B/ReLU")
	b.ReportMetric(float64(st.BytesS2C)/float64(n*b.N), "s2c_B/ReLU")
	b.ReportMetric(float64(st.Rounds())/float64(b.N), "rounds/batch")
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "ReLU/s")
}

// BenchmarkTruncate runs truncations by 2^12 of 4096 values at ℓ = 37.
func BenchmarkTruncate(b *testing.B) {
	const n, l = 4096, 37
	p0, p1 := pair(b, l)
	g := testPRG(b)
	r := p0.Ring()
	x0, x1 := r.Split(g, signedInputs(g, r, n))
	before := p1.Conn().Stats()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		both(b, func() ([]uint64, error) { return p0.Truncate(x0, 12) }, func() ([]uint64, error) { return p1.Truncate(x1, 12) })
	}
	st := p1.Conn().Stats().Sub(before)
	b.ReportMetric(float64(st.BytesC2S+st.BytesS2C)/float64(n*b.N), "B/trunc")
	b.ReportMetric(float64(st.Rounds())/float64(b.N), "rounds/batch")
}
