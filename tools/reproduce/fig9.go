package reproduce

import (
	"fmt"
	"math"
	"strings"

	"github.com/rosemary-fhe/rosemary/sim/system"
	"github.com/rosemary-fhe/rosemary/tools/report"
)

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
	t := newTable("9", "workload", "cpu_latency_s", "ha_latency_s", "rosemary_latency_s",
		"speedup_vs_cpu", "speedup_vs_ha", "paper", "ratio", "why")
	t.Notes = append(t.Notes, "Latencies of bert and llama are per sequence (program latency / batch of 128); CPU = 32 cores with perfect scaling of our single-thread calibration.")
	r.expect(3 * len(r.workloads))
	var jobs []simJob
	for _, w := range r.workloads {
		for _, s := range []system.System{system.HA, system.Rosemary, system.CPU} {
			jobs = append(jobs, simJob{w, a, "full", s})
		}
	}
	r.prefetch(jobs)
	var cats []string
	var quotes []string
	var sc, sh []float64
	for _, w := range r.workloads {
		ha, ros, err := r.haAndRosemary(w, a)
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
