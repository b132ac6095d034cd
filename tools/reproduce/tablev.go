package reproduce

import (
	"math"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/tools/report"
)

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
	t := newTable("V", "component", "area_mm2", "power_w", "paper_area_mm2", "paper_power_w", "ratio_area", "ratio_power", "why")
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
