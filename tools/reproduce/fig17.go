package reproduce

import (
	"math"

	"github.com/rosemary-fhe/rosemary/tools/report"
)

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
	t := newTable("17", "workload", "ha_energy_j", "rosemary_energy_j", "energy_gain",
		"ha_edap", "rosemary_edap", "edap_gain", "paper", "ratio", "why")
	t.Notes = append(t.Notes, "Energy per run (bert/llama per sequence) from sim/system: Table V component power x active time + host accelerator power x busy time; flash, LPDDR and HBM power are not charged. "+
		"EDAP = energy (J) x latency (s) x area (mm2) of the system's parts (HA: host accelerator; Rosemary: host accelerator + device).")
	r.expect(2 * len(r.workloads))
	var cats []string
	var eg, dg, he, re []float64
	for _, w := range r.workloads {
		ha, ros, err := r.haAndRosemary(w, a)
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
