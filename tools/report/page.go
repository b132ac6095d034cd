package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
)

// Provenance says where a column's values come from; the page colours
// each by it.
type Provenance uint8

const (
	// Label: names, configuration knobs and explanations.
	Label Provenance = iota
	// Simulated by our models.
	Simulated
	// Quoted from a paper.
	Quoted
	// Measured on this machine.
	Measured
	// Preset: an input configuration value (not a result).
	Preset
	// Derived from other columns (ours / paper).
	Derived
)

var provenanceNames = map[Provenance]string{Label: "label", Simulated: "simulated", Quoted: "quoted",
	Measured: "measured", Preset: "preset", Derived: "derived"}

func (p Provenance) String() string {
	if s, ok := provenanceNames[p]; ok {
		return s
	}
	return fmt.Sprintf("Provenance(%d)", uint8(p))
}

// Headline is one line of a page's summary table: a figure's summary value
// beside the paper's. NaN means none.
type Headline struct {
	Section  string // the Section's ID it summarises
	Name     string
	Ours     float64
	OursFrom Provenance
	Paper    float64
	Ratio    float64
	Why      string
}

// Section is one figure of a page: its chart (an SVG document, inlined),
// its table with each column's provenance, and a line on how it compares.
// A pending section is listed by title only (a page still filling in).
type Section struct {
	ID, Title  string
	Pending    bool
	SVG        []byte
	Table      *Table
	Provenance []Provenance // per column of Table
	Agreement  string
	Notes      []string // shown under the table
}

// Page is a self-contained HTML report: no scripts, no external styles,
// fonts or images, charts inlined as SVG.
type Page struct {
	Title    string
	Command  string // what produced it
	Commit   string
	Notes    []string // shown once at the top
	Progress string   // non-empty while the page fills in
	// Done and Total are the work done and known (a progress bar) while
	// Progress is set; RefreshSeconds > 0 makes the browser reload.
	Done, Total    int
	RefreshSeconds int
	Headlines      []Headline
	Sections       []Section
}

// cell is one rendered table cell: the text shown, the exact value
// (data-value: shortest round-tripping decimal, "null" for NaN and ±Inf;
// empty for text) and its classes.
type cell struct {
	Text, Value, Class string
}

func exact(v any) string {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "null"
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		return exact(float64(x))
	case int, int64, int32, uint64, uint32:
		return fmt.Sprint(x)
	}
	return ""
}

func classOf(p Provenance, v any) string {
	c := "p-" + p.String()
	if exact(v) != "" {
		c += " num"
	}
	if p == Derived {
		if f, ok := v.(float64); ok && !math.IsNaN(f) {
			if f > 1.25 || f < 1/1.25 {
				c += " differs"
			} else {
				c += " agrees"
			}
		}
	}
	return c
}

func makeCell(p Provenance, v any) cell {
	return cell{Text: format(v), Value: exact(v), Class: classOf(p, v)}
}

type pageRow struct{ Cells []cell }

type pageSection struct {
	Section
	SVGHTML template.HTML
	Columns []cell // header cells, classed by provenance
	Rows    []pageRow
}

type pageHeadline struct {
	Headline
	Cells []cell // ours, paper, ratio
}

// svgElement is the <svg> element of an SVG document (the XML prolog and
// comments dropped), for inlining.
func svgElement(doc []byte) []byte {
	if i := bytes.Index(doc, []byte("<svg")); i >= 0 {
		return doc[i:]
	}
	return nil
}

// HTML writes the page.
func (p *Page) HTML(w io.Writer) error {
	var secs []pageSection
	for _, s := range p.Sections {
		ps := pageSection{Section: s}
		if !s.Pending {
			if s.Table == nil || len(s.Provenance) != len(s.Table.Columns) {
				return fmt.Errorf("report: page section %s: provenance of %d columns for a table of %d", s.ID, len(s.Provenance), columns(s.Table))
			}
			// The SVG comes from our own chart renderer (Chart.SVG), not
			// from input, so it is inlined as markup.
			ps.SVGHTML = template.HTML(svgElement(s.SVG))
			for i, c := range s.Table.Columns {
				ps.Columns = append(ps.Columns, cell{Text: c, Class: "p-" + s.Provenance[i].String()})
			}
			for _, r := range s.Table.Rows {
				var pr pageRow
				for i, v := range r {
					pr.Cells = append(pr.Cells, makeCell(s.Provenance[i], v))
				}
				ps.Rows = append(ps.Rows, pr)
			}
		}
		secs = append(secs, ps)
	}
	var heads []pageHeadline
	for _, h := range p.Headlines {
		heads = append(heads, pageHeadline{Headline: h, Cells: []cell{makeCell(h.OursFrom, h.Ours), makeCell(Quoted, h.Paper), makeCell(Derived, h.Ratio)}})
	}
	// The legend lists the provenances the page shows.
	used := map[string]bool{}
	for _, h := range heads {
		used[h.OursFrom.String()] = true
	}
	for _, s := range p.Sections {
		for _, pr := range s.Provenance {
			used[pr.String()] = true
		}
	}
	return pageTemplate.Execute(w, struct {
		*Page
		Secs  []pageSection
		Heads []pageHeadline
		Used  map[string]bool
	}{p, secs, heads, used})
}

func columns(t *Table) int {
	if t == nil {
		return 0
	}
	return len(t.Columns)
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
{{- if gt .RefreshSeconds 0}}
<meta http-equiv="refresh" content="{{.RefreshSeconds}}">
{{- end}}
<title>{{.Title}}</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; margin: 1.5em 2em; color: #1a1a1a; max-width: 1400px; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
code { background: #f3f3f3; padding: 0 0.3em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.8em 0; }
th, td { border: 1px solid #d0d0d0; padding: 0.25em 0.5em; vertical-align: top; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th { background: #eee; }
.p-simulated { background: #e3efff; }
.p-quoted { background: #fff1d6; }
.p-measured { background: #e2f6e2; }
.p-preset { background: #efe6fa; }
.agrees { color: #17631b; font-weight: bold; }
.differs { color: #a31515; font-weight: bold; }
td.p-label { background: #fff; }
.legend span { display: inline-block; padding: 0.15em 0.6em; margin-right: 0.5em; border: 1px solid #ccc; }
.note, .notes li { font-size: 0.85em; color: #444; }
.why { max-width: 40em; }
figure.chart { margin: 0.5em 0; }
figure.chart svg { max-width: 100%; height: auto; }
.pending { color: #888; font-style: italic; }
#progress { background: #fffbe6; border: 1px solid #e6d36f; padding: 0.4em 0.8em; }
.agreement { font-weight: bold; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="meta">Produced by <code id="command">{{.Command}}</code> at commit <code id="commit">{{.Commit}}</code>.</p>
{{- if .Progress}}
<p id="progress">{{.Progress}} <progress value="{{.Done}}" max="{{.Total}}"></progress></p>
{{- end}}
<p class="legend">Cells are coloured by where the values come from:
{{- if .Used.simulated}}<span class="p-simulated">simulated by our models</span>{{end}}
{{- if .Used.quoted}}<span class="p-quoted">quoted from a paper</span>{{end}}
{{- if .Used.measured}}<span class="p-measured">measured on this machine</span>{{end}}
{{- if .Used.preset}}<span class="p-preset">an input preset</span>{{end}}
ratio = ours / paper: <span class="agrees">within 25%</span><span class="differs">differs by more than 25%</span></p>
{{- range .Notes}}
<p class="note">{{.}}</p>
{{- end}}
<h2 id="summary-title">Summary</h2>
<p class="note">The headline of every figure: its summary values, or, for a figure without one, how many of its rows agree with the paper.</p>
<table id="summary">
<thead><tr><th>figure</th><th>headline</th><th class="p-simulated">ours</th><th class="p-quoted">paper</th><th class="p-derived">ratio</th><th>why</th></tr></thead>
<tbody>
{{- range .Heads}}
<tr data-section="{{.Section}}"><td><a href="#fig-{{.Section}}">{{.Section}}</a></td><td class="name">{{.Name}}</td>
{{- range .Cells}}<td class="{{.Class}}"{{if .Value}} data-value="{{.Value}}"{{end}}>{{.Text}}</td>{{end -}}
<td class="why">{{.Why}}</td></tr>
{{- end}}
</tbody>
</table>
{{- range .Secs}}
<section id="fig-{{.ID}}" class="figure{{if .Pending}} pending{{end}}">
<h2>{{.Title}}</h2>
{{- if .Pending}}
<p class="pending">not computed yet</p>
{{- else}}
<p class="agreement">{{.Agreement}}</p>
<figure class="chart">{{.SVGHTML}}</figure>
<table class="data">
<thead><tr>{{range .Columns}}<th class="{{.Class}}">{{.Text}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Rows}}
<tr>{{range .Cells}}<td class="{{.Class}}"{{if .Value}} data-value="{{.Value}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
<ul class="notes">
{{- range .Notes}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}
</section>
{{- end}}
</body>
</html>
`))
