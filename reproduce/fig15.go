package reproduce

import (
	"fmt"
	"math"

	"github.com/rosemary-fhe/rosemary/arch"
	"github.com/rosemary-fhe/rosemary/report"
	"github.com/rosemary-fhe/rosemary/sim/system"
)

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
	t := newTable("15", "workload", "aus", "latency_s", "speedup_vs_ha", "paper", "ratio", "why")
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
