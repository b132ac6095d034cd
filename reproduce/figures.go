package reproduce

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/rosemary-fhe/rosemary/arch"
	"github.com/rosemary-fhe/rosemary/report"
	"github.com/rosemary-fhe/rosemary/sim/system"
)

// Provenance is the note every table carries.
const Provenance = "Provenance: \"ours\" columns are SIMULATED by our models (workload generators -> compiler.Compile -> sim/system, " +
	"arch preset rosemary unless stated); \"paper\" columns are QUOTED from the Rosemary paper (sentences below); " +
	"ratio = ours / paper; a \"why\" is given where they differ by more than 25%. Nothing here is measured on hardware."

// ModelChoices names the modelling decisions behind every figure that the
// paper leaves open (each documented where it is made).
const ModelChoices = "Model choices: PIR databases are stored compact (coefficients mod t, one limb per plaintext, lifted and NTT'd on the fly: ir.Node.Compact); " +
	"Bare follows the workloads' own segment hints (ir.Node.Segment); INSPIRE is Rosemary's engine and flash with everything in the SSD, " +
	"no eDRAM, no CLCAO beyond a fused multiply-accumulate (sim/system/inspire.go); the host accelerator keeps counted values it produces and " +
	"consumes instance by instance on chip (compiler.Streamable), for HA and Rosemary alike; evaluation keys are read per operation instance, " +
	"as the mPrograms load them; the CPU baseline is this machine's calibrated kernels scaled to 32 cores."

// Paper is a value quoted from the Rosemary paper with its sentence.
type Paper struct {
	Value float64
	Quote string
}

func none() Paper { return Paper{Value: math.NaN()} }

// GeoMean is one summary figure of a result: ours beside the paper's.
type GeoMean struct {
	Figure string  `json:"figure"`
	Name   string  `json:"name"`
	Ours   float64 `json:"ours"`
	Paper  float64 `json:"paper"`
	Ratio  float64 `json:"ratio"`
	Quote  string  `json:"quote"`
	Why    string  `json:"why,omitempty"`
	// OursFrom says where Ours comes from: "simulated" (every figure) or
	// "arch preset" (Table V).
	OursFrom string `json:"ours_from"`
}

// Result is one regenerated figure.
type Result struct {
	ID       string // "9" … "17", or "V" for Table V
	Table    *report.Table
	Chart    report.Chart
	Lines    bool // a line chart (sweeps); bars otherwise
	GeoMeans []GeoMean
}

// Figure is one entry of the figure table.
type Figure struct {
	ID    string
	Title string
	Run   func(r *Runner) (*Result, error)
}

// Figures lists every figure and table `rosemary reproduce` regenerates.
var Figures = []Figure{
	{"9", "Figure 9: speedup over CPU and HA", Fig9},
	{"10", "Figure 10: PCIe traffic, HA vs Rosemary", Fig10},
	{"11", "Figure 11: INSPIRE vs Rosemary on PIR, batch 8/16/32", Fig11},
	{"12", "Figure 12: ablation Bare / TDAP / TDAP+CLCAO", Fig12},
	{"13", "Figure 13: utilization of host, NAND, LPDDR, engine", Fig13},
	{"14", "Figure 14: eDRAM scratchpad 0-128 MB", Fig14},
	{"15", "Figure 15: FHE engine size 4-64 AUs", Fig15},
	{"16", "Figure 16: SSD small / medium / large", Fig16},
	{"16K", "Figure 16 extended: 1-64 SSDs behind one host (scale-out)", FigScaleOut},
	{"17", "Figure 17: energy and EDAP", Fig17},
	{"V", "Table V: area and power", TableV},
	{"VAL", "Validation against independent published figures (INSPIRE, SHARP)", FigValidation},
}

// FigureByID finds a figure ("9" … "17", "V"; "5" is accepted for V).
func FigureByID(id string) (Figure, error) {
	u := strings.ToUpper(strings.TrimSpace(id))
	if u == "5" {
		u = "V"
	}
	var ids []string
	for _, f := range Figures {
		if f.ID == u {
			return f, nil
		}
		ids = append(ids, f.ID)
	}
	return Figure{}, fmt.Errorf("reproduce: unknown figure %q (have %s)", id, strings.Join(ids, ", "))
}

func newTable(title string, cols ...string) *report.Table {
	return &report.Table{Title: title + " (ours: simulated; paper: quoted)", Columns: cols, Notes: []string{Provenance, ModelChoices}}
}

func quoteNote(t *report.Table, quotes ...string) {
	seen := map[string]bool{}
	for _, q := range quotes {
		if q == "" || seen[q] {
			continue
		}
		seen[q] = true
		t.Notes = append(t.Notes, "Paper: \""+q+"\"")
	}
}

func base() (*arch.Arch, error) {
	a, err := arch.Preset("rosemary")
	if err != nil {
		return nil, fmt.Errorf("reproduce: %w", err)
	}
	return a, nil
}

// perSeq scales a per-program figure of w to one sequence (transformers).
func perSeq(w Workload, v float64) float64 { return v / float64(w.Batch) }

// bottleneck names a report's busiest resource.
func bottleneck(rep system.Report) (string, float64) {
	u := rep.Utilization
	c := []struct {
		n string
		v float64
	}{{"host", u.Host}, {"NAND", u.NAND}, {"LPDDR", u.DRAM}, {"engine", u.Engine}, {"PCIe", u.PCIe}, {"HBM", u.HostMem}, {"SRAM", u.SRAM}, {"eDRAM", u.EDRAM}}
	best := c[0]
	for _, x := range c[1:] {
		if x.v > best.v {
			best = x
		}
	}
	return best.n, best.v
}

func bn(rep system.Report) string {
	n, v := bottleneck(rep)
	return fmt.Sprintf("%s %.0f%% busy", n, 100*v)
}

func isPIR(n string) bool { return strings.HasPrefix(n, "pir") }

func gm(name, fig string, ours float64, p Paper, why string) GeoMean {
	g := GeoMean{Figure: fig, Name: name, Ours: ours, Paper: p.Value, Ratio: ratio(ours, p.Value), Quote: p.Quote, OursFrom: "simulated"}
	if differs(ours, p.Value) {
		g.Why = why
	}
	return g
}

func addGeoMeans(t *report.Table, gs []GeoMean) {
	for _, g := range gs {
		s := fmt.Sprintf("Summary %s: ours %.4g (%s), paper %.4g (quoted), ratio %.3g", g.Name, g.Ours, g.OursFrom, g.Paper, g.Ratio)
		if g.Why != "" {
			s += "; why: " + g.Why
		}
		t.Notes = append(t.Notes, s)
	}
}

// ---------------------------------------------------------------- Figure 9

const (
	q9gm     = "Relative to HA, Rosemary delivers up to 5.4× speedup and a GM speedup of 3.7×."
	q9cpu    = "Rosemary outperforms the CPU/GPU baselines by 4.6× to 3790.9×, achieving a GM speedup of 185.7×."
	q9pir    = "For PIR, it achieves an average speedup of 4.3× across VCALL, COMM, and FSYS."
	q9vqs    = "For the database workloads, VQ1_S and VQ2_S achieve 4.6× and 3.6× speedups over HA, while VQ1_L and VQ2_L see more moderate gains of around 2×."
	q9dnn    = "For encrypted and unencrypted DNN inference, Rosemary achieves speedups of 2.95× to 3.52× and 3.40× to 4.19× compared to HA, respectively."
	q9llm    = "Rosemary improves over HA by 5.37× on BERT-Base and 4.09× on Llama3-8B."
	q9hevec  = "Among the database workloads, HEVEC achieves the largest speedup over HA because its coefficient-encoded inner product relies primarily on lightweight multiply-add operations while substantially reducing data movement."
	whyCPU   = "our CPU baseline is this machine's calibrated single-thread kernel costs scaled perfectly to 32 cores (sim/system cpu.go); the paper's CPU/GPU baselines are the prior works' own implementations (e.g. a single-threaded SEAL ResNet, GPU BERT/Llama), so the spread differs"
	whyRange = " (paper value: geometric midpoint of the quoted range)"
)

func paper9(name string) Paper {
	switch name {
	case "pir-vcall", "pir-comm", "pir-fsys":
		return Paper{4.3, q9pir}
	case "vecsearch-vq1-s":
		return Paper{4.6, q9vqs}
	case "vecsearch-vq2-s":
		return Paper{3.6, q9vqs}
	case "vecsearch-vq1-l", "vecsearch-vq2-l":
		return Paper{2, q9vqs}
	case "resnet-ew":
		return Paper{math.Sqrt(2.95 * 3.52), q9dnn}
	case "resnet-uw":
		return Paper{math.Sqrt(3.40 * 4.19), q9dnn}
	case "bert":
		return Paper{5.37, q9llm}
	case "llama":
		return Paper{4.09, q9llm}
	}
	return none()
}

// why9 explains a > 25% difference of the speedup over HA from the
// simulated bottlenecks.
func why9(w Workload, ha, ros system.Report) string {
	s := fmt.Sprintf("simulated bottlenecks: HA %s, Rosemary %s", bn(ha), bn(ros))
	if math.Abs(ros.LatencyS-ha.LatencyS) <= 1e-3*ha.LatencyS {
		s += "; our TDAP plan keeps the whole program on the host (no offload pays off under our cost model), so Rosemary runs as HA"
	}
	switch {
	case isPIR(w.Name):
		s += "; PIR is a flash scan: the speedup is roughly the aggregate flash bandwidth of the preset over the PCIe link's; the paper value is the average over the three databases"
	case strings.HasPrefix(w.Name, "vecsearch"):
		s += fmt.Sprintf("; on Engorgio's column layout (one ciphertext per column: 8 distance and 9 or 5 payload columns, stored at the level "+
			"bootstrapping leaves) HA moves only %s over PCIe (the link %.1f%% busy): the work is the bitonic top-k network — 39 to 70 "+
			"compare-and-swap stages, each a degree-247 Chebyshev step and two bootstrappings at N = 2^17 — which runs on the host "+
			"accelerator in both systems (the SSD engine is slower at it); the paper's gain needs data movement to dominate its HA "+
			"baseline, which a database of 10K–64K records in a few hundred MiB does not in our model",
			report.Bytes(ha.PCIeBytes), 100*ha.Utilization.PCIe)
	case strings.HasPrefix(w.Name, "resnet"):
		s += "; in our model host-side work (HBM, bootstrapping on the host accelerator, bottleneck above) dominates both systems, so offloading the linear layers saves little" + whyRange
	case w.Name == "bert" || w.Name == "llama":
		s += "; our NEXUS-style program and its TDAP placement are ours (the paper does not give its batching or placement per layer)"
	}
	return s
}

// Fig9 is the speedup of Rosemary over CPU and HA per workload.
func Fig9(r *Runner) (*Result, error) {
	a, err := base()
	if err != nil {
		return nil, err
	}
	t := newTable("Figure 9: speedup of Rosemary over CPU and HA", "workload", "cpu_latency_s", "ha_latency_s", "rosemary_latency_s",
		"speedup_vs_cpu", "speedup_vs_ha", "paper", "ratio", "why")
	t.Notes = append(t.Notes, "Latencies of bert and llama are per sequence (program latency / batch of 128); CPU = 32 cores with perfect scaling of our single-thread calibration.")
	r.expect(3 * len(r.workloads))
	var cats []string
	var quotes []string
	var sc, sh []float64
	for _, w := range r.workloads {
		ha, err := r.Sim(w, a, "full", system.HA)
		if err != nil {
			return nil, err
		}
		ros, err := r.Sim(w, a, "full", system.Rosemary)
		if err != nil {
			return nil, err
		}
		cpuLat := math.NaN()
		cpu, err := r.Sim(w, a, "full", system.CPU)
		if err == nil {
			cpuLat = cpu.LatencyS
		} else {
			t.Notes = append(t.Notes, fmt.Sprintf("%s: CPU run not available (%v)", w.Name, err))
		}
		p := paper9(w.Name)
		quotes = append(quotes, p.Quote)
		spC, spH := cpuLat/ros.LatencyS, ha.LatencyS/ros.LatencyS
		why := ""
		if differs(spH, p.Value) {
			why = why9(w, ha, ros)
		}
		if err := t.Add(w.Name, perSeq(w, cpuLat), perSeq(w, ha.LatencyS), perSeq(w, ros.LatencyS), spC, spH, p.Value, ratio(spH, p.Value), why); err != nil {
			return nil, err
		}
		cats = append(cats, w.Name)
		sc = append(sc, spC)
		sh = append(sh, spH)
	}
	gmC, gmH := report.GeoMean(finite(sc)), report.GeoMean(sh)
	gs := []GeoMean{
		gm("speedup vs HA", "9", gmH, Paper{3.7, q9gm}, "the per-workload differences above (bottlenecks named per row) compound"),
		gm("speedup vs CPU", "9", gmC, Paper{185.7, q9cpu}, whyCPU),
	}
	if err := t.Add("geomean", math.NaN(), math.NaN(), math.NaN(), gmC, gmH, 3.7, ratio(gmH, 3.7), gs[0].Why); err != nil {
		return nil, err
	}
	addGeoMeans(t, gs)
	quoteNote(t, append(quotes, q9gm, q9cpu, q9hevec)...)
	ch := report.Chart{Title: "Figure 9 (simulated): speedup of Rosemary", YLabel: "speedup (x)", LogY: true,
		Categories: append(cats, "geomean"),
		Series:     []Series{{Name: "vs CPU", Y: append(sc, gmC)}, {Name: "vs HA", Y: append(sh, gmH)}}}
	return &Result{ID: "9", Table: t, Chart: ch, GeoMeans: gs}, nil
}

// Series is report.Series (shorthand).
type Series = report.Series

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func finite(v []float64) []float64 {
	var o []float64
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) && x > 0 {
			o = append(o, x)
		}
	}
	return o
}

// --------------------------------------------------------------- Figure 10

const q10 = "Across all workloads, Rosemary reduces host–SSD data movement by a geometric mean of 2207.7×."

// Fig10 is the PCIe traffic of HA and Rosemary.
func Fig10(r *Runner) (*Result, error) {
	a, err := base()
	if err != nil {
		return nil, err
	}
	t := newTable("Figure 10: PCIe traffic, HA vs Rosemary", "workload", "ha_pcie_bytes", "rosemary_pcie_bytes", "reduction", "paper", "ratio", "why")
	t.Notes = append(t.Notes, "Bytes are per program run (bert/llama: per sequence = per batch / 128); the reduction is a ratio and does not depend on it.")
	r.expect(2 * len(r.workloads))
	var cats []string
	var hb, rb, red []float64
	for _, w := range r.workloads {
		ha, err := r.Sim(w, a, "full", system.HA)
		if err != nil {
			return nil, err
		}
		ros, err := r.Sim(w, a, "full", system.Rosemary)
		if err != nil {
			return nil, err
		}
		x := float64(ha.PCIeBytes) / math.Max(1, float64(ros.PCIeBytes))
		if err := t.Add(w.Name, perSeq(w, float64(ha.PCIeBytes)), perSeq(w, float64(ros.PCIeBytes)), x, math.NaN(), math.NaN(), ""); err != nil {
			return nil, err
		}
		cats = append(cats, w.Name)
		hb = append(hb, perSeq(w, float64(ha.PCIeBytes)))
		rb = append(rb, math.Max(1, perSeq(w, float64(ros.PCIeBytes))))
		red = append(red, x)
	}
	g := report.GeoMean(red)
	gs := []GeoMean{gm("PCIe traffic reduction", "10", g, Paper{2207.7, q10},
		"our reduction per workload is HA's bytes (every stored byte crosses the link) over the bytes our TDAP cut sends; where the plan keeps work on the host (e.g. vecsearch VQ1) or sends large intermediates across (ResNet, transformers), the reduction is small and pulls the mean down")}
	if err := t.Add("geomean", math.NaN(), math.NaN(), g, 2207.7, ratio(g, 2207.7), gs[0].Why); err != nil {
		return nil, err
	}
	addGeoMeans(t, gs)
	quoteNote(t, q10)
	ch := report.Chart{Title: "Figure 10 (simulated): PCIe bytes", YLabel: "bytes", LogY: true, Categories: cats,
		Series: []Series{{Name: "HA", Y: hb}, {Name: "Rosemary", Y: rb}}}
	return &Result{ID: "10", Table: t, Chart: ch, GeoMeans: gs}, nil
}

// --------------------------------------------------------------- Figure 11

const (
	q11gm    = "Overall, across all dataset and batch size combinations, INSPIRE achieves a GM speedup of 20.6× over the CPU baseline, whereas Rosemary achieves a 2.7× higher GM speedup than INSPIRE."
	q11batch = "The speedup grows from 2.4× at batch size 8 to 3.1× at batch size 32."
)

// Batches are Figure 11's query batch sizes.
var Batches = []int{8, 16, 32}

// Fig11 compares INSPIRE and Rosemary on batched PIR.
func Fig11(r *Runner) (*Result, error) {
	a, err := base()
	if err != nil {
		return nil, err
	}
	t := newTable("Figure 11: INSPIRE vs Rosemary on PIR", "database", "batch", "cpu_latency_s", "inspire_latency_s", "rosemary_latency_s",
		"inspire_speedup_vs_cpu", "rosemary_speedup_vs_cpu", "rosemary_vs_inspire", "paper", "ratio", "why")
	t.Notes = append(t.Notes, "A batch of B queries is one program with B query chains over one stored database (reproduce.batchedPIR, our model). "+
		"INSPIRE is modelled by assumption in sim/system/inspire.go (Rosemary's engine and flash, all in the SSD, no eDRAM, no CLCAO): its configuration was not available.")
	var dbs []string
	for _, d := range pirDatabases {
		if r.has(d.name) {
			dbs = append(dbs, d.name)
		}
	}
	r.expect(3 * len(dbs) * len(Batches))
	var insp, ros, rel []float64
	var cats []string
	relBy := map[int][]float64{}
	for _, db := range dbs {
		for _, b := range Batches {
			w, err := pirWorkload(db, b)
			if err != nil {
				return nil, err
			}
			var reps [3]system.Report
			for i, s := range []system.System{system.CPU, system.INSPIRE, system.Rosemary} {
				if reps[i], err = r.Sim(w, a, "full", s); err != nil {
					return nil, err
				}
			}
			pl, err := r.Plan(w, a, "full")
			if err != nil {
				return nil, err
			}
			hostOnly := pl.Summary().SSDNodes == 0
			si, sr := reps[0].LatencyS/reps[1].LatencyS, reps[0].LatencyS/reps[2].LatencyS
			x := sr / si
			p := none()
			switch b {
			case 8:
				p = Paper{2.4, q11batch}
			case 32:
				p = Paper{3.1, q11batch}
			}
			why := ""
			if differs(x, p.Value) {
				ni, _ := bottleneck(reps[1])
				nr, _ := bottleneck(reps[2])
				same := "they are bound by different resources"
				if ni == nr {
					same = fmt.Sprintf("both run the same compact scan on the same SSD, so both are bound by its %s", nr)
				}
				why = fmt.Sprintf("simulated bottlenecks: INSPIRE %s, Rosemary %s; %s; our INSPIRE is an assumption (Rosemary's engine and flash, everything in the SSD, no eDRAM or CLCAO beyond a fused multiply-accumulate), not INSPIRE's published engine, whose per-engine buffer limits (the paper's reason INSPIRE degrades with batch) are not modelled", bn(reps[1]), bn(reps[2]), same)
				if hostOnly {
					why += fmt.Sprintf("; our compiler places this batched program on the host (its estimate %.4g s, simulated %.4g s)", pl.EstLatency, reps[2].LatencyS)
				}
			}
			if err := t.Add(db, b, reps[0].LatencyS, reps[1].LatencyS, reps[2].LatencyS, si, sr, x, p.Value, ratio(x, p.Value), why); err != nil {
				return nil, err
			}
			insp, ros, rel = append(insp, si), append(ros, sr), append(rel, x)
			relBy[b] = append(relBy[b], x)
			cats = append(cats, fmt.Sprintf("%s/%d", strings.TrimPrefix(db, "pir-"), b))
		}
	}
	whyI := "our CPU baseline (32 cores, perfect scaling of this machine's calibration) and our assumed INSPIRE differ from the paper's CPU and INSPIRE's published design"
	gs := []GeoMean{
		gm("INSPIRE speedup vs CPU", "11", report.GeoMean(insp), Paper{20.6, q11gm}, whyI),
		gm("Rosemary vs INSPIRE", "11", report.GeoMean(rel), Paper{2.7, q11gm}, whyI),
	}
	for _, b := range Batches {
		if len(relBy[b]) > 0 {
			t.Notes = append(t.Notes, fmt.Sprintf("Batch %d: Rosemary vs INSPIRE geometric mean over databases %.3g (simulated).", b, report.GeoMean(relBy[b])))
		}
	}
	addGeoMeans(t, gs)
	quoteNote(t, q11gm, q11batch)
	ch := report.Chart{Title: "Figure 11 (simulated): speedup over CPU on PIR", YLabel: "speedup (x)", LogY: true, Categories: cats,
		Series: []Series{{Name: "INSPIRE", Y: insp}, {Name: "Rosemary", Y: ros}}}
	return &Result{ID: "11", Table: t, Chart: ch, GeoMeans: gs}, nil
}

// --------------------------------------------------------------- Figure 12

const (
	q12gm  = "Overall, enabling TDAP alone improves performance by a geometric mean of 1.37× over Bare, and the full TDAP+CLCAO configuration improves performance by 1.75× on average, corresponding to an additional 1.28× gain over TDAP alone."
	q12vq  = "For example, TDAP provides 1.62× and 1.21× speedup on VQ_S and VQ_L, and 1.81× and 1.85× on BERT and LLAMA3-8B, respectively."
	q12ew  = "The additional benefit is especially large for RESNET110-EW, where CLCAO increases performance from no gain under TDAP alone to 1.84×."
	q12llm = "In contrast, for LLM workloads, the full stack achieves 2.30× speedup on BERT and 2.35× on LLAMA3-8B."
)

func paper12(name string) (tdap, full Paper) {
	tdap, full = none(), none()
	switch {
	case strings.HasPrefix(name, "vecsearch") && strings.HasSuffix(name, "-s"):
		tdap = Paper{1.62, q12vq}
	case strings.HasPrefix(name, "vecsearch") && strings.HasSuffix(name, "-l"):
		tdap = Paper{1.21, q12vq}
	case name == "bert":
		tdap, full = Paper{1.81, q12vq}, Paper{2.30, q12llm}
	case name == "llama":
		tdap, full = Paper{1.85, q12vq}, Paper{2.35, q12llm}
	case name == "resnet-ew":
		tdap, full = Paper{1.0, q12ew}, Paper{1.84, q12ew}
	}
	return
}

// Fig12 is the compiler ablation: Bare, TDAP and TDAP+CLCAO on Rosemary.
func Fig12(r *Runner) (*Result, error) {
	a, err := base()
	if err != nil {
		return nil, err
	}
	t := newTable("Figure 12: ablation, speedup over Bare", "workload", "bare_latency_s", "tdap_latency_s", "full_latency_s",
		"tdap_gain", "full_gain", "paper_tdap", "paper_full", "ratio_tdap", "ratio_full", "why")
	r.expect(3 * len(r.workloads))
	var cats, quotes []string
	var gt, gf []float64
	for _, w := range r.workloads {
		var reps [3]system.Report
		for i, o := range []string{"bare", "tdap", "full"} {
			if reps[i], err = r.Sim(w, a, o, system.Rosemary); err != nil {
				return nil, err
			}
		}
		xt, xf := reps[0].LatencyS/reps[1].LatencyS, reps[0].LatencyS/reps[2].LatencyS
		pt, pf := paper12(w.Name)
		quotes = append(quotes, pt.Quote, pf.Quote)
		why := ""
		if differs(xt, pt.Value) || differs(xf, pf.Value) {
			why = fmt.Sprintf("simulated bottlenecks: Bare %s, TDAP %s, full %s; our Bare follows our workloads' own segment hints (ir.Node.Segment: non-linear segments on the host, linear on the SSD), not the paper authors' hints, and CLCAO's gain here includes streaming running sums through SRAM, which Bare and TDAP lack", bn(reps[0]), bn(reps[1]), bn(reps[2]))
		}
		if err := t.Add(w.Name, perSeq(w, reps[0].LatencyS), perSeq(w, reps[1].LatencyS), perSeq(w, reps[2].LatencyS), xt, xf,
			pt.Value, pf.Value, ratio(xt, pt.Value), ratio(xf, pf.Value), why); err != nil {
			return nil, err
		}
		cats = append(cats, w.Name)
		gt, gf = append(gt, xt), append(gf, xf)
	}
	mt, mf := report.GeoMean(gt), report.GeoMean(gf)
	whyG := "the per-workload gains above; where Bare already matches TDAP's placement (flash scans) the TDAP gain is ~1, and CLCAO's streaming of running sums (no spills of the scans' products to LPDDR) gives the large full gains on the scans"
	gs := []GeoMean{
		gm("TDAP over Bare", "12", mt, Paper{1.37, q12gm}, whyG),
		gm("TDAP+CLCAO over Bare", "12", mf, Paper{1.75, q12gm}, whyG),
		gm("TDAP+CLCAO over TDAP", "12", mf/mt, Paper{1.28, q12gm}, whyG),
	}
	if err := t.Add("geomean", math.NaN(), math.NaN(), math.NaN(), mt, mf, 1.37, 1.75, ratio(mt, 1.37), ratio(mf, 1.75), firstNonEmpty(gs[0].Why, gs[1].Why)); err != nil {
		return nil, err
	}
	addGeoMeans(t, gs)
	quoteNote(t, append([]string{q12gm}, quotes...)...)
	ones := make([]float64, len(cats)+1)
	for i := range ones {
		ones[i] = 1
	}
	ch := report.Chart{Title: "Figure 12 (simulated): speedup over Bare", YLabel: "speedup (x)", Categories: append(cats, "geomean"),
		Series: []Series{{Name: "Bare", Y: ones}, {Name: "TDAP", Y: append(gt, mt)}, {Name: "TDAP+CLCAO", Y: append(gf, mf)}}}
	return &Result{ID: "12", Table: t, Chart: ch, GeoMeans: gs}, nil
}

// --------------------------------------------------------------- Figure 13

const (
	q13pir  = "For compute-light workloads such as PIR and HEVEC, NAND is the primary bottleneck, reaching 99.2% and 99.8% utilization, while FHE-engine utilization remains low at 14.8% and 7.6%, reflecting their data-dominated behavior."
	q13vq   = "For DB workloads, VQ1 and VQ2 place the highest pressure on LPDDR DRAM, both reaching 98.2% utilization, with host utilization also high at 60.8% and 90.2%."
	q13res  = "Unencrypted RESNET110 achieves the highest FHE-engine utilization at 77.3%, while encrypted RESNET110 reaches 59.9%."
	q13note = "BERT-BASE and LLAMA3-8B still show high NAND and DRAM utilization but moderate engine utilization, indicating that weight and key movement remain a major bottleneck."
)

// Resources are Figure 13's utilization columns.
var Resources = []string{"host", "nand", "dram", "engine"}

func paper13(name, res string) Paper {
	v := map[string]float64{}
	q := ""
	switch {
	case isPIR(name):
		v, q = map[string]float64{"nand": 99.2, "engine": 14.8}, q13pir
	case name == "hevec":
		v, q = map[string]float64{"nand": 99.8, "engine": 7.6}, q13pir
	case strings.HasPrefix(name, "vecsearch-vq1"):
		v, q = map[string]float64{"dram": 98.2, "host": 60.8}, q13vq
	case strings.HasPrefix(name, "vecsearch-vq2"):
		v, q = map[string]float64{"dram": 98.2, "host": 90.2}, q13vq
	case name == "resnet-uw":
		v, q = map[string]float64{"engine": 77.3}, q13res
	case name == "resnet-ew":
		v, q = map[string]float64{"engine": 59.9}, q13res
	}
	if x, ok := v[res]; ok {
		return Paper{x, q}
	}
	return none()
}

func util(rep system.Report, res string) float64 {
	u := rep.Utilization
	switch res {
	case "host":
		return 100 * u.Host
	case "nand":
		return 100 * u.NAND
	case "dram":
		return 100 * u.DRAM
	case "engine":
		return 100 * u.Engine
	}
	return math.NaN()
}

// Fig13 is the utilization of host, NAND, LPDDR and engine under Rosemary.
func Fig13(r *Runner) (*Result, error) {
	a, err := base()
	if err != nil {
		return nil, err
	}
	t := newTable("Figure 13: utilization under Rosemary (%)", "workload", "resource", "utilization_pct", "paper", "ratio", "why")
	r.expect(len(r.workloads))
	var cats, quotes []string
	ys := make([][]float64, len(Resources))
	for _, w := range r.workloads {
		rep, err := r.Sim(w, a, "full", system.Rosemary)
		if err != nil {
			return nil, err
		}
		for i, res := range Resources {
			u := util(rep, res)
			p := paper13(w.Name, res)
			quotes = append(quotes, p.Quote)
			why := ""
			if u < 0 || u > 100.5 {
				// Report the defect rather than a meaningless figure.
				why = fmt.Sprintf("the simulator returned %.4g%%, outside [0, 100]: a sim/system defect (busy time summed over channels in picoseconds appears to overflow int64 on runs this long); not plotted", u)
				u = math.NaN()
				t.Notes = append(t.Notes, fmt.Sprintf("%s %s: %s.", w.Name, res, why))
			} else if differs(u, p.Value) {
				why = fmt.Sprintf("our run's bottleneck is %s", bn(rep))
				if rep.Utilization.Host > 0.99 || rep.Utilization.Engine == 0 {
					why += " (the plan keeps the work on the host)"
				}
				if res == "engine" {
					why += "; engine time comes from arch.Datapath.Cycles (our analytic cost of the AU array), not the paper's RTL"
				}
			}
			if err := t.Add(w.Name, res, u, p.Value, ratio(u, p.Value), why); err != nil {
				return nil, err
			}
			ys[i] = append(ys[i], u)
		}
		cats = append(cats, w.Name)
	}
	quoteNote(t, append(quotes, q13note)...)
	var ss []Series
	for i, res := range Resources {
		ss = append(ss, Series{Name: res, Y: ys[i]})
	}
	ch := report.Chart{Title: "Figure 13 (simulated): utilization under Rosemary", YLabel: "busy (%)", Categories: cats, Series: ss}
	return &Result{ID: "13", Table: t, Chart: ch}, nil
}

// --------------------------------------------------------------- Figure 14

const (
	q14     = "Compared to the design without eDRAM, 32MB, 64MB, 96MB, and 128MB scratchpads improve performance by 1.53×, 1.66×, 1.72×, and 1.75× on average, respectively."
	q14bert = "For example, BERT already achieves 1.86× speedup at 32MB and improves only marginally to 1.89× at 128MB."
)

// EDRAMSizesMB are Figure 14's scratchpad sizes.
var EDRAMSizesMB = []int{0, 32, 64, 96, 128}

func paper14(name string, mb int) Paper {
	if name == "geomean" {
		switch mb {
		case 32:
			return Paper{1.53, q14}
		case 64:
			return Paper{1.66, q14}
		case 96:
			return Paper{1.72, q14}
		case 128:
			return Paper{1.75, q14}
		}
	}
	if name == "bert" {
		switch mb {
		case 32:
			return Paper{1.86, q14bert}
		case 128:
			return Paper{1.89, q14bert}
		}
	}
	return none()
}

// sweep runs every selected workload on each architecture of a sweep under
// Rosemary (full) and returns latencies [workload][point].
func (r *Runner) sweep(archs []*arch.Arch) ([][]system.Report, error) {
	r.expect(len(r.workloads) * len(archs))
	out := make([][]system.Report, len(r.workloads))
	// Architecture-major order keeps one architecture's plans together.
	for j, a := range archs {
		for i, w := range r.workloads {
			rep, err := r.Sim(w, a, "full", system.Rosemary)
			if err != nil {
				return nil, err
			}
			if j == 0 {
				out[i] = make([]system.Report, len(archs))
			}
			out[i][j] = rep
		}
	}
	return out, nil
}

// Fig14 sweeps the eDRAM scratchpad from 0 to 128 MB.
func Fig14(r *Runner) (*Result, error) {
	a, err := base()
	if err != nil {
		return nil, err
	}
	var archs []*arch.Arch
	var xs []float64
	for _, mb := range EDRAMSizesMB {
		b, err := arch.WithEDRAM(a, int64(mb)<<20)
		if err != nil {
			return nil, fmt.Errorf("reproduce: eDRAM %d MB: %w", mb, err)
		}
		archs = append(archs, b)
		xs = append(xs, float64(mb))
	}
	reps, err := r.sweep(archs)
	if err != nil {
		return nil, err
	}
	t := newTable("Figure 14: eDRAM scratchpad size, speedup over no eDRAM", "workload", "edram_mb", "latency_s", "speedup_vs_no_edram", "paper", "ratio", "why")
	var ss []Series
	per := make([][]float64, len(EDRAMSizesMB))
	for i, w := range r.workloads {
		var ys []float64
		for j, mb := range EDRAMSizesMB {
			x := reps[i][0].LatencyS / reps[i][j].LatencyS
			p := paper14(w.Name, mb)
			why := ""
			if differs(x, p.Value) {
				why = fmt.Sprintf("our run is bound by %s; in our model the scratchpad only holds CLCAO's hot keys and non-streamed intermediates", bn(reps[i][j]))
			}
			if err := t.Add(w.Name, mb, perSeq(w, reps[i][j].LatencyS), x, p.Value, ratio(x, p.Value), why); err != nil {
				return nil, err
			}
			ys = append(ys, x)
			per[j] = append(per[j], x)
		}
		ss = append(ss, Series{Name: w.Name, X: xs, Y: ys})
	}
	var gys []float64
	var gs []GeoMean
	for j, mb := range EDRAMSizesMB {
		g := report.GeoMean(per[j])
		gys = append(gys, g)
		p := paper14("geomean", mb)
		why := ""
		if differs(g, p.Value) {
			why = "most of our workloads are bound by flash, PCIe or host work that the scratchpad does not touch (CLCAO streams intermediates through SRAM), so eDRAM matters less than in the paper"
		}
		if err := t.Add("geomean", mb, math.NaN(), g, p.Value, ratio(g, p.Value), why); err != nil {
			return nil, err
		}
		if mb > 0 {
			gs = append(gs, gm(fmt.Sprintf("speedup at %d MB eDRAM vs none", mb), "14", g, p, why))
		}
	}
	ss = append(ss, Series{Name: "geomean", X: xs, Y: gys})
	addGeoMeans(t, gs)
	quoteNote(t, q14, q14bert)
	ch := report.Chart{Title: "Figure 14 (simulated): speedup over no eDRAM", XLabel: "eDRAM (MB)", YLabel: "speedup (x)", Series: ss}
	return &Result{ID: "14", Table: t, Chart: ch, Lines: true, GeoMeans: gs}, nil
}

// --------------------------------------------------------------- Figure 15

const q15 = "With 4, 8, 16, 32, and 64 AUs, Rosemary achieves geometric-mean speedups of 2.4×, 3.5×, 4.1×, 4.3×, and 4.3×, respectively, over the HA baseline."

// AUCounts are Figure 15's engine sizes.
var AUCounts = []int{4, 8, 16, 32, 64}

var paper15 = map[int]float64{4: 2.4, 8: 3.5, 16: 4.1, 32: 4.3, 64: 4.3}

// Fig15 sweeps the engine from 4 to 64 AUs; speedups are over HA (whose
// latency does not depend on the device engine, so it is simulated once on
// the base preset).
func Fig15(r *Runner) (*Result, error) {
	a, err := base()
	if err != nil {
		return nil, err
	}
	var archs []*arch.Arch
	var xs []float64
	for _, n := range AUCounts {
		b, err := arch.WithAUs(a, n)
		if err != nil {
			return nil, fmt.Errorf("reproduce: %d AUs: %w", n, err)
		}
		archs = append(archs, b)
		xs = append(xs, float64(n))
	}
	r.expect(len(r.workloads))
	ha := make([]system.Report, len(r.workloads))
	for i, w := range r.workloads {
		if ha[i], err = r.Sim(w, a, "full", system.HA); err != nil {
			return nil, err
		}
	}
	reps, err := r.sweep(archs)
	if err != nil {
		return nil, err
	}
	t := newTable("Figure 15: engine size, speedup over HA", "workload", "aus", "latency_s", "speedup_vs_ha", "paper", "ratio", "why")
	var ss []Series
	per := make([][]float64, len(AUCounts))
	for i, w := range r.workloads {
		var ys []float64
		for j, n := range AUCounts {
			x := ha[i].LatencyS / reps[i][j].LatencyS
			if err := t.Add(w.Name, n, perSeq(w, reps[i][j].LatencyS), x, math.NaN(), math.NaN(), ""); err != nil {
				return nil, err
			}
			ys = append(ys, x)
			per[j] = append(per[j], x)
		}
		ss = append(ss, Series{Name: w.Name, X: xs, Y: ys})
	}
	var gys []float64
	var gs []GeoMean
	for j, n := range AUCounts {
		g := report.GeoMean(per[j])
		gys = append(gys, g)
		p := Paper{paper15[n], q15}
		why := ""
		if differs(g, p.Value) {
			why = "the speedup over HA at each size inherits Figure 9's per-workload differences (see there); the saturation with AUs is the trend to compare"
		}
		if err := t.Add("geomean", n, math.NaN(), g, p.Value, ratio(g, p.Value), why); err != nil {
			return nil, err
		}
		gs = append(gs, gm(fmt.Sprintf("speedup vs HA at %d AUs", n), "15", g, p, why))
	}
	ss = append(ss, Series{Name: "geomean", X: xs, Y: gys})
	addGeoMeans(t, gs)
	quoteNote(t, q15)
	ch := report.Chart{Title: "Figure 15 (simulated): speedup over HA vs engine size", XLabel: "AUs", YLabel: "speedup (x)", LogY: true, Series: ss}
	return &Result{ID: "15", Table: t, Chart: ch, Lines: true, GeoMeans: gs}, nil
}

// --------------------------------------------------------------- Figure 16

const (
	q16      = "Smaller SSDs substantially degrade performance for both engine sizes, especially for PIR, which nearly saturates NAND bandwidth."
	q16large = "The Large SSD improves … geometric-mean performance by about 38%."
)

// SSDs are Figure 16's presets; SSDAUs its engine sizes.
var (
	SSDs   = []string{"ssd-small", "ssd-medium", "ssd-large"}
	SSDAUs = []int{16, 64}
)

// Fig16 runs every workload on the small, medium and large SSDs with 16- and
// 64-AU engines; speedups are over the medium SSD with the same engine.
func Fig16(r *Runner) (*Result, error) {
	t := newTable("Figure 16: SSD size, speedup over the medium SSD", "workload", "aus", "ssd", "latency_s", "speedup_vs_medium", "paper", "ratio", "why")
	var cats []string
	var ss []Series
	var gs []GeoMean
	for _, n := range SSDAUs {
		var archs []*arch.Arch
		for _, s := range SSDs {
			a, err := arch.Preset(s)
			if err != nil {
				return nil, fmt.Errorf("reproduce: %w", err)
			}
			if a, err = arch.WithAUs(a, n); err != nil {
				return nil, fmt.Errorf("reproduce: %s with %d AUs: %w", s, n, err)
			}
			archs = append(archs, a)
		}
		reps, err := r.sweep(archs)
		if err != nil {
			return nil, err
		}
		per := make([][]float64, len(SSDs))
		for i, w := range r.workloads {
			for j, s := range SSDs {
				x := reps[i][1].LatencyS / reps[i][j].LatencyS
				if err := t.Add(w.Name, n, s, perSeq(w, reps[i][j].LatencyS), x, math.NaN(), math.NaN(), ""); err != nil {
					return nil, err
				}
				per[j] = append(per[j], x)
			}
		}
		for j, s := range SSDs {
			g := report.GeoMean(per[j])
			p := none()
			if s == "ssd-large" {
				p = Paper{1.38, q16large}
			}
			why := ""
			if differs(g, p.Value) {
				why = "in our models only flash-bound workloads (PIR, HEVEC, vecdist) gain from more channels; the others are bound by the engine, LPDDR or the host, which the Large preset changes little"
			}
			if err := t.Add("geomean", n, s, math.NaN(), g, p.Value, ratio(g, p.Value), why); err != nil {
				return nil, err
			}
			if s != "ssd-medium" {
				gs = append(gs, gm(fmt.Sprintf("speedup of %s over medium at %d AUs", s, n), "16", g, p, why))
			}
			ss = append(ss, Series{Name: fmt.Sprintf("%s %dAU", strings.TrimPrefix(s, "ssd-"), n), Y: append(append([]float64(nil), per[j]...), g)})
		}
	}
	for _, w := range r.workloads {
		cats = append(cats, w.Name)
	}
	cats = append(cats, "geomean")
	addGeoMeans(t, gs)
	quoteNote(t, q16, q16large)
	t.Notes = append(t.Notes, "The paper does not say over which SSD the Large one's 38% is measured; we compare with the medium SSD.")
	ch := report.Chart{Title: "Figure 16 (simulated): speedup over the medium SSD", YLabel: "speedup (x)", Categories: cats, Series: ss}
	return &Result{ID: "16", Table: t, Chart: ch, GeoMeans: gs}, nil
}

// --------------------------------------------------------------- Figure 17

const (
	q17e    = "As shown in Figure 17, Rosemary improves energy efficiency by up to 3.9×."
	q17edap = "Rosemary reduces EDAP ranging from 6.71× to 16.48×."
)

// Fig17 compares energy and energy-delay-area product of HA and Rosemary.
func Fig17(r *Runner) (*Result, error) {
	a, err := base()
	if err != nil {
		return nil, err
	}
	t := newTable("Figure 17: energy and EDAP, HA vs Rosemary", "workload", "ha_energy_j", "rosemary_energy_j", "energy_gain",
		"ha_edap", "rosemary_edap", "edap_gain", "paper", "ratio", "why")
	t.Notes = append(t.Notes, "Energy per run (bert/llama per sequence) from sim/system: Table V component power x active time + host accelerator power x busy time; flash, LPDDR and HBM power are not charged. "+
		"EDAP = energy (J) x latency (s) x area (mm2) of the system's parts (HA: host accelerator; Rosemary: host accelerator + device).")
	r.expect(2 * len(r.workloads))
	var cats []string
	var eg, dg, he, re []float64
	for _, w := range r.workloads {
		ha, err := r.Sim(w, a, "full", system.HA)
		if err != nil {
			return nil, err
		}
		ros, err := r.Sim(w, a, "full", system.Rosemary)
		if err != nil {
			return nil, err
		}
		hE, rE := perSeq(w, ha.EnergyJ), perSeq(w, ros.EnergyJ)
		hD := hE * perSeq(w, ha.LatencyS) * ha.AreaMM2
		rD := rE * perSeq(w, ros.LatencyS) * ros.AreaMM2
		if err := t.Add(w.Name, hE, rE, hE/rE, hD, rD, hD/rD, math.NaN(), math.NaN(), ""); err != nil {
			return nil, err
		}
		cats = append(cats, w.Name)
		eg, dg, he, re = append(eg, hE/rE), append(dg, hD/rD), append(he, hE), append(re, rE)
	}
	maxE, minD, maxD := extreme(eg, true), extreme(dg, false), extreme(dg, true)
	whyE := "our energy charges the host accelerator at its power while busy and the device's Table V rows while active; flash/LPDDR/HBM and PCIe energy are not charged, and our latencies differ (Figure 9)"
	gs := []GeoMean{
		gm("max energy-efficiency gain", "17", maxE, Paper{3.9, q17e}, whyE),
		gm("min EDAP reduction", "17", minD, Paper{6.71, q17edap}, whyE+"; Rosemary's area here includes the host accelerator, so EDAP gains below 1 are possible where the plan keeps work on the host"),
		gm("max EDAP reduction", "17", maxD, Paper{16.48, q17edap}, whyE),
	}
	for _, g := range gs {
		if err := t.Add(g.Name, math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), g.Ours, g.Paper, g.Ratio, g.Why); err != nil {
			return nil, err
		}
	}
	t.Notes = append(t.Notes, "Summary rows put our extreme value in the ours column (edap_gain) beside the paper's bound; these are extremes, not geometric means.")
	quoteNote(t, q17e, q17edap)
	ch := report.Chart{Title: "Figure 17 (simulated): gains of Rosemary over HA", YLabel: "gain (x)", LogY: true, Categories: cats,
		Series: []Series{{Name: "energy efficiency", Y: eg}, {Name: "EDAP", Y: dg}}}
	return &Result{ID: "17", Table: t, Chart: ch, GeoMeans: gs}, nil
}

func extreme(v []float64, max bool) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if max {
		return s[len(s)-1]
	}
	return s[0]
}

// ----------------------------------------------------------------- Table V

const qV = "At 7nm, Rosemary occupies 45.6 mm2 and consumes 16.7W, only 2.3% of the total area of a Samsung 990 Pro [63]."

// paperV is Table V of the paper: area (mm2) and power (W) per component.
var paperV = []struct {
	name        string
	area, power float64
}{
	{"NTTU", 6.5, 4.8}, {"MODU", 3.3, 2.7}, {"OT & KeyGen", 0.075, 0.063}, {"SRAM", 7.4, 3.3},
	{"Scratchpad", 17.4, 1.9}, {"Interconnect & Others", 10.9, 3.9}, {"Total", 45.6, 16.7},
}

// TableV sets the arch preset's components beside the paper's Table V.
func TableV(r *Runner) (*Result, error) {
	a, err := base()
	if err != nil {
		return nil, err
	}
	t := newTable("Table V: area and power of the Rosemary device", "component", "area_mm2", "power_w", "paper_area_mm2", "paper_power_w", "ratio_area", "ratio_power", "why")
	t.Notes = append(t.Notes, "Ours here is NOT simulated: it is the rosemary arch preset's Components, which take Table V as an input (see arch/presets/rosemary.json sources), so ratios of 1 are by construction, not a validation.")
	ours := map[string]arch.Component{}
	for _, c := range a.Components {
		ours[c.Name] = c
	}
	var cats []string
	var oa, pa []float64
	for _, p := range paperV {
		ar, pw := math.NaN(), math.NaN()
		if p.name == "Total" {
			ar, pw = a.AreaMM2(), a.PowerW()
		} else if c, ok := ours[p.name]; ok {
			ar, pw = c.AreaMM2, c.PowerW
		}
		why := ""
		if differs(ar, p.area) || differs(pw, p.power) {
			why = "the preset's component differs from Table V"
		}
		if err := t.Add(p.name, ar, pw, p.area, p.power, ratio(ar, p.area), ratio(pw, p.power), why); err != nil {
			return nil, err
		}
		if p.name != "Total" {
			cats = append(cats, p.name)
			oa, pa = append(oa, ar), append(pa, p.area)
		}
	}
	quoteNote(t, qV)
	gs := []GeoMean{gm("device area (mm2)", "V", a.AreaMM2(), Paper{45.6, qV}, "preset differs"), gm("device power (W)", "V", a.PowerW(), Paper{16.7, qV}, "preset differs")}
	for i := range gs {
		gs[i].OursFrom = "arch preset, not simulated"
	}
	ch := report.Chart{Title: "Table V: area per component (preset vs paper)", YLabel: "mm2", Categories: cats,
		Series: []Series{{Name: "arch preset", Y: oa}, {Name: "paper", Y: pa}}}
	return &Result{ID: "V", Table: t, Chart: ch, GeoMeans: gs}, nil
}
