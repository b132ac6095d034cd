package soc

import (
	"math"
	"testing"

	"github.com/rosemary-fhe/rosemary/internal/jsontest"
	"github.com/rosemary-fhe/rosemary/rise/edge"
)

func table(t *testing.T) Report {
	t.Helper()
	r, err := Table(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Points) != len(edge.Presets) {
		t.Fatalf("%d points, want %d", len(r.Points), len(edge.Presets))
	}
	return r
}

func row(t *testing.T, p Point, s System) Row {
	t.Helper()
	for _, r := range p.Rows {
		if r.System == s {
			return r
		}
	}
	t.Fatalf("no row for %s at N=%d", s, p.N)
	return Row{}
}

// The paper's ordering: every offload step helps message-to-ciphertext;
// ciphertext-to-message has no sampling, so RISE-1BFU equals RACE there.
func TestLatencyOrdering(t *testing.T) {
	for _, p := range table(t).Points {
		b, r, r1, mx := row(t, p, Baseline), row(t, p, RACE), row(t, p, RISE1BFU), row(t, p, RISEMaxBFU)
		if !(b.Encrypt.LatencyUs > r.Encrypt.LatencyUs && r.Encrypt.LatencyUs > r1.Encrypt.LatencyUs && r1.Encrypt.LatencyUs > mx.Encrypt.LatencyUs) {
			t.Errorf("N=%d encrypt: baseline %.1f, RACE %.1f, RISE-1BFU %.1f, RISE-MaxBFU %.1f µs not strictly decreasing",
				p.N, b.Encrypt.LatencyUs, r.Encrypt.LatencyUs, r1.Encrypt.LatencyUs, mx.Encrypt.LatencyUs)
		}
		if !(b.Decrypt.LatencyUs > r.Decrypt.LatencyUs && r.Decrypt.LatencyUs == r1.Decrypt.LatencyUs && r1.Decrypt.LatencyUs > mx.Decrypt.LatencyUs) {
			t.Errorf("N=%d decrypt: baseline %.1f, RACE %.1f, RISE-1BFU %.1f, RISE-MaxBFU %.1f µs: want b > RACE = 1BFU > Max",
				p.N, b.Decrypt.LatencyUs, r.Decrypt.LatencyUs, r1.Decrypt.LatencyUs, mx.Decrypt.LatencyUs)
		}
		if b.Encrypt.Cost.AccelCycles != 0 || b.Encrypt.Cost.LinkCycles != 0 {
			t.Errorf("N=%d: baseline uses the accelerator: %+v", p.N, b.Encrypt.Cost)
		}
		// RISE-1BFU and MaxBFU differ only in accelerator cycles.
		if r1.Encrypt.Cost.CoreCycles != mx.Encrypt.Cost.CoreCycles || r1.Encrypt.Cost.LinkCycles != mx.Encrypt.Cost.LinkCycles {
			t.Errorf("N=%d: 1BFU %+v and MaxBFU %+v differ outside the accelerator", p.N, r1.Encrypt.Cost, mx.Encrypt.Cost)
		}
	}
}

// Latency grows with N for every system, both along the presets (N and
// log Q grow together) and at a fixed three-prime modulus.
func TestMonotonicInN(t *testing.T) {
	fixed := []edge.Params{}
	for _, p := range edge.Presets {
		fixed = append(fixed, edge.Params{Name: p.Name, N: p.N, Q: edge.Presets[4].Q[:3], LogScale: 25})
	}
	// Measured counts exist at the presets only; the fixed-modulus sets
	// take the derived per-operation costs.
	for i, params := range [][]edge.Params{edge.Presets, edge.Presets, fixed} {
		r, err := Table(Options{Params: params, Baseline: []string{BaselineEdge, BaselineSEAL, BaselineDerived}[i]})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range Systems {
			for i := 1; i < len(r.Points); i++ {
				a, b := row(t, r.Points[i-1], s), row(t, r.Points[i], s)
				if !(b.Encrypt.LatencyUs > a.Encrypt.LatencyUs) || !(b.Decrypt.LatencyUs > a.Decrypt.LatencyUs) {
					t.Errorf("%s: N=%d → %d: encrypt %.1f → %.1f µs, decrypt %.1f → %.1f µs", s, r.Points[i-1].N, r.Points[i].N,
						a.Encrypt.LatencyUs, b.Encrypt.LatencyUs, a.Decrypt.LatencyUs, b.Decrypt.LatencyUs)
				}
			}
		}
	}
}

// Frame sizes by hand from the paper's §II-D formulas.
func TestFramePlanHand(t *testing.T) {
	cases := []struct {
		w, h, n, logq, limbs int
		cts                  int
		bits                 float64
	}{
		// QQVGA: 153,600 bits / (2048·30) = 2.5 → 3 cts of 2·4096·90 bits (paper: "3 ciphertexts", "270 KB").
		{160, 120, 4096, 30, 3, 3, 3 * 2 * 4096 * 90},
		// QVGA: 614,400 / 61,440 = 10 cts (paper: "10 ciphertexts", "900 KB").
		{320, 240, 4096, 30, 3, 10, 10 * 2 * 4096 * 90},
		// QQVGA at N = 16384, log Q = 390: one ciphertext of 1.6 MB.
		{160, 120, 16384, 30, 13, 1, 2 * 16384 * 390},
		// QVGA at N = 16384: 614,400 / 245,760 = 2.5 → 3.
		{320, 240, 16384, 30, 13, 3, 3 * 2 * 16384 * 390},
		// N = 1024 with one 27-bit prime: 153,600 / 13,824 = 11.1 → 12.
		{160, 120, 1024, 27, 1, 12, 12 * 2 * 1024 * 27},
	}
	for _, c := range cases {
		f, err := FramePlan("f", c.w, c.h, c.n, c.logq, c.limbs)
		if err != nil {
			t.Fatal(err)
		}
		if f.Ciphertexts != c.cts || f.Bits != c.bits {
			t.Errorf("%dx%d N=%d: %d cts / %.0f bits, want %d / %.0f", c.w, c.h, c.n, f.Ciphertexts, f.Bits, c.cts, c.bits)
		}
		if math.Abs(f.FPS5GMax-900e6/c.bits) > 1e-9 || math.Abs(f.FPS5GMin-100e6/c.bits) > 1e-9 {
			t.Errorf("5G limits %v %v", f.FPS5GMax, f.FPS5GMin)
		}
	}
	// The paper's 5G frame rates at N = 16384 follow from these sizes.
	qq, _ := FramePlan("qqvga", 160, 120, 16384, 30, 13)
	q, _ := FramePlan("qvga", 320, 240, 16384, 30, 13)
	pv := Paper()
	for _, c := range []struct{ got, want float64 }{
		{qq.FPS5GMax, pv.FPS5GMaxQQVGA}, {q.FPS5GMax, pv.FPS5GMaxQVGA}, {qq.FPS5GMin, pv.FPS5GMinQQVGA}, {q.FPS5GMin, pv.FPS5GMinQVGA},
	} {
		if math.Floor(c.got) != c.want {
			t.Errorf("5G frame rate %.2f, paper %v", c.got, c.want)
		}
	}
	if _, err := FramePlan("bad", 0, 120, 4096, 30, 3); err == nil {
		t.Error("zero width accepted")
	}
	// FPS: 3 ciphertexts of 1 ms each → 333.3 frames/s.
	if got := FPS(1000, 3); math.Abs(got-1000.0/3) > 1e-9 {
		t.Errorf("FPS(1000 µs, 3) = %v", got)
	}
	if FPS(0, 3) != 0 || FPS(10, 0) != 0 {
		t.Error("FPS of degenerate input not 0")
	}
}

// The table's FPS columns are FPS(latency, cts) of its own rows.
func TestTableFPS(t *testing.T) {
	for _, p := range table(t).Points {
		for _, r := range p.Rows {
			want := 1e6 / (r.Encrypt.LatencyUs * float64(p.QQVGA.Ciphertexts))
			if math.Abs(r.FPSQQVGA-want) > 1e-9*want {
				t.Errorf("%s N=%d: fps %v want %v", r.System, p.N, r.FPSQQVGA, want)
			}
			if r.FPSQVGA >= r.FPSQQVGA {
				t.Errorf("%s N=%d: QVGA fps %v ≥ QQVGA %v", r.System, p.N, r.FPSQVGA, r.FPSQQVGA)
			}
		}
	}
}

// Operation counts by hand for N = 4096 with three 30-bit primes.
func TestCountsHand(t *testing.T) {
	p, err := edge.Preset(4096)
	if err != nil {
		t.Fatal(err)
	}
	enc, dec, err := Counts(p)
	if err != nil {
		t.Fatal(err)
	}
	if enc.Crypto.Butterflies != 3*3*2048*12 || enc.Crypto.ModMul != 2*4096*3 || enc.Crypto.Lifts != 2*4096*3 {
		t.Errorf("encrypt crypto counts %+v", enc.Crypto)
	}
	if enc.Codec.FFTButterflies != 1024*11 {
		t.Errorf("encoder FFT butterflies %v, want %v", enc.Codec.FFTButterflies, 1024*11)
	}
	// e0, e1: ⌈4096/3⌉·16 = 21,856 bytes → 81 blocks each; u: 4112.1 bytes
	// → 16 blocks; two permutations per block.
	if want := 2.0 * (81 + 81 + 16); enc.Sample.KeccakPerms != want {
		t.Errorf("Keccak permutations %v, want %v", enc.Sample.KeccakPerms, want)
	}
	// 3 × 30 bits < 126: all three limbs; CRT 3 steps and 2 wide per coefficient.
	if dec.Crypto.Limbs != 3 || dec.Codec.CRTModMul != 4096*3 || dec.Codec.CRTWide != 4096*2 {
		t.Errorf("decrypt counts %+v %+v", dec.Crypto, dec.Codec)
	}
	p16, _ := edge.Preset(16384)
	if _, d16, _ := Counts(p16); d16.Crypto.Limbs != 4 { // 4 × 30 = 120 < 126 ≤ 150
		t.Errorf("N=16384 decrypt limbs %d, want 4", d16.Crypto.Limbs)
	}
	if _, _, err := Counts(edge.Params{N: 1000, Q: p.Q}); err == nil {
		t.Error("N=1000 accepted")
	}
	if _, _, err := Counts(edge.Params{N: 1024}); err == nil {
		t.Error("no primes accepted")
	}
}

// The byte counts the model charges to the samplers are those edge's
// samplers draw: replay the same PRNG stream through the exported Read and
// find where a sampler run left it.
func TestSamplerBytesMatchEdge(t *testing.T) {
	var seed [edge.SeedSize]byte
	for i := range seed {
		seed[i] = byte(7*i + 1)
	}
	for _, n := range []int{1, 2, 3, 1024, 4096, 16384} {
		// Binomial: after SampleBinomial(n) the next bytes are those at
		// offset BinomialBytes(n) of the stream.
		p := edge.NewPRNG(seed)
		p.Seek(5, 0)
		p.SampleBinomial(make([]int8, n))
		next := make([]byte, 8)
		p.Read(next)
		ref := edge.NewPRNG(seed)
		ref.Seek(5, 0)
		all := make([]byte, BinomialBytes(n)+8)
		ref.Read(all)
		if string(all[BinomialBytes(n):]) != string(next) {
			t.Errorf("n=%d: binomial sampler did not consume %d bytes", n, BinomialBytes(n))
		}
		// Ternary: replay the rejection on the raw stream to count bytes.
		p.Seek(6, 0)
		p.SampleTernary(make([]int8, n))
		p.Read(next)
		ref.Seek(6, 0)
		raw := make([]byte, 2*n+64)
		ref.Read(raw)
		used, acc := 0, 0
		for acc < n {
			if raw[used] != 255 {
				acc++
			}
			used++
		}
		if string(raw[used:used+8]) != string(next) {
			t.Errorf("n=%d: ternary sampler consumption differs from the replay (%d bytes)", n, used)
		}
		if n >= 4096 && math.Abs(float64(used)-TernaryBytesExpected(n)) > 6*math.Sqrt(float64(n)/255) {
			t.Errorf("n=%d: %d ternary bytes, expected %.1f", n, used, TernaryBytesExpected(n))
		}
	}
}

func TestPowerAreaFromPaper(t *testing.T) {
	r := table(t)
	first, last := r.Points[0], r.Points[len(r.Points)-1]
	check := func(p Point, s System, pw, ar float64) {
		t.Helper()
		x := row(t, p, s)
		if math.Abs(x.PowerMW-pw) > 1e-9 || math.Abs(x.AreaRel-ar) > 1e-12 {
			t.Errorf("%s N=%d: %.6f mW, area %.6f; want %.6f, %.6f", s, p.N, x.PowerMW, x.AreaRel, pw, ar)
		}
		for _, c := range []Conversion{x.Encrypt, x.Decrypt} {
			if math.Abs(c.EnergyUJ-pw*1e-3*c.LatencyUs) > 1e-9*c.EnergyUJ || math.Abs(c.ADP-ar*c.LatencyUs) > 1e-9*c.ADP ||
				math.Abs(c.EDP-c.EnergyUJ*c.LatencyUs) > 1e-9*c.EDP {
				t.Errorf("%s N=%d: inconsistent energy products %+v", s, p.N, c)
			}
		}
	}
	check(first, Baseline, 27.19, 1)
	check(last, Baseline, 27.19, 1)
	check(first, RACE, 27.19*1.25, 1.15)
	check(last, RACE, 27.19*1.28, 1.84)
	check(first, RISE1BFU, 27.19*1.25*1.1162, 1.15*1.0365)
	check(last, RISEMaxBFU, 27.19*1.28*1.3015*1.1098, 1.84*1.0214*1.2238)
}

func TestInvalidConfig(t *testing.T) {
	a := DefaultAccel()
	a.LinkWordsPerCycle = 0
	if _, err := Table(Options{Accel: &a}); err == nil {
		t.Error("zero link bandwidth accepted")
	}
	if _, err := Table(Options{MaxBFU: 3}); err == nil {
		t.Error("3 BFUs accepted")
	}
	c := DefaultCore()
	c.ClockHz = 2e9
	if _, err := Table(Options{Core: &c}); err == nil {
		t.Error("mismatched clocks accepted")
	}
	if _, err := Table(Options{Params: []edge.Params{}}); err == nil {
		t.Error("empty parameter list accepted")
	}
}

// More BFUs never slow the accelerator down, and the speed-up saturates
// where the link and the core dominate.
func TestBFUScaling(t *testing.T) {
	p, _ := edge.Preset(16384)
	core, acc := DefaultCore(), DefaultAccel()
	sw, err := software(Options{}, p, core)
	if err != nil {
		t.Fatal(err)
	}
	prev := math.Inf(1)
	for _, b := range []int{1, 2, 4, 8, 16, 32} {
		r, err := Evaluate(RISEMaxBFU, p, sw, core, acc, b, 1024, 16384)
		if err != nil {
			t.Fatal(err)
		}
		if !(r.Encrypt.Cost.AccelCycles < prev) {
			t.Errorf("%d BFUs: %.0f accelerator cycles, not below %.0f", b, r.Encrypt.Cost.AccelCycles, prev)
		}
		prev = r.Encrypt.Cost.AccelCycles
	}
}

func TestReportJSON(t *testing.T) {
	r := table(t)
	back := jsontest.RoundTrip(t, r)
	if back.Points[2].N != 4096 || back.Points[2].Rows[3].System != RISEMaxBFU || back.Paper.FPSQQVGA[RISEMaxBFU][1] != 27 {
		t.Errorf("round trip lost data: %+v", back.Points[2].Rows[3])
	}
}

func TestSummary(t *testing.T) {
	r := table(t)
	s := r.Model
	b0, r0 := row(t, r.Points[0], Baseline), row(t, r.Points[0], RACE)
	v := b0.Encrypt.LatencyUs / r0.Encrypt.LatencyUs
	if v < s.RACEvsBaselineEnc.Min || v > s.RACEvsBaselineEnc.Max || s.RACEvsBaselineEnc.Min > s.RACEvsBaselineEnc.Max {
		t.Errorf("span %+v does not hold the first point's %v", s.RACEvsBaselineEnc, v)
	}
	if s.MaxvsRISE1Enc.Min <= 1 || s.MaxvsBaselineEnc.Min <= s.RACEvsBaselineEnc.Min {
		t.Errorf("summary %+v", s)
	}
	last := r.Points[len(r.Points)-1]
	if got := s.FPSQVGA[RISEMaxBFU][1]; got != row(t, last, RISEMaxBFU).FPSQVGA {
		t.Errorf("FPS end point %v", got)
	}
	if (Summarize(Report{}).FPSQQVGA) == nil {
		t.Error("empty summary has nil maps")
	}
}
