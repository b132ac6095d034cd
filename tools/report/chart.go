package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Series is one named set of values, one per category (bar charts) or per
// X value (line charts).
type Series struct {
	Name string
	X    []float64 // line charts only
	Y    []float64
}

// Chart describes a plot.
type Chart struct {
	Title, XLabel, YLabel string
	LogY                  bool
	Categories            []string // bar charts: one label per group
	Series                []Series
}

// drawable replaces values a chart cannot draw — NaN, ±Inf, and
// non-positive values on a log axis — by the smallest drawable value.
func (c Chart) drawable() Chart {
	floor := 0.0
	if c.LogY {
		floor = math.Inf(1)
		for _, s := range c.Series {
			for _, y := range s.Y {
				if y > 0 && !math.IsInf(y, 0) && y < floor {
					floor = y
				}
			}
		}
		if math.IsInf(floor, 1) {
			floor = 1
		}
	}
	out := c
	out.Series = make([]Series, len(c.Series))
	for i, s := range c.Series {
		ys := make([]float64, len(s.Y))
		for j, y := range s.Y {
			if math.IsNaN(y) || math.IsInf(y, 0) || (c.LogY && y <= 0) {
				y = floor
			}
			ys[j] = y
		}
		out.Series[i] = Series{Name: s.Name, X: s.X, Y: ys}
	}
	return out
}

// Bars saves a grouped bar chart; the file type follows the extension
// (.svg or .png). Undrawable values are replaced (see drawable). Bars start
// at zero, which a log axis cannot show, so LogY bars plot log10 of the
// values on a linear axis labelled as such.
func (c Chart) Bars(path string) error {
	p, groups, err := c.barsPlot()
	if err != nil {
		return err
	}
	return save(p, path, groups)
}

// barsPlot is the plot Bars draws and its number of groups.
func (c Chart) barsPlot() (*plot.Plot, int, error) {
	c = c.drawable()
	if c.LogY {
		c.LogY = false
		c.YLabel = "log10 " + c.YLabel
		for i, s := range c.Series {
			for j, y := range s.Y {
				c.Series[i].Y[j] = math.Log10(y)
			}
		}
	}
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = c.Title, c.XLabel, c.YLabel
	n := len(c.Series)
	if n == 0 {
		return nil, 0, fmt.Errorf("report: chart %q has no series", c.Title)
	}
	w := vg.Points(60 / float64(n))
	for i, s := range c.Series {
		if len(s.Y) != len(c.Categories) {
			return nil, 0, fmt.Errorf("report: chart %q: series %q has %d values for %d categories", c.Title, s.Name, len(s.Y), len(c.Categories))
		}
		vals := make(plotter.Values, len(s.Y))
		copy(vals, s.Y)
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return nil, 0, err
		}
		b.LineStyle.Width = vg.Length(0)
		b.Color = plotutil.Color(i)
		b.Offset = vg.Length(float64(i)-float64(n-1)/2) * w
		p.Add(b)
		p.Legend.Add(s.Name, b)
	}
	p.Legend.Top = true
	p.NominalX(c.Categories...)
	return p, len(c.Categories), nil
}

// Lines saves a line chart with markers (undrawable values replaced, see
// drawable).
func (c Chart) Lines(path string) error {
	p, err := c.linesPlot()
	if err != nil {
		return err
	}
	return save(p, path, lineGroups)
}

// lineGroups sizes line charts as bar charts of this many groups.
const lineGroups = 6

// linesPlot is the plot Lines draws.
func (c Chart) linesPlot() (*plot.Plot, error) {
	c = c.drawable()
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = c.Title, c.XLabel, c.YLabel
	if c.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{}
	}
	for i, s := range c.Series {
		if len(s.X) != len(s.Y) {
			return nil, fmt.Errorf("report: chart %q: series %q has %d x and %d y values", c.Title, s.Name, len(s.X), len(s.Y))
		}
		pts := make(plotter.XYs, len(s.X))
		for j := range s.X {
			pts[j].X, pts[j].Y = s.X[j], s.Y[j]
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		l.Color = plotutil.Color(i)
		sc.Color = plotutil.Color(i)
		sc.Shape = plotutil.Shape(i)
		p.Add(l, sc)
		p.Legend.Add(s.Name, l, sc)
	}
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p, nil
}

func save(p *plot.Plot, path string, groups int) error {
	switch filepath.Ext(path) {
	case ".svg", ".png":
	default:
		return fmt.Errorf("report: %s: charts are saved as .svg or .png", path)
	}
	p.BackgroundColor = color.White
	if err := p.Save(chartWidth(groups), chartHeight, path); err != nil {
		return fmt.Errorf("report: save %s: %w", path, err)
	}
	return nil
}

const chartHeight = 4 * vg.Inch

func chartWidth(groups int) vg.Length { return vg.Length(max(6, groups)) * vg.Inch * 0.8 }

// SVG renders the chart as Bars or, with lines, as Lines would save it to
// an .svg file, and returns the document.
func (c Chart) SVG(lines bool) ([]byte, error) {
	var p *plot.Plot
	groups := lineGroups
	var err error
	if lines {
		p, err = c.linesPlot()
	} else {
		p, groups, err = c.barsPlot()
	}
	if err != nil {
		return nil, err
	}
	p.BackgroundColor = color.White
	w, err := p.WriterTo(chartWidth(groups), chartHeight, "svg")
	if err != nil {
		return nil, fmt.Errorf("report: chart %q: %w", c.Title, err)
	}
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("report: chart %q: %w", c.Title, err)
	}
	return b.Bytes(), nil
}
