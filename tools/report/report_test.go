package report

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

func TestTableFormats(t *testing.T) {
	tb := &Table{Title: "Figure 9", Columns: []string{"workload", "ours", "paper"}, Notes: []string{"simulated"}}
	if err := tb.Add("pir", 3.5, 4.0); err != nil {
		t.Fatal(err)
	}
	if err := tb.Add("x"); err == nil {
		t.Fatal("short row accepted")
	}
	var md, cs, js bytes.Buffer
	if err := tb.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	want := "### Figure 9\n\n| workload | ours | paper |\n|---|---|---|\n| pir | 3.5 | 4 |\n\nsimulated\n"
	if md.String() != want {
		t.Fatalf("markdown:\n%q\nwant\n%q", md.String(), want)
	}
	if err := tb.CSV(&cs); err != nil || cs.String() != "workload,ours,paper\npir,3.5,4\n" {
		t.Fatalf("csv %q %v", cs.String(), err)
	}
	if err := tb.JSON(&js); err != nil || !strings.Contains(js.String(), `"ours": 3.5`) {
		t.Fatalf("json %s %v", js.String(), err)
	}
}

func TestGeoMean(t *testing.T) {
	if g := GeoMean([]float64{2, 8}); math.Abs(g-4) > 1e-12 {
		t.Fatalf("geomean %v", g)
	}
	if !math.IsNaN(GeoMean(nil)) {
		t.Fatal("empty geomean")
	}
}

func TestCharts(t *testing.T) {
	dir := t.TempDir()
	c := Chart{Title: "t", YLabel: "speedup", Categories: []string{"a", "b"}, Series: []Series{{Name: "ours", Y: []float64{1, 2}}, {Name: "paper", Y: []float64{1.5, 2.5}}}}
	for _, name := range []string{"bars.svg", "bars.png"} {
		p := filepath.Join(dir, name)
		if err := c.Bars(p); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(p); err != nil || st.Size() < 500 {
			t.Fatalf("%s: %v", name, err)
		}
	}
	l := Chart{Title: "sweep", Series: []Series{{Name: "s", X: []float64{0, 1, 2}, Y: []float64{1, 2, 2}}}}
	if err := l.Lines(filepath.Join(dir, "line.svg")); err != nil {
		t.Fatal(err)
	}
	if err := c.Bars(filepath.Join(dir, "x.pdf")); err == nil {
		t.Fatal("accepted .pdf")
	}
	bad := Chart{Categories: []string{"a"}, Series: []Series{{Name: "s", Y: []float64{1, 2}}}}
	if err := bad.Bars(filepath.Join(dir, "b.svg")); err == nil {
		t.Fatal("accepted mismatched series")
	}
}

func TestLogChartsWithZeros(t *testing.T) {
	dir := t.TempDir()
	c := Chart{Title: "log", LogY: true, Categories: []string{"a", "b", "c"},
		Series: []Series{{Name: "s", Y: []float64{0, 10, math.NaN()}}}}
	if err := c.Bars(filepath.Join(dir, "b.svg")); err != nil {
		t.Fatal(err)
	}
	l := Chart{Title: "log", LogY: true, Series: []Series{{Name: "s", X: []float64{1, 2, 3}, Y: []float64{0, 100, 1000}}}}
	if err := l.Lines(filepath.Join(dir, "l.svg")); err != nil {
		t.Fatal(err)
	}
	if c.Series[0].Y[0] != 0 {
		t.Fatal("Bars modified its input")
	}
}

func TestBytes(t *testing.T) {
	for b, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.00 KiB", 16 << 20: "16.00 MiB", 3 << 40: "3.00 TiB"} {
		if got := Bytes(b); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", b, got, want)
		}
	}
}

// TestChartSVG: the SVG a page inlines is the .svg file's content.
func TestChartSVG(t *testing.T) {
	dir := t.TempDir()
	bars := Chart{Title: "b", LogY: true, Categories: []string{"a", "b"}, Series: []Series{{Name: "s", Y: []float64{1, 200}}}}
	lines := Chart{Title: "l", Series: []Series{{Name: "s", X: []float64{1, 2}, Y: []float64{3, 4}}}}
	for _, c := range []struct {
		ch    Chart
		lines bool
		save  func(Chart, string) error
	}{{bars, false, Chart.Bars}, {lines, true, Chart.Lines}} {
		p := filepath.Join(dir, c.ch.Title+".svg")
		if err := c.save(c.ch, p); err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.ch.SVG(c.lines)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) || !bytes.Contains(got, []byte("<svg")) {
			t.Errorf("%s: SVG() differs from the saved file (%d vs %d bytes)", c.ch.Title, len(got), len(want))
		}
	}
}

// TestChartLayout: every bar group is at least as wide as its category
// label (Table V's labels ran together), and the legend sits in a strip
// right of the plot area, so the saved chart is wider than the plot by at
// least the longest legend entry (drawn inside, it hid the tallest bars).
func TestChartLayout(t *testing.T) {
	labels := []string{"NTTU", "MODU", "OT & KeyGen", "SRAM", "Scratchpad", "Interconnect & Others", "a", "b"}
	c := Chart{Title: "t", YLabel: "mm2", Categories: labels,
		Series: []Series{{Name: "arch preset", Y: []float64{6.5, 3.3, 0.075, 7.4, 17.4, 10.9, 1, 2}}, {Name: "a much longer series name", Y: []float64{1, 2, 3, 4, 5, 6, 7, 8}}}}
	f, err := c.barsFigure()
	if err != nil {
		t.Fatal(err)
	}
	group := f.width / vg.Length(len(labels))
	for _, l := range labels {
		r := f.p.X.Tick.Label.Rectangle(l)
		if w := r.Max.X - r.Min.X; group < w {
			t.Errorf("label %q is %.1f pt wide in groups of %.1f pt", l, w, group)
		}
	}
	svg, err := c.SVG(false)
	if err != nil {
		t.Fatal(err)
	}
	var width float64
	i := bytes.Index(svg, []byte(`<svg width="`)) + len(`<svg width="`)
	j := bytes.Index(svg[i:], []byte(`pt"`))
	if width, err = strconv.ParseFloat(string(svg[i:i+j]), 64); err != nil {
		t.Fatal(err)
	}
	entry := f.legend.TextStyle.Rectangle("a much longer series name")
	if min := float64(f.width + entry.Max.X - entry.Min.X); width < min {
		t.Errorf("chart %.1f pt wide, plot %.1f pt: no room for a %.1f-pt legend entry beside it", width, float64(f.width), float64(entry.Max.X-entry.Min.X))
	}
}
