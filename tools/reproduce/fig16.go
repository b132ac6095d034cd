package reproduce

import (
	"fmt"
	"math"
	"strings"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/tools/report"
)

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
	t := newTable("16", "workload", "aus", "ssd", "latency_s", "speedup_vs_medium", "paper", "ratio", "why")
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
