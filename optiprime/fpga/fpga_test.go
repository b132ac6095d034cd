package fpga

import (
	"math"
	"testing"

	"github.com/rosemary-fhe/rosemary/internal/jsontest"
	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/nets"
)

func pn13(t *testing.T) cheetah.Parameters {
	t.Helper()
	p, err := cheetah.NewParameters(cheetah.PN13)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func paperWorkload(t *testing.T) (Workload, *linear.Plan) {
	t.Helper()
	pl, err := linear.NewPlan(linear.OptiEncodeBSGS, pn13(t), nets.PaperLayer().Shape, nets.PaperOptions)
	if err != nil {
		t.Fatal(err)
	}
	w, err := FromPlan(pl)
	if err != nil {
		t.Fatal(err)
	}
	return w, pl
}

// The workload's structure reproduces the plan's own counters, and
// re-splitting at the plan's B changes nothing.
func TestWorkloadMatchesPlan(t *testing.T) {
	p := pn13(t)
	layers := append([]nets.Layer{nets.PaperLayer()}, nets.ResNet18().Layers...)
	for _, l := range layers {
		if isFC(l.Shape) {
			continue
		}
		pl, err := linear.NewPlan(linear.OptiEncodeBSGS, p, l.Shape, nets.PaperOptions)
		if err != nil {
			t.Fatal(err)
		}
		w, err := FromPlan(pl)
		if err != nil {
			t.Fatalf("%s: %v", l.Name, err)
		}
		if w.Automorphisms() != pl.Counters.Automorphisms || w.CPMults != pl.Counters.CPMults {
			t.Errorf("%s: workload %d auts / %d products, plan %+v", l.Name, w.Automorphisms(), w.CPMults, pl.Counters)
		}
		if !w.BSGS {
			continue
		}
		v, err := w.WithBaby(pl.Baby)
		if err != nil {
			t.Fatal(err)
		}
		if v.Automorphisms() != pl.Counters.Automorphisms || v.PostAuts != w.PostAuts {
			t.Errorf("%s: WithBaby(%d) gives %d+%d automorphisms, plan %d", l.Name, pl.Baby, v.BabyAuts, v.PostAuts, pl.Counters.Automorphisms)
		}
		// Dense layers: every group multiplies every baby step of every input by C/B giant steps.
		if int64(w.Tiles*w.G*w.C*w.Ni) != w.CPMults {
			t.Errorf("%s: %d products, structure %d·%d·%d·%d", l.Name, w.CPMults, w.Tiles, w.G, w.C, w.Ni)
		}
	}
}

// The paper's layer by hand: N = 8192, L = 3, K = 1, dnum = 3; ct = 2·3·8192·8
// = 393,216 B, plaintext 196,608 B, key 3·2·4·8192·8 = 1,572,864 B, hoisting
// buffer 786,432 B; C = 32, Ni = G = 8; the computation-efficient split is
// B = 8 (56 hoisted + 24 giant automorphisms).
func TestPaperLayerHand(t *testing.T) {
	w, pl := paperWorkload(t)
	if w.C != 32 || w.Ni != 8 || w.G != 8 || w.Tiles != 1 || w.Dnum != 3 || w.L != 3 || w.K != 1 || pl.Baby != 4 {
		t.Fatalf("paper layer structure changed: %+v (plan B %d)", w, pl.Baby)
	}
	c := Default()
	r, err := CompareWorkload(w, c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Workload.B != 8 || r.Workload.BabyAuts != 56 || r.Workload.PostAuts != 24 {
		t.Fatalf("computation-efficient split %+v", r.Workload)
	}
	const ct, pt, key = 393216.0, 196608.0, 1572864.0
	// BSGS split: reserve 2ct+2pt+key+hoist = 3,538,944 B; (24 MiB − reserve)/ct
	// = 55 resident of 64 baby-step cts; 9 spilled, 1 of them computed
	// (written); 2048 products × 9/64 read from HBM.
	s := r.Split
	want := Traffic{Inputs: 8 * ct, SpillWrite: ct, SpillRead: 288 * ct, Plaintexts: 2048 * pt, Keys: 31 * key, Outputs: 8 * ct}
	if s.HBM != want || s.ResidentCts != 55 || s.WorkingSetCts != 64 {
		t.Errorf("BSGS split traffic %+v (resident %d), want %+v", s.HBM, s.ResidentCts, want)
	}
	// OptiFlow: reserve 2ct+hoist+2pt+8 keys = 14,548,992 B → 27 partial sums
	// fit, 32 needed → 2 output tiles. The second tile reads back the 56
	// rotations the first wrote (recomputing them would add 56 rotations to
	// a compute-bound layer); inputs read twice; the split's exact work.
	// Streaming the keys fits all 32 partial sums (1 tile, no rotations
	// written) at the same latency but 49 more keys read, 29.9 MB more.
	f := r.Flow
	want = Traffic{Inputs: 16 * ct, SpillWrite: 56 * ct, SpillRead: 56 * ct, Plaintexts: 2048 * pt, Keys: 31 * key, Outputs: 8 * ct}
	if f.HBM != want || f.OutputTiles != 2 || f.Automorphisms != 80 || f.KeyPolicy != "keys-resident" || f.BabyPolicy != BabyReload {
		t.Errorf("OptiFlow traffic %+v, %d tiles, %v automorphisms, %s/%s; want %+v", f.HBM, f.OutputTiles, f.Automorphisms, f.KeyPolicy, f.BabyPolicy, want)
	}
	if !(f.HBMBytes < s.HBMBytes) {
		t.Errorf("OptiFlow moves %.0f B, BSGS split %.0f B: reuse should move fewer", f.HBMBytes, s.HBMBytes)
	}
	// Compute-bound: the modmul cluster's 127,401,984 products over 128
	// lanes at 300 MHz = 3.31776 ms for both; HBM 571,342,848 B / 460 GB/s
	// = 1.242 ms for the split.
	if f.Work != s.Work || s.ComputeS != 127401984.0/128/300e6 || f.LatencyS != s.LatencyS || r.SpeedUp != 1 || s.Bound != "compute" {
		t.Errorf("compute %g / %g s, latency %g / %g s, speedup %g", s.ComputeS, f.ComputeS, s.LatencyS, f.LatencyS, r.SpeedUp)
	}
}

// One hoisted rotation of the paper layer by hand (N = 8192, L = 3, K = 1,
// dnum = 3): ModDown's 2·(K+L) = 8 limb transforms of 4096·13 butterflies
// on 128 butterfly units = 3328 cycles = 11.09 µs at 300 MHz, 13× reading
// one 393,216 B ciphertext from HBM (0.855 µs) — where the paper's device
// makes a hoisted automorphism cheaper than an HBM access (§IV-C).
func TestHoistedRotationVsHBMAccess(t *testing.T) {
	w, _ := paperWorkload(t)
	c := Default()
	rot := costs(w).rotate
	if rot.Butterflies != 8*4096*13 || rot.ModMuls != 2*3*4*8192+2*2*3*8192 || rot.AutMoves != 15*8192 {
		t.Fatalf("rotation work %+v", rot)
	}
	if got := rot.Seconds(c) * c.ClockHz; got != 3328 {
		t.Errorf("rotation %v cycles, want 3328 (butterfly-bound)", got)
	}
	read := 393216 / c.HBMBytesPerSec
	if ratio := rot.Seconds(c) / read; math.Abs(ratio-13.0) > 0.05 {
		t.Errorf("rotation / HBM read = %.3f, want 13.0", ratio)
	}
}

// tinyLayer is a hand-sized BSGS layer: N = 16, one limb, one special
// limb, one digit: ct 256 B, plaintext 128 B, key 512 B, hoisting buffer
// 256 B; per operation (logN = 4, a limb transform 32 butterflies):
// product 32 modmuls + 32 modadds; hoist 96 butterflies + 32 modmuls;
// rotation 48 moves, 128 modmuls, 96 modadds, 128 butterflies; a full
// automorphism 224 butterflies, 160 modmuls, 48 moves, 96 modadds.
func tinyLayer(ni, g int) Workload {
	const c, b = 4, 2
	return Workload{Protocol: "optiencode-bsgs", N: 16, L: 1, K: 1, Dnum: 1, Tiles: 1, Ni: ni, G: g, C: c, B: b, BSGS: true,
		AccPerGroup: c / b, CPMults: int64(g * c * ni), BabyAuts: int64((b - 1) * ni), PostAuts: int64(g * (c/b - 1)),
		Inputs: int64(ni), Outputs: int64(g)}
}

// tinyConfig runs one cycle a second with one lane a cluster.
func tinyConfig(scratch int64, bytesPerSec float64) Config {
	return Config{ClockHz: 1, HBMBytesPerSec: bytesPerSec, ScratchpadBytes: scratch,
		NTTButterflies: 1, ModMulLanes: 1, AutLanes: 1, ModAddLanes: 1, PlaintextBytesPerCoeff: 8}
}

// Two inputs, two groups (4 partial sums, 4 baby-step ciphertexts), 2560 B
// of scratchpad. Split: reserve 2ct+2pt+key+hoist = 1536 B, 4 baby steps
// resident, nothing spilled. OptiFlow: reserve 2048 B (resident keys: 2),
// room for 2 partial sums → 2 output tiles; inputs-resident needs 2816 B.
func TestTinyLayerHand(t *testing.T) {
	w := tinyLayer(2, 2)
	// Split: 2 hoists, 2 rotations, 16 products, 2 full automorphisms:
	// modmuls 64+256+512+320 = 1152 (the busiest cluster).
	split, err := RunBSGSSplit(w, tinyConfig(2560, 1e12))
	if err != nil {
		t.Fatal(err)
	}
	wantWork := Work{Butterflies: 896, ModMuls: 1152, AutMoves: 192, ModAdds: 896}
	wantHBM := Traffic{Inputs: 512, Plaintexts: 2048, Keys: 3 * 512, Outputs: 512}
	if split.Work != wantWork || split.HBM != wantHBM || split.ComputeS != 1152 || split.ResidentCts != 4 {
		t.Errorf("split work %+v, traffic %+v, %g s, %d resident", split.Work, split.HBM, split.ComputeS, split.ResidentCts)
	}
	// Bandwidth unlimited: reloading the second tile's rotations keeps the
	// split's 1152 cycles (6144 B: inputs twice, 2 rotations written and
	// read back once); recomputing them costs 1472 cycles with 5120 B.
	// Latency decides.
	f, err := RunOptiFlow(w, tinyConfig(2560, 1e12))
	if err != nil {
		t.Fatal(err)
	}
	wantHBM = Traffic{Inputs: 1024, SpillWrite: 512, SpillRead: 512, Plaintexts: 2048, Keys: 1536, Outputs: 512}
	if f.HBM != wantHBM || f.Work != wantWork || f.OutputTiles != 2 || f.BabyPolicy != BabyReload || f.KeyPolicy != "keys-resident" || f.LatencyS != 1152 {
		t.Errorf("unlimited bandwidth: OptiFlow %+v", f)
	}
	// 4 B/s: the split takes max(1152, 4608/4) = 1152; OptiFlow's best is
	// recomputing with resident keys, max(1472, 5120/4) = 1472 (reload:
	// max(1152, 6144/4) = 1536; streamed keys: 6656/4 = 1664). Nothing
	// spills in the split, so reuse has nothing to save: 0.78×.
	c := tinyConfig(2560, 4)
	if split, err = RunBSGSSplit(w, c); err != nil {
		t.Fatal(err)
	}
	if f, err = RunOptiFlow(w, c); err != nil {
		t.Fatal(err)
	}
	wantHBM = Traffic{Inputs: 1024, Plaintexts: 2048, Keys: 1536, Outputs: 512}
	wantWork = Work{Butterflies: 1344, ModMuls: 1472, AutMoves: 288, ModAdds: 1088}
	if split.LatencyS != 1152 || f.HBM != wantHBM || f.Work != wantWork || f.BabyPolicy != BabyRecompute || f.LatencyS != 1472 || f.Automorphisms != 6 {
		t.Errorf("4 B/s: split %g s, OptiFlow %+v", split.LatencyS, f)
	}
}

// Four inputs, one group (2 partial sums, 8 baby-step ciphertexts), 2560 B,
// 4 B/s. The split holds 4 baby steps and spills the 4 inputs (no write):
// each of its 16 products reads a spilled one with probability 1/2 → 8
// ciphertexts read back, 6400 B, memory-bound at 1600 s over 1312 s of
// compute. OptiFlow holds both partial sums (1 tile): 4352 B, 1088 s of
// HBM, compute-bound at the same 1312 s → 1600/1312 = 1.22×.
func TestTinyLayerReuseWins(t *testing.T) {
	w := tinyLayer(4, 1)
	c := tinyConfig(2560, 4)
	s, err := RunBSGSSplit(w, c)
	if err != nil {
		t.Fatal(err)
	}
	f, err := RunOptiFlow(w, c)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Traffic{Inputs: 1024, SpillRead: 2048, Plaintexts: 2048, Keys: 1024, Outputs: 256}); s.HBM != want {
		t.Errorf("split traffic %+v, want %+v", s.HBM, want)
	}
	if s.ComputeS != 1312 || s.LatencyS != 1600 || s.Bound != "memory" {
		t.Errorf("split %g s compute, %g s latency, %s-bound", s.ComputeS, s.LatencyS, s.Bound)
	}
	if want := (Traffic{Inputs: 1024, Plaintexts: 2048, Keys: 1024, Outputs: 256}); f.HBM != want || f.OutputTiles != 1 {
		t.Errorf("OptiFlow traffic %+v (%d tiles), want %+v", f.HBM, f.OutputTiles, want)
	}
	if f.ComputeS != 1312 || f.LatencyS != 1312 || f.KeyPolicy != "keys-resident" {
		t.Errorf("OptiFlow %g s compute, %g s latency, %s", f.ComputeS, f.LatencyS, f.KeyPolicy)
	}
}

// On every ResNet-18 convolution at the default device, OptiFlow is at
// least as fast as the split, and moves fewer bytes wherever the split
// spills baby steps. (Layers without baby steps, B = 1, may re-read their
// inputs once per output tile where the split holds them: a few % more
// bytes at the same latency.)
func TestOptiFlowNeverSlowerResNet18(t *testing.T) {
	nr, err := CompareNetwork(nets.ResNet18(), pn13(t), nets.PaperOptions, Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range nr.Layers {
		spills := l.Split.ResidentCts < l.Split.WorkingSetCts
		if l.Flow.LatencyS > l.Split.LatencyS || spills && l.Flow.HBMBytes >= l.Split.HBMBytes {
			t.Errorf("%s: OptiFlow %g s / %.0f B, split %g s / %.0f B", l.Layer, l.Flow.LatencyS, l.Flow.HBMBytes, l.Split.LatencyS, l.Split.HBMBytes)
		}
	}
	if nr.Paper == nil || nr.Paper.EndToEndS != 2.9 || nr.Provenance != "simulated" {
		t.Errorf("ResNet-18 paper figure / provenance: %+v %q", nr.Paper, nr.Provenance)
	}
}

// Reuse moves fewer HBM bytes than the split on the paper layer for every
// scratchpad where the split spills, and the same when nothing spills.
func TestReuseFewerBytesAcrossScratchpads(t *testing.T) {
	w, _ := paperWorkload(t)
	for _, mib := range []int64{8, 12, 16, 24, 26} {
		c := Default()
		c.ScratchpadBytes = mib << 20
		r, err := CompareWorkload(w, c)
		if err != nil {
			t.Fatal(err)
		}
		if r.Split.ResidentCts == r.Split.WorkingSetCts {
			t.Fatalf("%d MiB: no spill, case belongs below", mib)
		}
		if !(r.Flow.HBMBytes < r.Split.HBMBytes) {
			t.Errorf("%d MiB: OptiFlow %.0f B ≥ split %.0f B", mib, r.Flow.HBMBytes, r.Split.HBMBytes)
		}
	}
	c := Default()
	c.ScratchpadBytes = 1 << 30
	r, err := CompareWorkload(w, c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Flow.HBMBytes != r.Split.HBMBytes || r.Flow.OutputTiles != 1 || r.Split.HBM.SpillRead != 0 || r.Flow.ComputeS != r.Split.ComputeS {
		t.Errorf("1 GiB scratchpad: split %+v, flow %+v should coincide", r.Split, r.Flow)
	}
}

func checkBounds(t *testing.T, name string, r Result, c Config) {
	t.Helper()
	mem := r.HBMBytes / c.HBMBytesPerSec
	if r.LatencyS < r.ComputeS || r.LatencyS < mem || r.LatencyS != max(r.ComputeS, mem) || !(r.ComputeS > 0) {
		t.Errorf("%s %s: latency %g, compute %g, memory %g", name, r.Dataflow, r.LatencyS, r.ComputeS, mem)
	}
	if r.HBMBytes != r.HBM.Total() {
		t.Errorf("%s: total %g ≠ sum %g", name, r.HBMBytes, r.HBM.Total())
	}
}

// Latency is bounded below by the busiest cluster and by HBM bandwidth,
// on every ResNet-18 convolution.
func TestLatencyBounds(t *testing.T) {
	c := Default()
	nr, err := CompareNetwork(nets.ResNet18(), pn13(t), nets.PaperOptions, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(nr.Layers) != 20 || len(nr.SkippedLayers) != 1 {
		t.Fatalf("%d layers, skipped %v", len(nr.Layers), nr.SkippedLayers)
	}
	for _, l := range nr.Layers {
		checkBounds(t, l.Layer, l.Split, c)
		checkBounds(t, l.Layer, l.Flow, c)
		// The compute bound is at least the busiest cluster's work for the
		// products alone: 2·L·N modular products each.
		minMul := float64(l.Workload.CPMults) * 2 * 3 * 8192 / float64(c.ModMulLanes) / c.ClockHz
		if l.Split.ComputeS < minMul || l.Flow.ComputeS < minMul {
			t.Errorf("%s: compute %g / %g below the products' %g", l.Layer, l.Split.ComputeS, l.Flow.ComputeS, minMul)
		}
	}
}

// Latency never increases with HBM bandwidth; the split's traffic does not
// depend on it, and OptiFlow's, chosen for latency, is least where
// bandwidth is scarcest.
func TestMonotonicInHBMBandwidth(t *testing.T) {
	w, _ := paperWorkload(t)
	var prevS, prevF, bytesS, bytesF float64
	for i, gbs := range []float64{25, 50, 100, 200, 460, 1000, 4000} {
		c := Default()
		c.HBMBytesPerSec = gbs * 1e9
		r, err := CompareWorkload(w, c)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			if r.Split.LatencyS > prevS || r.Flow.LatencyS > prevF {
				t.Errorf("%g GB/s: latency rose (%g→%g, %g→%g)", gbs, prevS, r.Split.LatencyS, prevF, r.Flow.LatencyS)
			}
			if r.Split.HBMBytes != bytesS || r.Flow.HBMBytes < bytesF {
				t.Errorf("%g GB/s: split traffic changed (%g → %g) or OptiFlow's fell (%g → %g)", gbs, bytesS, r.Split.HBMBytes, bytesF, r.Flow.HBMBytes)
			}
		}
		if gbs == 25 && (r.Split.Bound != "memory" || r.Flow.Bound != "memory") {
			t.Errorf("25 GB/s should be memory-bound: %s / %s", r.Split.Bound, r.Flow.Bound)
		}
		prevS, prevF, bytesS, bytesF = r.Split.LatencyS, r.Flow.LatencyS, r.Split.HBMBytes, r.Flow.HBMBytes
	}
}

// The computation-efficient split has the least compute time of all
// powers of two.
func TestComputeEfficientIsMinimal(t *testing.T) {
	w, _ := paperWorkload(t)
	c := Default()
	ce, err := ComputeEfficient(w, c)
	if err != nil {
		t.Fatal(err)
	}
	c.ScratchpadBytes = 1 << 40
	best, _ := RunBSGSSplit(ce, c)
	for b := 1; b <= w.C; b *= 2 {
		v, _ := w.WithBaby(b)
		r, err := RunBSGSSplit(v, c)
		if err != nil {
			t.Fatal(err)
		}
		if r.ComputeS < best.ComputeS {
			t.Errorf("B=%d computes in %g < chosen B=%d's %g", b, r.ComputeS, ce.B, best.ComputeS)
		}
	}
}

func TestErrors(t *testing.T) {
	p12, err := cheetah.NewParameters(cheetah.PN12)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := linear.NewPlan(linear.OptiEncodeBSGS, p12, nets.PaperLayer().Shape, nets.PaperOptions)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FromPlan(pl); err == nil {
		t.Error("N=4096 plan without special modulus accepted")
	}
	if _, err := FromPlan(nil); err == nil {
		t.Error("nil plan accepted")
	}
	w, _ := paperWorkload(t)
	if _, err := w.WithBaby(3); err == nil {
		t.Error("B=3 accepted")
	}
	if _, err := w.WithBaby(64); err == nil {
		t.Error("B > C accepted")
	}
	c := Default()
	c.ScratchpadBytes = 1 << 20
	if _, err := RunBSGSSplit(w, c); err == nil {
		t.Error("1 MiB scratchpad accepted by the split")
	}
	if _, err := RunOptiFlow(w, c); err == nil {
		t.Error("1 MiB scratchpad accepted by OptiFlow")
	}
	c = Default()
	c.HBMBytesPerSec = 0
	if _, err := RunBSGSSplit(w, c); err == nil {
		t.Error("zero bandwidth accepted")
	}
	pc, _ := linear.NewPlan(linear.Cheetah, pn13(t), nets.PaperLayer().Shape, nets.PaperOptions)
	wc, err := FromPlan(pc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wc.WithBaby(2); err == nil {
		t.Error("Cheetah layer re-split")
	}
}

func TestReportJSON(t *testing.T) {
	r, err := Table(Default(), cheetah.PN13, []nets.Network{nets.ResNet18()})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Scratchpad) == 0 || len(r.Bandwidth) != 5 || len(r.Lanes) != 4 || len(r.Networks) != 1 || len(r.NetworkLanes) != 4 {
		t.Fatalf("report shape: %d %d %d %d", len(r.Scratchpad), len(r.Bandwidth), len(r.Lanes), len(r.Networks))
	}
	back := jsontest.RoundTrip(t, r)
	if back.PaperLayer.Split.HBMBytes != r.PaperLayer.Split.HBMBytes || back.Networks[0].Network != "resnet18" {
		t.Error("JSON round trip lost data")
	}
	if math.IsNaN(back.Networks[0].TrafficRatio) || back.Networks[0].TrafficRatio <= 0 {
		t.Errorf("traffic ratio %v", back.Networks[0].TrafficRatio)
	}
}

// Arithmetic intensity by hand on the paper layer's BSGS split: the work
// of 8 hoists, 56 rotations, 2048 products and 24 full automorphisms over
// the traffic of TestPaperLayerHand.
func TestOpsPerByte(t *testing.T) {
	w, _ := paperWorkload(t)
	r, err := CompareWorkload(w, Default())
	if err != nil {
		t.Fatal(err)
	}
	N := 8192.0
	ntt := N / 2 * 13
	hoist := (3+3*4)*ntt + 3*4*N
	rotate := (3*4+3)*N + (2*3*4*N + 2*2*3*N) + (2*3*4*N + 2*3*N) + 2*4*ntt
	cp := 4 * 3 * N
	ops := 8*hoist + 56*rotate + 2048*cp + 24*(hoist+rotate)
	if got := r.Split.OpsPerByte; math.Abs(got-ops/r.Split.HBMBytes) > 1e-12 {
		t.Errorf("ops/byte %v, want %v", got, ops/r.Split.HBMBytes)
	}
}
