package reproduce

import (
	"fmt"
	"math"

	"github.com/rosemary-fhe/rosemary/arch"
	"github.com/rosemary-fhe/rosemary/report"
)

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
	t := newTable("14", "workload", "edram_mb", "latency_s", "speedup_vs_no_edram", "paper", "ratio", "why")
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
