package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
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
	f, err := c.barsFigure()
	if err != nil {
		return err
	}
	return f.save(path)
}

// figure is a plot with its legend kept apart: the legend is drawn in a
// strip to the right of the plot area, where it hides no bar or line (drawn
// inside, as gonum places it, it covered the tallest bars and a sweep's
// lines), and the plot area is wide enough for its category labels.
type figure struct {
	p      *plot.Plot
	legend plot.Legend
	width  vg.Length // of the plot, without the legend's strip
}

// barsFigure is the figure Bars draws.
func (c Chart) barsFigure() (figure, error) {
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
		return figure{}, fmt.Errorf("report: chart %q has no series", c.Title)
	}
	// Each group is as wide as its longest label, so that neighbouring
	// labels ("Scratchpad", "Interconnect & Others") do not run together,
	// and its bars fill 60 points of it at most, less than the group's
	// share of the plot area (the axis takes the rest), so that groups
	// keep a gap between them.
	group := groupWidth
	for _, l := range c.Categories {
		r := p.X.Tick.Label.Rectangle(l)
		group = max(group, r.Max.X-r.Min.X+labelGap)
	}
	w := min(vg.Points(60), group*3/4) / vg.Length(n)
	legend := plot.NewLegend()
	for i, s := range c.Series {
		if len(s.Y) != len(c.Categories) {
			return figure{}, fmt.Errorf("report: chart %q: series %q has %d values for %d categories", c.Title, s.Name, len(s.Y), len(c.Categories))
		}
		vals := make(plotter.Values, len(s.Y))
		copy(vals, s.Y)
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return figure{}, err
		}
		b.LineStyle.Width = vg.Length(0)
		b.Color = plotutil.Color(i)
		b.Offset = vg.Length(float64(i)-float64(n-1)/2) * w
		p.Add(b)
		legend.Add(s.Name, b)
	}
	p.NominalX(c.Categories...)
	return figure{p: p, legend: legend, width: vg.Length(max(6, len(c.Categories))) * group}, nil
}

// Lines saves a line chart with markers (undrawable values replaced, see
// drawable).
func (c Chart) Lines(path string) error {
	f, err := c.linesFigure()
	if err != nil {
		return err
	}
	return f.save(path)
}

// lineWidth is the width of a line chart's plot area.
const lineWidth = 6 * groupWidth

// linesFigure is the figure Lines draws.
func (c Chart) linesFigure() (figure, error) {
	c = c.drawable()
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = c.Title, c.XLabel, c.YLabel
	if c.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{}
	}
	legend := plot.NewLegend()
	for i, s := range c.Series {
		if len(s.X) != len(s.Y) {
			return figure{}, fmt.Errorf("report: chart %q: series %q has %d x and %d y values", c.Title, s.Name, len(s.X), len(s.Y))
		}
		pts := make(plotter.XYs, len(s.X))
		for j := range s.X {
			pts[j].X, pts[j].Y = s.X[j], s.Y[j]
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return figure{}, err
		}
		l.Color = plotutil.Color(i)
		sc.Color = plotutil.Color(i)
		sc.Shape = plotutil.Shape(i)
		p.Add(l, sc)
		legend.Add(s.Name, l, sc)
	}
	p.Add(plotter.NewGrid())
	return figure{p: p, legend: legend, width: lineWidth}, nil
}

const (
	chartHeight = 4 * vg.Inch
	groupWidth  = vg.Inch * 8 / 10 // the least width of a bar group
	labelGap    = vg.Length(8)     // points between neighbouring category labels
	legendPad   = vg.Length(12)    // points around the legend's strip
)

// writerTo draws the figure, white, with its legend at the top of the strip
// beside the plot, for format ("svg", "png").
func (f figure) writerTo(format string) (vg.CanvasWriterTo, error) {
	f.legend.Top, f.legend.Left = true, true
	r := f.legend.Rectangle(draw.Canvas{})
	strip := r.Max.X - r.Min.X + 2*legendPad
	c, err := draw.NewFormattedCanvas(f.width+strip, chartHeight, format)
	if err != nil {
		return nil, err
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	f.p.BackgroundColor = color.White
	f.p.Draw(draw.Crop(dc, 0, -strip, 0, 0))
	// The legend's top lines up with the plot area's, below the title.
	f.legend.Draw(draw.Crop(dc, f.width+legendPad, -legendPad, 0, -2*legendPad))
	return c, nil
}

// save writes the figure to path, .svg or .png.
func (f figure) save(path string) error {
	ext := filepath.Ext(path)
	switch ext {
	case ".svg", ".png":
	default:
		return fmt.Errorf("report: %s: charts are saved as .svg or .png", path)
	}
	w, err := f.writerTo(ext[1:])
	if err == nil {
		var b bytes.Buffer
		if _, err = w.WriteTo(&b); err == nil {
			err = os.WriteFile(path, b.Bytes(), 0o644)
		}
	}
	if err != nil {
		return fmt.Errorf("report: save %s: %w", path, err)
	}
	return nil
}

// SVG renders the chart as Bars or, with lines, as Lines would save it to
// an .svg file, and returns the document.
func (c Chart) SVG(lines bool) ([]byte, error) {
	var f figure
	var err error
	if lines {
		f, err = c.linesFigure()
	} else {
		f, err = c.barsFigure()
	}
	if err != nil {
		return nil, err
	}
	w, err := f.writerTo("svg")
	if err != nil {
		return nil, fmt.Errorf("report: chart %q: %w", c.Title, err)
	}
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("report: chart %q: %w", c.Title, err)
	}
	return b.Bytes(), nil
}
