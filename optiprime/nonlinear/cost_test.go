package nonlinear

import (
	"syscall"
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/ot"
	"github.com/rosemary-fhe/rosemary/optiprime/share"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// fill tops both parties' silent-OT pools up to 2^20 correlated OTs each
// way, so that the step measured next runs no refill (the cost formulas
// count steps; refills are counted apart). It ends with a server→client
// flight, as the formulas assume a step starts.
func fill(t testing.TB, p0, p1 *Party) {
	t.Helper()
	f := func(p *Party) (struct{}, error) {
		if err := p.reserve(1<<20, 1<<20); err != nil {
			return struct{}{}, err
		}
		_, err := p.RevealTo(nil, 1)
		return struct{}{}, err
	}
	both(t, func() (struct{}, error) { return f(p0) }, func() (struct{}, error) { return f(p1) })
}

// measure runs f on both parties and returns the client's counter delta.
func measure(t testing.TB, p0, p1 *Party, f func(p *Party) error) transport.Stats {
	t.Helper()
	fill(t, p0, p1)
	before := p1.Conn().Stats()
	both(t, func() (struct{}, error) { return struct{}{}, f(p0) }, func() (struct{}, error) { return struct{}{}, f(p1) })
	return p1.Conn().Stats().Sub(before)
}

// TestSetupCost checks NewParty's traffic against SetupCost.
func TestSetupCost(t *testing.T) {
	p0, p1 := pair(t, 37)
	if got, want := p1.Conn().Stats(), SetupCost(); got != want {
		t.Fatalf("client setup counters %+v, want %+v", got, want)
	}
	if got, want := p0.Conn().Stats(), SetupCost(); got != want {
		t.Fatalf("server setup counters %+v, want %+v", got, want)
	}
}

// TestRefillCost drains the pools by a ReLU batch larger than setup left
// in them and checks the refills' count and traffic.
func TestRefillCost(t *testing.T) {
	const n, l = 20000, 37
	p0, p1 := pair(t, l)
	g := testPRG(t)
	r := p0.Ring()
	x0, x1 := r.Split(g, signedInputs(g, r, n))
	before := p1.Conn().Stats()
	both(t, func() ([]uint64, error) { return p0.ReLU(x0) }, func() ([]uint64, error) { return p1.ReLU(x1) })
	got := p1.Conn().Stats().Sub(before)
	// Party 0 → 1 draws 4 OTs per leaf (9 leaves), one per AND (8) and one
	// for the mux: 900,000 against 602,019 pooled at setup, so one refill;
	// the other way draws 180,000, none.
	it, traffic := p1.Refills()
	it0, traffic0 := p0.Refills()
	if it != 1 || it0 != 1 || traffic != traffic0 {
		t.Fatalf("refills: client %d %+v, server %d %+v; want one each, equal", it, traffic, it0, traffic0)
	}
	if traffic.BytesC2S+traffic.BytesS2C != RefillBytes(ot.FerretSmall) || traffic.Frames != 2 {
		t.Fatalf("refill traffic %+v, want %d bytes in 2 frames", traffic, RefillBytes(ot.FerretSmall))
	}
	step := ReLUCost(n, l)
	if got.BytesC2S+got.BytesS2C != step.BytesC2S+step.BytesS2C+RefillBytes(ot.FerretSmall) {
		t.Fatalf("ReLU with a refill moved %+v; formula %+v plus %d refill bytes", got, step, RefillBytes(ot.FerretSmall))
	}
}

// TestCostFormulas checks every exported cost function against the counters
// of a real run, including a multi-pass millionaires'.
func TestCostFormulas(t *testing.T) {
	// Leaf frames of 100 values, passes of 2 frames at ℓ−1 = 36 bits and
	// ℓ = 37 (4 at 20 bits, 6 at 12): the batches below run several frames
	// per pass and several passes.
	// ANDs in batches of 150: the tree's levels run several.
	old, oldPass, oldAnd := millionairesChunk, millionairesPassOTs, andBatch
	millionairesChunk, millionairesPassOTs, andBatch = 100, 8000, 150
	defer func() { millionairesChunk, millionairesPassOTs, andBatch = old, oldPass, oldAnd }()
	if millionairesPassLen(36) != 200 || millionairesPassLen(20) != 400 {
		t.Fatalf("passes of %d and %d values", millionairesPassLen(36), millionairesPassLen(20))
	}
	const l = 37
	p0, p1 := pair(t, l)
	g := testPRG(t)
	r := p0.Ring()
	warm := func() { // end setup's client flight (see TestReLUCost)
		both(t, func() ([]uint64, error) { return p0.ReLU(nil) }, func() ([]uint64, error) { return p1.ReLU(nil) })
	}
	warm()
	for _, n := range []int{0, 1, 99, 100, 250} {
		x := g.Uniform(r, n)
		shares := map[int][]uint64{}
		shares[0], shares[1] = r.Split(g, x)
		bitsIn := g.Bits(n)
		cases := []struct {
			name string
			f    func(p *Party) error
			want transport.Stats
		}{
			{"millionaires", func(p *Party) error { _, err := p.Millionaires(make([]uint64, n), 20); return err }, MillionairesCost(n, 20)},
			{"drelu", func(p *Party) error { _, err := p.DReLU(shares[p.ID()]); return err }, DReLUCost(n, l)},
			{"relu", func(p *Party) error { _, err := p.ReLU(shares[p.ID()]); return err }, ReLUCost(n, l)},
			{"mux", func(p *Party) error { _, err := p.Mux(bitsIn, shares[p.ID()]); return err }, MuxCost(n, l)},
			{"b2a", func(p *Party) error { _, err := p.B2A(bitsIn, r); return err }, B2ACost(n, l)},
			{"truncate", func(p *Party) error { _, err := p.Truncate(shares[p.ID()], 12); return err }, TruncateCost(n, l, 12)},
			{"truncate-exact", func(p *Party) error { _, err := p.TruncateExact(shares[p.ID()], 12); return err }, TruncateExactCost(n, l, 12)},
			{"truncate-nonneg", func(p *Party) error { _, err := p.TruncateNonneg(shares[p.ID()], 12); return err }, TruncateNonnegCost(n, l, 12)},
			{"relu-truncate", func(p *Party) error { _, err := p.ReLUTruncate(shares[p.ID()], 12); return err }, ReLUTruncateCost(n, l, 12)},
			{"truncate-exact s=20", func(p *Party) error { _, err := p.TruncateExact(shares[p.ID()], 20); return err }, TruncateExactCost(n, l, 20)},
			{"relu-truncate s=36", func(p *Party) error { _, err := p.ReLUTruncate(shares[p.ID()], 36); return err }, ReLUTruncateCost(n, l, 36)},
		}
		for _, c := range cases {
			if got := measure(t, p0, p1, c.f); got != c.want {
				t.Errorf("n=%d %s: measured %+v, formula %+v", n, c.name, got, c.want)
			}
		}
	}
	x := g.Uniform(r, 36)
	x0, x1 := r.Split(g, x)
	got := measure(t, p0, p1, func(p *Party) error {
		_, err := p.MaxPool(map[int][]uint64{0: x0, 1: x1}[p.ID()], 9)
		return err
	})
	if want := MaxPoolCost(36, 9, l); got != want {
		t.Errorf("max-pool: measured %+v, formula %+v", got, want)
	}
	nonneg := make([]uint64, 36)
	for i := range nonneg {
		nonneg[i] = g.Uint64() & share.Mask(24)
	}
	x0, x1 = r.Split(g, nonneg)
	got = measure(t, p0, p1, func(p *Party) error {
		_, err := p.MaxPoolNonneg(map[int][]uint64{0: x0, 1: x1}[p.ID()], 9, 24)
		return err
	})
	if want := MaxPoolNonnegCost(36, 9, l, 24); got != want {
		t.Errorf("max-pool of values below 2^24: measured %+v, formula %+v", got, want)
	}

}

// TestMaxPoolNonnegCost: ResNet's 3×3 max-pool reads ReLU outputs
// truncated by 2^8 (ℓ = 37, so below 2^28): comparing over 29 bits takes
// 7 leaves in three tree levels instead of 9 in four, so each of its four
// Max steps two flights fewer, and 19% fewer bytes; below 2^24 fewer
// bytes still.
func TestMaxPoolNonnegCost(t *testing.T) {
	const n, l = 9 * 200704, 37
	wide := MaxPoolCost(n, 9, l)
	for _, c := range []struct{ bits, fewerFlights, percent int }{{28, 8, 82}, {24, 8, 72}} {
		a := MaxPoolNonnegCost(n, 9, l, c.bits)
		if a.Flights != wide.Flights-uint64(c.fewerFlights) || 100*(a.BytesC2S+a.BytesS2C) > uint64(c.percent)*(wide.BytesC2S+wide.BytesS2C) {
			t.Errorf("max-pool below 2^%d: %+v; want %d flights fewer and at most %d%% of the bytes of %+v", c.bits, a, c.fewerFlights, c.percent, wide)
		}
		t.Logf("ResNet's max-pool, values below 2^%d: %.1f → %.1f MB, %d → %d flights", c.bits,
			float64(wide.BytesC2S+wide.BytesS2C)/1e6, float64(a.BytesC2S+a.BytesS2C)/1e6, wide.Flights, a.Flights)
	}
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
	fill(t, p0, p1)
	before := p1.Conn().Stats()
	both(t, func() ([]uint64, error) { return p0.ReLU(x0) }, func() ([]uint64, error) { return p1.ReLU(x1) })
	got := p1.Conn().Stats().Sub(before)
	want := ReLUCost(n, l)
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

// BenchmarkReLUNetwork runs ReLU batches of 2^16 at ℓ = 37 (the
// millionaires' chunk) over NewParty's regular Ferret set, as a network's
// sessions do, so a CPU profile of it shows their nonlinear layers' mix:
// the comparison, the Ferret refills and the hashing of derived OTs.
func BenchmarkReLUNetwork(b *testing.B) {
	const n, l = 1 << 16, 37
	r := mustRing(b, l)
	c, s := transport.Pipe()
	b.Cleanup(func() { c.Close(); s.Close() })
	p0, p1 := both(b, func() (*Party, error) { return NewParty(s, r) }, func() (*Party, error) { return NewParty(c, r) })
	g := testPRG(b)
	x0, x1 := r.Split(g, signedInputs(g, r, n))
	b.ResetTimer()
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	for i := 0; i < b.N; i++ {
		both(b, func() ([]uint64, error) { return p0.ReLU(x0) }, func() ([]uint64, error) { return p1.ReLU(x1) })
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "ReLU/s")
	// The CPU of both parties (user and system, this process), steadier than
	// the wall time on a shared machine.
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
	b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
}

// TestFusedFlights: an exact truncation's two comparisons in one run, and
// a ReLU with its truncation, take fewer flights than the steps one after
// the other (18 → 12, 20 → 14 at ℓ = 37 in one pass), and no more bytes:
// the merged tree levels save AND frames' headers (and, in small batches,
// the rounding of their bits to bytes).
func TestFusedFlights(t *testing.T) {
	const l, s = 37, 12
	for _, n := range []int{1, 4096, 802816} {
		for _, c := range []struct {
			name       string
			sep, fused transport.Stats
			flights    [2]uint64 // apart, fused, for n = 4096
		}{
			{"exact truncation", add(add(MillionairesCost(n, l), MillionairesCost(n, s)), B2ACost(2*n, l)), TruncateExactCost(n, l, s), [2]uint64{18, 12}},
			{"ReLU and truncation", add(ReLUCost(n, l), TruncateNonnegCost(n, l, s)), ReLUTruncateCost(n, l, s), [2]uint64{20, 14}},
		} {
			saved := uint64(c.sep.Frames-c.fused.Frames) / 2 * hdr
			if c.fused.BytesC2S+saved > c.sep.BytesC2S || c.fused.BytesS2C+saved > c.sep.BytesS2C || c.fused.Flights >= c.sep.Flights {
				t.Errorf("n=%d %s: fused %+v, apart %+v", n, c.name, c.fused, c.sep)
			}
			if n == 4096 && (c.sep.Flights != c.flights[0] || c.fused.Flights != c.flights[1]) {
				t.Errorf("%s: %d → %d flights, want %d → %d", c.name, c.sep.Flights, c.fused.Flights, c.flights[0], c.flights[1])
			}
			t.Logf("n=%d %s: %d → %d flights, %d → %d bytes", n, c.name, c.sep.Flights, c.fused.Flights,
				c.sep.BytesC2S+c.sep.BytesS2C, c.fused.BytesC2S+c.fused.BytesS2C)
		}
	}
}
