package system

import (
	"bytes"
	"encoding/csv"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/sim/eventsim"
	"github.com/rosemary-fhe/rosemary/sim/pcie"
	"github.com/rosemary-fhe/rosemary/sim/ssd/nand"
)

func preset(t testing.TB, name string) *arch.Arch {
	t.Helper()
	a, err := arch.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func compile(t testing.TB, p *ir.Program, a *arch.Arch, opt compiler.OptLevel) *compiler.Plan {
	t.Helper()
	plan, err := compiler.Compile(p, a, compiler.Options{Opt: compiler.OptLevel(opt)})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

func run(t testing.TB, plan *compiler.Plan, a *arch.Arch, sys System, opt Options) *Result {
	t.Helper()
	r, err := Run(plan, a, sys, opt)
	if err != nil {
		t.Fatalf("%v: %v", sys, err)
	}
	return r
}

// scanProgram is a flash-bound scan: one query ciphertext times `count`
// stored plaintexts of pir-bgv (N = 2^13, 3 limbs: 3 pages each), summed.
func scanProgram(t testing.TB, count int64) *ir.Program {
	t.Helper()
	b := ir.NewBuilder("scan", "pir-bgv")
	q := b.Input("query", 2)
	db := b.Stored("db", 2, count, true)
	b.Output("answer", b.Sum(b.PMult(q, db), 1))
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNANDBoundScan: a scan whose compute is negligible takes the flash
// bytes over the aggregate flash bandwidth: within 2% of the steady-state
// bound nand.PeakReadGBps and within 5% of channels x channel rate.
func TestNANDBoundScan(t *testing.T) {
	a := preset(t, "rosemary")
	plan := compile(t, scanProgram(t, 1<<15), a, "full")
	r := run(t, plan, a, Rosemary, Options{})
	rep := r.Report
	if rep.NANDBytes != 3*(1<<15)*int64(a.NAND.PageBytes) {
		t.Fatalf("read %d flash bytes, want %d", rep.NANDBytes, 3*(1<<15)*a.NAND.PageBytes)
	}
	peak, err := nand.PeakReadGBps(a.NAND)
	if err != nil {
		t.Fatal(err)
	}
	bound := float64(rep.NANDBytes) / (peak * 1e9)
	raw := float64(rep.NANDBytes) / (float64(a.NAND.Channels) * a.NAND.ChannelGBps() * 1e9)
	if rel := (rep.LatencyS - bound) / bound; rel < 0 || rel > 0.02 {
		t.Errorf("latency %.4f s vs flash bound %.4f s (%+.2f%%)", rep.LatencyS, bound, 100*rel)
	}
	if rel := math.Abs(rep.LatencyS-raw) / raw; rel > 0.05 {
		t.Errorf("latency %.4f s vs channels x rate %.4f s (%.2f%%)", rep.LatencyS, raw, 100*rel)
	}
	u := rep.Utilization
	if u.NAND < 0.97 || u.NAND < u.Engine || u.NAND < u.DRAM || u.NAND < u.Host {
		t.Errorf("utilization %+v: NAND should be the bottleneck", u)
	}
	t.Logf("scan of %d MiB: %.4f s (bound %.4f, raw %.4f), NAND %.1f%%", rep.NANDBytes>>20, rep.LatencyS, bound, raw, 100*u.NAND)
}

// ntPlan is a two-node plan: a stored object (no reads) feeding one SSD
// node whose profile the test replaces.
func kernelExec(t *testing.T, count int64, maxTiles int, prof lower.Profile) *exec {
	t.Helper()
	p := &ir.Program{Name: "kernel", Nodes: []ir.Node{
		{ID: 0, Op: ir.OpStored, Params: "pir-bgv", Level: 2, Degree: 1, Count: count, Name: "x"},
		{ID: 1, Op: ir.OpRescale, Args: []int{0}, Params: "pir-bgv", Level: 1, Degree: 1, Count: count},
	}}
	plan := &compiler.Plan{Workload: "kernel", Opt: "full", Program: p, Placement: []compiler.Device{compiler.SSD, compiler.SSD}}
	x, err := newExec(plan, preset(t, "rosemary"), Rosemary, Options{MaxTiles: maxTiles})
	if err != nil {
		t.Fatal(err)
	}
	x.nodes[1].prof = prof
	return x
}

// TestNTTLatencyIsItsCycles: one NTT over one limb on the engine takes
// exactly its computed cycle count; ten NTTs in three tiles take ten times.
func TestNTTLatencyIsItsCycles(t *testing.T) {
	a := preset(t, "rosemary")
	dp := a.Engine.Datapath()
	for _, n := range []int{1 << 12, 1 << 13, 1 << 16} {
		cy, err := dp.LimbCycles(arch.NTT, n)
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(bitsLen(n)-1) * int64(n/2) / int64(dp.Lanes); cy != want {
			t.Fatalf("N=%d: %d cycles, want log N x N/2 / lanes = %d", n, cy, want)
		}
		for _, c := range []struct {
			count int64
			tiles int
		}{{1, 1}, {10, 3}} {
			x := kernelExec(t, c.count, c.tiles, lower.Profile{N: n, Kernels: map[arch.Kernel]int64{arch.NTT: 1}, InputLimbs: []int64{0}})
			if err := x.run(); err != nil {
				t.Fatal(err)
			}
			want := eventsim.Time(dp.Picoseconds(cy * c.count))
			if x.sim.Now() != want {
				t.Errorf("N=%d, %d NTTs: latency %v, want %v (%d cycles each)", n, c.count, x.sim.Now(), want, cy)
			}
		}
	}
}

func bitsLen(n int) int {
	l := 0
	for ; n > 0; n >>= 1 {
		l++
	}
	return l
}

// forEachKernel calls f with every lowered kernel of p's operations, its
// ring degree and how many times it runs, as the simulator charges them
// (computed here independently with lower.Profiler): inputs, stored
// objects, outputs and level drops cost nothing, a Sum adds its
// ciphertexts pairwise, and opOf names the operation a node lowers to.
func forEachKernel(t *testing.T, p *ir.Program, opOf func(*ir.Program, ir.Node) ir.Op, f func(k arch.Kernel, n int, count int64)) {
	t.Helper()
	prof := lower.NewProfiler()
	for _, n := range p.Nodes {
		switch n.Op {
		case ir.OpInput, ir.OpStored, ir.OpOutput, ir.OpLevelDown:
			continue
		}
		op, inst, first := opOf(p, n), n.Count, p.Nodes[n.Args[0]]
		if n.Op == ir.OpSum {
			op, inst = ir.OpHAdd, n.Count*(first.Count/n.Count-1)
		}
		pr, err := prof.Of(op, n.Params, first.Level, first.Degree)
		if err != nil {
			t.Fatal(err)
		}
		for k, c := range pr.Kernels {
			f(k, pr.N, c*inst)
		}
	}
}

// TestEngineChargesCompilerKernels: the engine cycles of a simulated run
// equal the cycles of every SSD node's lowered kernels (lower.Profiler)
// times its instances, computed here independently with arch.Datapath.
func TestEngineChargesCompilerKernels(t *testing.T) {
	a := preset(t, "rosemary")
	for _, w := range []string{"pir:small", "vecdist:small"} {
		p, err := workload.Program(w)
		if err != nil {
			t.Fatal(err)
		}
		plan := compile(t, p, a, "full")
		r := run(t, plan, a, INSPIRE, Options{})
		dp := a.Engine.Datapath()
		var want int64
		// The device lifts a compact database on the fly in its PMult.
		forEachKernel(t, p, lower.NodeOp, func(k arch.Kernel, n int, count int64) {
			cy, err := dp.Cycles(arch.Op{Kernel: k, N: n, Count: int(count)})
			if err != nil {
				t.Fatal(err)
			}
			want += cy
		})
		if want == 0 || r.Detail.EngineCycles != want {
			t.Errorf("%s: engine charged %d cycles, the lowered kernels cost %d", w, r.Detail.EngineCycles, want)
		}
		if got := eventsim.Time(dp.Picoseconds(want)); r.Detail.EngineBusy < got-eventsim.Time(r.Report.Tiles) || r.Detail.EngineBusy > got+eventsim.Time(r.Report.Tiles) {
			t.Errorf("%s: engine busy %v, cycles give %v", w, r.Detail.EngineBusy, got)
		}
	}
}

// TestPCIeTransferMQSim: the query's trip to the SSD occupies the link for
// MQSim's time: ceil(wire bytes / lanes) at one lane's post-encoding rate,
// wire bytes = full 128 B TLPs of 128 + 28 B plus a partial TLP.
func TestPCIeTransferMQSim(t *testing.T) {
	a := preset(t, "rosemary")
	p := scanProgram(t, 64)
	plan := compile(t, p, a, "full")
	if plan.Placement[2] != compiler.SSD {
		t.Fatalf("scan PMult placed on %s", plan.Placement[2])
	}
	r := run(t, plan, a, Rosemary, Options{})
	payload, err := p.Bytes(p.Nodes[0], a.Engine.WordBits)
	if err != nil {
		t.Fatal(err)
	}
	l := a.Link
	mps, ovh := int64(l.MaxPayloadBytes), int64(l.TLPHeaderBytes+l.DLLPBytes+l.PHYBytes)
	wire := payload / mps * (mps + ovh)
	if rem := payload % mps; rem > 0 {
		wire += rem + ovh
	}
	perLane := (wire + int64(l.Lanes) - 1) / int64(l.Lanes)
	// lane rate: GT/s x 128/130 / 8 bytes per ns; time in ps, rounded up.
	num := perLane * 8 * int64(l.EncodingDen) * 1000 * 1000
	den := int64(l.GTps*1000) * int64(l.EncodingNum)
	want := eventsim.Time((num + den - 1) / den)
	st := r.Detail.PCIe[pcie.ToDevice]
	if st.Busy != want || st.PayloadBytes != payload || st.WireBytes != wire || st.Messages != 1 {
		t.Errorf("to-device: %+v, want busy %v, payload %d, wire %d, 1 message", st, want, payload, wire)
	}
	if got := st.Busy.Seconds(); math.Abs(got-l.TransferSeconds(payload)) > 1e-12 {
		t.Errorf("busy %.9g s, arch.Link.TransferSeconds %.9g s", got, l.TransferSeconds(payload))
	}
	if r.Report.PCIeBytes != payload+r.Detail.PCIe[pcie.ToHost].PayloadBytes {
		t.Errorf("pcie_bytes %d", r.Report.PCIeBytes)
	}
}

// TestMoreResourcesNeverSlower: over the shipped workloads at full scale,
// more AUs, more eDRAM or a bigger flash back end never make Rosemary
// slower. The hardware is swept under one plan (compiled for the base
// preset), so the property is the models' own; recompiling for each
// configuration, TDAP's estimate never increases either (its partition is
// optimal for each cost model, and costs only fall; CLCAO's variants are
// heuristics and are not held to this).
func TestMoreResourcesNeverSlower(t *testing.T) {
	base := preset(t, "rosemary")
	series := map[string][]*arch.Arch{}
	for _, n := range []int{4, 8, 16, 32, 64} {
		b, err := arch.WithAUs(base, n)
		if err != nil {
			t.Fatal(err)
		}
		series["aus"] = append(series["aus"], b)
	}
	for _, mb := range []int64{0, 32, 64, 96, 128} {
		b, err := arch.WithEDRAM(base, mb<<20)
		if err != nil {
			t.Fatal(err)
		}
		series["edram"] = append(series["edram"], b)
	}
	for _, n := range []string{"ssd-small", "ssd-medium", "ssd-large"} {
		series["ssd"] = append(series["ssd"], preset(t, n))
	}
	for _, w := range workload.Names() {
		if strings.HasPrefix(w, "vecsearch-") && strings.HasSuffix(w, "-l") {
			// The L forms run the S forms' network stages over 4× the
			// slots (a few more stages): the same structure, and
			// together they would double this test's time.
			continue
		}
		p, err := workload.Program(w)
		if err != nil {
			t.Errorf("workload %s: %v", w, err)
			continue
		}
		plan := compile(t, p, base, "full")
		for name, archs := range series {
			prev, prevEst := math.Inf(1), math.Inf(1)
			var prevRep Report
			var lats []float64
			for _, a := range archs {
				r := run(t, plan, a, Rosemary, Options{MaxTiles: 256, TileBudget: 1 << 14})
				lat := r.Report.LatencyS
				lats = append(lats, lat)
				// A greedy FIFO schedule is not monotone in its resources
				// (Graham's list-scheduling anomalies): host-bound
				// vecsearch runs come out up to 1.2e-3 slower on ssd-large
				// than on ssd-medium with the same host busy time and every
				// byte count identical — only the order of events differs
				// (not the flash pipeline fill: the difference stays with
				// the fill switched off, tried). Such a run is allowed
				// 2e-3; any run that does more work, or is slower by more,
				// fails.
				if lat > prev*(1+1e-9) && !(lat <= prev*(1+2e-3) && sameWork(r.Report, prevRep)) {
					t.Errorf("%s/%s: %s is slower (%.6g s) than the previous configuration (%.6g s)", w, name, a.Name, lat, prev)
				}
				prev, prevRep = lat, r.Report
				if est := compile(t, p, a, "tdap").EstLatency; est > prevEst*(1+1e-9) {
					t.Errorf("%s/%s: %s estimates slower (%.6g s) than the previous configuration (%.6g s)", w, name, a.Name, est, prevEst)
				} else {
					prevEst = est
				}
			}
			t.Logf("%s %s: %.4g", w, name, lats)
		}
	}
}

// sameWork reports whether two runs moved the same bytes everywhere and
// kept the host busy equally long: they differ only in event order.
func sameWork(a, b Report) bool {
	busy := func(r Report) float64 { return r.Utilization.Host * r.LatencyS }
	return a.PCIeBytes == b.PCIeBytes && a.NANDBytes == b.NANDBytes && a.DRAMBytes == b.DRAMBytes && a.HostMem == b.HostMem &&
		math.Abs(busy(a)-busy(b)) <= 1e-9*busy(a)
}

// TestPIRFullScale: the paper's PIR (VCaLL, 2^32 x 96 B) compiled with
// --opt full: Rosemary beats HA and the CPU, and the flash is its
// bottleneck (highest utilization), as the paper's Figure 13 reports.
func TestPIRFullScale(t *testing.T) {
	a := preset(t, "rosemary")
	p, err := workload.Program("pir")
	if err != nil {
		t.Fatal(err)
	}
	plan := compile(t, p, a, "full")
	reps := map[System]Report{}
	for _, s := range []System{Rosemary, HA, CPU, INSPIRE} {
		reps[s] = run(t, plan, a, s, Options{}).Report
	}
	ros, ha := reps[Rosemary], reps[HA]
	// INSPIRE, in our model, scans the same flash with the same engine: a
	// flash-bound PIR takes it as long as Rosemary (within 1%).
	if !(ros.LatencyS < ha.LatencyS) || !(ros.LatencyS < reps[CPU].LatencyS) || !(ros.LatencyS < reps[INSPIRE].LatencyS*1.01) {
		t.Errorf("Rosemary %.4g s, HA %.4g s, CPU %.4g s, INSPIRE %.4g s", ros.LatencyS, ha.LatencyS, reps[CPU].LatencyS, reps[INSPIRE].LatencyS)
	}
	u := ros.Utilization
	if u.NAND < 0.95 || u.NAND <= u.Host || u.NAND <= u.DRAM || u.NAND <= u.Engine {
		t.Errorf("Rosemary utilization %+v: NAND should be highest", u)
	}
	// HA moves the whole database over PCIe; Rosemary only the queries
	// and the answer.
	if ha.PCIeBytes < plan.HostOnlyBytes || ros.PCIeBytes != plan.CutBytes {
		t.Errorf("PCIe bytes: HA %d (database %d), Rosemary %d (plan cut %d)", ha.PCIeBytes, plan.HostOnlyBytes, ros.PCIeBytes, plan.CutBytes)
	}
	if ha.Utilization.PCIe < 0.95 {
		t.Errorf("HA should be PCIe-bound: %+v", ha.Utilization)
	}
	for _, s := range []System{Rosemary, HA, CPU, INSPIRE} {
		r := reps[s]
		t.Logf("%-8s latency %8.2f s  speedup-vs-HA %.2fx  util host %.1f%% nand %.1f%% dram %.1f%% engine %.1f%% pcie %.1f%%  energy %.4g J  events %d",
			s, r.LatencyS, ha.LatencyS/r.LatencyS, 100*r.Utilization.Host, 100*r.Utilization.NAND, 100*r.Utilization.DRAM,
			100*r.Utilization.Engine, 100*r.Utilization.PCIe, r.EnergyJ, r.SimEvents)
	}
}

// TestINSPIREModel: the INSPIRE model places everything in the SSD, has no
// scratchpad (area and energy without its Table V row), streams a product
// consumed only by a Sum into the accumulator (its fused multiply-
// accumulate) and sends any other large intermediate through LPDDR.
func TestINSPIREModel(t *testing.T) {
	a := preset(t, "rosemary")
	p := scanProgram(t, 4096)
	plan := compile(t, p, a, "full")
	ins := run(t, plan, a, INSPIRE, Options{}).Report
	ros := run(t, plan, a, Rosemary, Options{}).Report
	var pad float64
	for _, c := range a.Components {
		if c.Kind == arch.KindEDRAM {
			pad += c.AreaMM2
		}
	}
	if math.Abs(ins.AreaMM2-(a.AreaMM2()-pad)) > 1e-9 || pad == 0 {
		t.Errorf("INSPIRE area %.3f, want %.3f - %.3f", ins.AreaMM2, a.AreaMM2(), pad)
	}
	// One product instance is 2 polys x 3 limbs x 32 KiB; the 4096 of the
	// fused scan never reach LPDDR.
	const product = int64(2 * 3 * 32768)
	if ins.DRAMBytes >= 4096*product {
		t.Errorf("INSPIRE scan LPDDR bytes %d: the fused products went through LPDDR", ins.DRAMBytes)
	}
	if ins.LatencyS < ros.LatencyS*(1-1e-9) {
		t.Errorf("INSPIRE %.4g s faster than Rosemary %.4g s", ins.LatencyS, ros.LatencyS)
	}
	if len(ins.Notes) == 0 || ins.Notes[0] != inspireNote {
		t.Errorf("INSPIRE notes %q lack the assumption", ins.Notes)
	}

	// Two products added before the Sum: the products have a non-Sum user,
	// so both are written to LPDDR and read back (4096 instances each);
	// their sum streams into the accumulator.
	b := ir.NewBuilder("scan2", "pir-bgv")
	q := b.Input("query", 2)
	db1 := b.Stored("db1", 2, 4096, true)
	db2 := b.Stored("db2", 2, 4096, true)
	b.Output("answer", b.Sum(b.HAdd(b.PMult(q, db1), b.PMult(q, db2)), 1))
	p2, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	ins2 := run(t, compile(t, p2, a, "full"), a, INSPIRE, Options{}).Report
	if want := 2 * 2 * 4096 * product; ins2.DRAMBytes < want || ins2.DRAMBytes >= want+4096*product {
		t.Errorf("INSPIRE two-product LPDDR bytes %d, want %d (plus small values)", ins2.DRAMBytes, want)
	}
}

// TestTimelineMatchesBusy: the timeline's engine intervals add up to the
// engine's busy time and the CSV round-trips.
func TestTimelineMatchesBusy(t *testing.T) {
	a := preset(t, "rosemary")
	p, err := workload.Program("vecdist:small")
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, compile(t, p, a, "full"), a, Rosemary, Options{Timeline: true})
	var sum float64
	for _, iv := range r.Timeline.Resources["engine"] {
		if iv.End < iv.Start || iv.Start < 0 || iv.End > r.Report.LatencyS*(1+1e-12) {
			t.Fatalf("bad interval %+v (latency %g)", iv, r.Report.LatencyS)
		}
		sum += iv.End - iv.Start
	}
	if busy := r.Detail.EngineBusy.Seconds(); busy == 0 || math.Abs(sum-busy) > 1e-9*busy+1e-12 {
		t.Errorf("engine intervals sum to %g s, busy %g s", sum, busy)
	}
	var buf bytes.Buffer
	if err := r.Timeline.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, l := range r.Timeline.Resources {
		rows += len(l)
	}
	if len(recs) != rows+1 || recs[0][0] != "resource" {
		t.Fatalf("%d CSV records for %d intervals", len(recs), rows)
	}
	for _, rec := range recs[1:] {
		if _, err := strconv.ParseFloat(rec[1], 64); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCPUModelScaling(t *testing.T) {
	m, err := newCPUModel("pir-bgv", 1)
	if err != nil {
		t.Fatal(err)
	}
	ntt13, _ := m.limbNs(arch.NTT, 1<<13)
	ntt14, _ := m.limbNs(arch.NTT, 1<<14)
	add14, _ := m.limbNs(arch.ModAdd, 1<<14)
	if ntt13 != cpuNs60[arch.NTT] || math.Abs(ntt14-ntt13*2*14/13) > 1e-9 || add14 != 2*cpuNs60[arch.ModAdd] {
		t.Errorf("NTT %g -> %g, add(2^14) %g", ntt13, ntt14, add14)
	}
	h, err := newCPUModel("hevec", 2)
	if err != nil {
		t.Fatal(err)
	}
	s, err := h.seconds(map[arch.Kernel]int64{arch.ModMul: 3}, 1<<13, 2)
	if err != nil || math.Abs(s-3*2*cpuNs49[arch.ModMul]/2/1e9) > 1e-15 {
		t.Errorf("hevec (49-bit table, 2 cores): %g s, %v", s, err)
	}
}

func TestBadInputs(t *testing.T) {
	a := preset(t, "rosemary")
	p := scanProgram(t, 4)
	plan := compile(t, p, a, "full")
	if _, err := Simulate(nil, a, Rosemary); err == nil {
		t.Error("nil plan accepted")
	}
	if _, err := Simulate(plan, nil, Rosemary); err == nil {
		t.Error("nil arch accepted")
	}
	if _, err := Simulate(plan, a, System(99)); err == nil {
		t.Error("bad system accepted")
	}
	bad := *plan
	bad.Placement = bad.Placement[:1]
	if _, err := Simulate(&bad, a, Rosemary); err == nil {
		t.Error("short placement accepted")
	}
	bad = *plan
	bad.Placement = append([]compiler.Device(nil), plan.Placement...)
	bad.Placement[2] = compiler.Device(7) // neither side
	if _, err := Simulate(&bad, a, Rosemary); err == nil {
		t.Error("unknown device accepted")
	}
	if _, err := Run(plan, a, Rosemary, Options{MaxTiles: -1}); err == nil {
		t.Error("negative tiles accepted")
	}
	for _, s := range []string{"CPU", "ha", "Inspire", "rosemary"} {
		if _, err := ParseSystem(s); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseSystem("gpu"); err == nil {
		t.Error("gpu parsed")
	}
}

// TestHostChargesCalibratedKernels: on HA the host accelerator is busy for
// the host datapath cycles of every lowered kernel; on CPU for the
// calibrated per-limb times of cpu.go.
func TestHostChargesCalibratedKernels(t *testing.T) {
	a := preset(t, "rosemary")
	p, err := workload.Program("vecdist:small")
	if err != nil {
		t.Fatal(err)
	}
	plan := compile(t, p, a, "full")
	ha := run(t, plan, a, HA, Options{})
	cpu := run(t, plan, a, CPU, Options{CPUCores: 4})
	dp := a.Host.Datapath()
	m, err := newCPUModel(p.Nodes[1].Params, 4)
	if err != nil {
		t.Fatal(err)
	}
	var cycles int64
	var cpuS float64
	// The host runs each node's own operation.
	hostOp := func(_ *ir.Program, n ir.Node) ir.Op { return n.Op }
	forEachKernel(t, p, hostOp, func(k arch.Kernel, n int, count int64) {
		cy, err := dp.Cycles(arch.Op{Kernel: k, N: n, Count: int(count)})
		if err != nil {
			t.Fatal(err)
		}
		cycles += cy
		ns, err := m.limbNs(k, n)
		if err != nil {
			t.Fatal(err)
		}
		cpuS += ns * float64(count) / 1e9 / 4
	})
	want := dp.Seconds(cycles)
	if got := ha.Detail.HostBusy.Seconds(); cycles == 0 || math.Abs(got-want) > 1e-9*want+float64(ha.Report.Tiles)*1e-12 {
		t.Errorf("HA host busy %.9g s, kernels give %.9g s", got, want)
	}
	if got := cpu.Detail.HostBusy.Seconds(); math.Abs(got-cpuS) > 1e-9*cpuS+float64(cpu.Report.Tiles)*1e-12 {
		t.Errorf("CPU busy %.9g s, calibration gives %.9g s", got, cpuS)
	}
	if cpu.Report.Utilization.Host > 1 || math.Abs(cpu.Report.EnergyJ-4*CPUCorePowerW*cpu.Detail.HostBusy.Seconds()) > 1e-12 {
		t.Errorf("CPU report %+v", cpu.Report)
	}
}

// TestTilingConverges: the tile size sets only pipeline fill and drain, so
// coarser tiling changes the simulated latency of the full-scale workloads
// by well under 1%.
func TestTilingConverges(t *testing.T) {
	a := preset(t, "rosemary")
	for _, w := range []string{"pir", "vecdist"} {
		p, err := workload.Program(w)
		if err != nil {
			t.Fatal(err)
		}
		plan := compile(t, p, a, "full")
		fine := run(t, plan, a, Rosemary, Options{}).Report
		coarse := run(t, plan, a, Rosemary, Options{MaxTiles: 256}).Report
		if rel := math.Abs(coarse.LatencyS-fine.LatencyS) / fine.LatencyS; rel > 0.01 || coarse.Tiles >= fine.Tiles {
			t.Errorf("%s: %d tiles %.6g s, %d tiles %.6g s (%.3f%%)", w, fine.Tiles, fine.LatencyS, coarse.Tiles, coarse.LatencyS, 100*rel)
		}
	}
}

// Two host queries over one stored database (HA): the database crosses
// PCIe once, shared tile by tile, as the compiler's cost model assumes.
func TestStoredDataShippedOnceToHost(t *testing.T) {
	b := ir.NewBuilder("two-queries", "pir-bgv")
	db := b.Stored("db", 2, 4096, true)
	for _, q := range []string{"q1", "q2"} {
		x := b.Input(q, 2)
		b.Output(q+"-answer", b.Sum(b.PMult(x, db), 1))
	}
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	a := preset(t, "rosemary")
	plan := compile(t, p, a, "tdap")
	r := run(t, plan, a, HA, Options{})
	dbBytes, err := p.Bytes(p.Nodes[0], a.Engine.WordBits)
	if err != nil {
		t.Fatal(err)
	}
	dbBytes *= p.Nodes[0].Count
	if got := r.Detail.PCIe[pcie.ToHost].PayloadBytes; got < dbBytes || got > dbBytes+dbBytes/100 {
		t.Fatalf("PCIe to host %d bytes for a %d-byte database", got, dbBytes)
	}
}

// TestHostFusesCountedValues: on HA, the scan's products (4096 instances,
// far more than the host's on-chip memory together) feed only a Sum, so the
// host accelerator produces and accumulates them instance by instance: its
// HBM sees the shipped database (written, then read) and nothing of the
// products. A product consumed by a non-Sum of another count goes to HBM.
func TestHostFusesCountedValues(t *testing.T) {
	a := preset(t, "rosemary")
	p := scanProgram(t, 4096)
	ha := run(t, compile(t, p, a, "full"), a, HA, Options{}).Report
	db, err := p.Bytes(p.Nodes[1], a.Engine.WordBits)
	if err != nil {
		t.Fatal(err)
	}
	db *= 4096
	product := db * 2 // two polynomials per product instance
	if product <= a.Host.OnChipBytes {
		t.Fatalf("products %d B fit the host's %d B: the test needs more instances", product, a.Host.OnChipBytes)
	}
	if ha.HostMem < 2*db || ha.HostMem >= 2*db+product {
		t.Errorf("HA host memory traffic %d B, want the shipped database %d B and no products (%d B)", ha.HostMem, 2*db, product)
	}
}

// pir-lwe on Rosemary reads from flash exactly what the device stores: the
// 4 GiB byte matrix (64 blocks of 2048 limbs of 32 KiB, one page each) and
// the 2048 hint diagonals of 2 limbs of 8192 32-bit words (64 KiB); over
// PCIe go the 2 MiB query vector, the 128 KiB encrypted secret, the 32 KiB
// column and the 64 KiB hint ciphertext (rescaled to one limb). The scan
// is flash-bound: 4.1 GiB over the 16 × 2.4 GB/s channels, while the
// engine's LWEMACs take 64 × 2048 × 16 cycles (2.1 ms at 1 GHz). The other
// systems run it too.
func TestLWEPIRFullScale(t *testing.T) {
	a := preset(t, "rosemary")
	p, err := workload.Program("pir-lwe")
	if err != nil {
		t.Fatal(err)
	}
	plan := compile(t, p, a, "full")
	res := run(t, plan, a, Rosemary, Options{})
	r := res.Report
	if r.NANDBytes != 1<<32+2048*65536 {
		t.Errorf("flash read %d B, want %d (matrix + diagonals)", r.NANDBytes, 1<<32+2048*65536)
	}
	if r.PCIeBytes != 2097152+131072+32768+65536 {
		t.Errorf("PCIe %d B, want %d", r.PCIeBytes, 2097152+131072+32768+65536)
	}
	u := r.Utilization
	if u.NAND < 0.95 || u.Engine > 0.05 || u.Host != 0 {
		t.Errorf("utilization %+v: want NAND-bound, engine below 5%%, nothing on the host", u)
	}
	if res.Detail.EngineCycles < 64*2048*16 {
		t.Errorf("engine %d cycles, fewer than the scan's %d", res.Detail.EngineCycles, 64*2048*16)
	}
	if lower, upper := float64(1<<32+2048*65536)/38.4e9, 1.05*float64(1<<32+2048*65536)/38.4e9; r.LatencyS < lower || r.LatencyS > upper {
		t.Errorf("latency %.4g s outside [%.4g, %.4g] (flash time)", r.LatencyS, lower, upper)
	}
	for _, s := range []System{HA, CPU, INSPIRE} {
		o := run(t, plan, a, s, Options{}).Report
		if !(o.LatencyS >= r.LatencyS*0.99) {
			t.Errorf("%v: %.4g s, faster than Rosemary's %.4g s", s, o.LatencyS, r.LatencyS)
		}
		t.Logf("%-8s %.4g s, NAND %.1f%%, engine %.1f%%, host %.1f%%, PCIe %.1f%%", s, o.LatencyS,
			100*o.Utilization.NAND, 100*o.Utilization.Engine, 100*o.Utilization.Host, 100*o.Utilization.PCIe)
	}
}
