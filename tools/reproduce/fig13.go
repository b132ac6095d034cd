package reproduce

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rosemary-fhe/rosemary/sim/system"
	"github.com/rosemary-fhe/rosemary/tools/report"
)

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
	t := newTable("13", "workload", "resource", "utilization_pct", "paper", "ratio", "why")
	// The LWE PIR row joins the paper's PIR rows.
	withLWE := slices.ContainsFunc(r.workloads, func(w Workload) bool { return isPIR(w.Name) })
	r.expect(len(r.workloads))
	if withLWE {
		r.expect(1)
	}
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
	if withLWE {
		rep, err := r.Sim(lwePIR, a, "full", system.Rosemary)
		if err != nil {
			return nil, err
		}
		why := fmt.Sprintf("ours: the hint-free LWE PIR (fhe/lwepir, the device's default scheme) over bench pir's 4 GiB database, simulated; the paper has no figure for it. Its bottleneck is %s; flash reads %d B, the stored matrix and hint diagonals", bn(rep), rep.NANDBytes)
		for i, res := range Resources {
			u := util(rep, res)
			if err := t.Add(lwePIR.Name, res, u, math.NaN(), math.NaN(), why); err != nil {
				return nil, err
			}
			ys[i] = append(ys[i], u)
		}
		cats = append(cats, lwePIR.Name+" (ours)")
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
