package reproduce

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/sim/system"
	"github.com/rosemary-fhe/rosemary/tools/report"
)

const q15 = "With 4, 8, 16, 32, and 64 AUs, Rosemary achieves geometric-mean speedups of 2.4×, 3.5×, 4.1×, 4.3×, and 4.3×, respectively, over the HA baseline."

// AUCounts are Figure 15's engine sizes.
var AUCounts = []int{4, 8, 16, 32, 64}

var paper15 = map[int]float64{4: 2.4, 8: 3.5, 16: 4.1, 32: 4.3, 64: 4.3}

// fig15Sweep varies the engine's AUs; the paper quotes only the geometric
// means.
var fig15Sweep = speedupSweep{
	id:     "15",
	points: AUCounts,
	vary:   arch.WithAUs,
	what:   "%d AUs",
	cell: func(Workload, int, system.Report, float64) (Paper, string) {
		return none(), ""
	},
	geoPaper: func(n int) Paper { return Paper{paper15[n], q15} },
	geoWhy:   "the speedup over HA at each size inherits Figure 9's per-workload differences (see there); the saturation with AUs is the trend to compare",
	geoName:  func(n int) string { return fmt.Sprintf("speedup vs HA at %d AUs", n) },
}

// Fig15 sweeps the engine from 4 to 64 AUs; speedups are over HA (whose
// latency does not depend on the device engine, so it is simulated once on
// the base preset).
func Fig15(r *Runner) (*Result, error) {
	a, xs, reps, err := fig15Sweep.run(r)
	if err != nil {
		return nil, err
	}
	r.expect(len(r.workloads))
	var jobs []simJob
	for _, w := range r.workloads {
		jobs = append(jobs, simJob{w, a, "full", system.HA})
	}
	r.prefetch(jobs)
	ha := make([]system.Report, len(r.workloads))
	for i, w := range r.workloads {
		if ha[i], err = r.Sim(w, a, "full", system.HA); err != nil {
			return nil, err
		}
	}
	t := newTable("15", "workload", "aus", "latency_s", "speedup_vs_ha", "paper", "ratio", "why")
	ss, gs, err := fig15Sweep.rows(t, r.workloads, xs, reps, func(i int) float64 { return ha[i].LatencyS })
	if err != nil {
		return nil, err
	}
	addGeoMeans(t, gs)
	quoteNote(t, q15)
	ch := report.Chart{Title: "Figure 15 (simulated): speedup over HA vs engine size", XLabel: "AUs", YLabel: "speedup (x)", LogY: true, Series: ss}
	return &Result{ID: "15", Table: t, Chart: ch, Lines: true, GeoMeans: gs}, nil
}

// --------------------------------------------------------------- Figure 16
