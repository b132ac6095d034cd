package reproduce

import (
	"math"

	"github.com/rosemary-fhe/rosemary/tools/report"
)

const q10 = "Across all workloads, Rosemary reduces host–SSD data movement by a geometric mean of 2207.7×."

// Fig10 is the PCIe traffic of HA and Rosemary.
func Fig10(r *Runner) (*Result, error) {
	a, err := base()
	if err != nil {
		return nil, err
	}
	t := newTable("10", "workload", "ha_pcie_bytes", "rosemary_pcie_bytes", "reduction", "paper", "ratio", "why")
	t.Notes = append(t.Notes, "Bytes are per program run (bert/llama: per sequence = per batch / 128); the reduction is a ratio and does not depend on it.")
	r.expect(2 * len(r.workloads))
	var cats []string
	var hb, rb, red []float64
	for _, w := range r.workloads {
		ha, ros, err := r.haAndRosemary(w, a)
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
