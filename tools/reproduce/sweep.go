package reproduce

import (
	"fmt"
	"math"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/sim/system"
	"github.com/rosemary-fhe/rosemary/tools/report"
)

// speedupSweep is one of the line figures (14, 15) that vary one knob of the
// base architecture and plot each workload's speedup against it, with a
// geometric mean per point.
type speedupSweep struct {
	id     string
	points []int
	// vary returns the base architecture at one point; what names that point
	// in an error ("%d AUs").
	vary func(a *arch.Arch, point int) (*arch.Arch, error)
	what string
	// cell returns the paper's value for workload w at a point, where our
	// run rep has speedup x, and why ours may differ from it.
	cell func(w Workload, point int, rep system.Report, x float64) (Paper, string)
	// geoPaper is the paper's geometric mean at a point, geoWhy why ours may
	// differ from it, and geoName the summary line of a point ("" for none).
	geoPaper func(point int) Paper
	geoWhy   string
	geoName  func(point int) string
}

// run simulates every workload on Rosemary at every point of the sweep and
// returns the base architecture, the points as the chart's x values and the
// reports [workload][point].
func (s speedupSweep) run(r *Runner) (*arch.Arch, []float64, [][]system.Report, error) {
	a, err := base()
	if err != nil {
		return nil, nil, nil, err
	}
	archs, xs, err := s.archs(a)
	if err != nil {
		return nil, nil, nil, err
	}
	reps, err := r.sweep(archs)
	return a, xs, reps, err
}

// archs returns the architecture at every point of the sweep and the points
// as the chart's x values.
func (s speedupSweep) archs(a *arch.Arch) ([]*arch.Arch, []float64, error) {
	var archs []*arch.Arch
	var xs []float64
	for _, p := range s.points {
		b, err := s.vary(a, p)
		if err != nil {
			return nil, nil, fmt.Errorf("reproduce: "+s.what+": %w", p, err)
		}
		archs = append(archs, b)
		xs = append(xs, float64(p))
	}
	return archs, xs, nil
}

// rows adds a row per workload and point, the speedup of the point over
// baseline(i), then a geometric-mean row per point, and returns the chart's
// series (the workloads, then the geometric mean) and the summary lines.
func (s speedupSweep) rows(t *report.Table, ws []Workload, xs []float64, reps [][]system.Report, baseline func(i int) float64) ([]Series, []GeoMean, error) {
	var ss []Series
	per := make([][]float64, len(s.points))
	for i, w := range ws {
		var ys []float64
		for j, point := range s.points {
			x := baseline(i) / reps[i][j].LatencyS
			p, why := s.cell(w, point, reps[i][j], x)
			if err := t.Add(w.Name, point, perSeq(w, reps[i][j].LatencyS), x, p.Value, ratio(x, p.Value), why); err != nil {
				return nil, nil, err
			}
			ys = append(ys, x)
			per[j] = append(per[j], x)
		}
		ss = append(ss, Series{Name: w.Name, X: xs, Y: ys})
	}
	var gys []float64
	var gs []GeoMean
	for j, point := range s.points {
		g := report.GeoMean(per[j])
		gys = append(gys, g)
		p := s.geoPaper(point)
		why := ""
		if differs(g, p.Value) {
			why = s.geoWhy
		}
		if err := t.Add("geomean", point, math.NaN(), g, p.Value, ratio(g, p.Value), why); err != nil {
			return nil, nil, err
		}
		if name := s.geoName(point); name != "" {
			gs = append(gs, gm(name, s.id, g, p, why))
		}
	}
	ss = append(ss, Series{Name: "geomean", X: xs, Y: gys})
	return ss, gs, nil
}
