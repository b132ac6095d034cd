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
	// fit, 32 needed → 2 output tiles, inputs read twice, baby steps
	// recomputed (112 + 24 automorphisms).
	f := r.Flow
	want = Traffic{Inputs: 16 * ct, Plaintexts: 2048 * pt, Keys: 31 * key, Outputs: 8 * ct}
	if f.HBM != want || f.OutputTiles != 2 || f.Automorphisms != 136 || f.KeyPolicy != "keys-resident" {
		t.Errorf("OptiFlow traffic %+v, %d tiles, %v automorphisms, %s; want %+v", f.HBM, f.OutputTiles, f.Automorphisms, f.KeyPolicy, want)
	}
	if !(f.HBMBytes < s.HBMBytes) {
		t.Errorf("OptiFlow moves %.0f B, BSGS split %.0f B: reuse should move fewer", f.HBMBytes, s.HBMBytes)
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

// Latency never increases with HBM bandwidth; traffic does not depend on it.
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
			if r.Split.HBMBytes != bytesS || r.Flow.HBMBytes != bytesF {
				t.Errorf("%g GB/s: traffic changed", gbs)
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
	if len(r.Scratchpad) == 0 || len(r.Bandwidth) != 5 || len(r.Lanes) != 4 || len(r.Networks) != 1 {
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
