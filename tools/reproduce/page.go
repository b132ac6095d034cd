package reproduce

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rosemary-fhe/rosemary/tools/report"
)

// PageTitle heads the evaluation page.
const PageTitle = "Rosemary evaluation: our models (simulated) beside the paper (quoted)"

// labelColumns name, configure or explain a row; every other column is a
// value with a provenance.
var labelColumns = []string{"workload", "database", "model", "component", "resource", "binding", "why",
	"batch", "aus", "ssd", "edram_mb", "ssds"}

// columnProvenance is where the values of column col of figure id come
// from: the paper's and published columns are quoted, ratios derived,
// Table V's own columns the arch preset (an input taken from the paper),
// and every other value simulated. Nothing in the evaluation is measured.
func columnProvenance(id, col string) report.Provenance {
	switch {
	case strings.HasPrefix(col, "paper"), strings.HasPrefix(col, "published"):
		return report.Quoted
	case strings.HasPrefix(col, "ratio"), col == "implied_flash_gbps": // ours bytes over the published time
		return report.Derived
	case slices.Contains(labelColumns, col):
		return report.Label
	case id == "V":
		return report.Preset
	}
	return report.Simulated
}

func oursProvenance(from string) report.Provenance {
	if from == "simulated" {
		return report.Simulated
	}
	return report.Preset
}

// agreement counts the ratio cells of a table (ours over a quoted value)
// and those within 25%.
func agreement(t *report.Table) (within, all int) {
	for _, r := range t.Rows {
		for i, c := range t.Columns {
			if !strings.HasPrefix(c, "ratio") {
				continue
			}
			if q, ok := r[i].(float64); ok && !math.IsNaN(q) {
				all++
				if !differs(q, 1) {
					within++
				}
			}
		}
	}
	return within, all
}

func agreementText(res *Result) string {
	within, all := agreement(res.Table)
	if all == 0 {
		return "No quoted value to compare with: every value here is ours."
	}
	what := "values quoted from the paper"
	if res.ID == "VAL" {
		what = "published values"
	}
	return fmt.Sprintf("%d of %d %s are within 25%% of ours.", within, all, what)
}

// Section renders a figure's part of the page (its chart included).
func Section(f Figure, res *Result) (report.Section, error) {
	s := report.Section{ID: f.ID, Title: f.Title}
	if res == nil {
		s.Pending = true
		return s, nil
	}
	svg, err := shortNames(res.Chart).SVG(res.Lines)
	if err != nil {
		return s, fmt.Errorf("reproduce: figure %s chart: %w", f.ID, err)
	}
	s.SVG, s.Table, s.Agreement = svg, res.Table, agreementText(res)
	for _, c := range res.Table.Columns {
		s.Provenance = append(s.Provenance, columnProvenance(res.ID, c))
	}
	for _, n := range res.Table.Notes {
		if n != Provenance && n != ModelChoices { // shown once, at the top
			s.Notes = append(s.Notes, n)
		}
	}
	return s, nil
}

// Headlines are a figure's lines of the page's summary: its summary
// values, or, for a figure without one, how many of its rows agree with
// the paper.
func Headlines(res *Result) []report.Headline {
	var hs []report.Headline
	for _, g := range res.GeoMeans {
		hs = append(hs, report.Headline{Section: res.ID, Name: g.Name, Ours: g.Ours, OursFrom: oursProvenance(g.OursFrom),
			Paper: g.Paper, Ratio: g.Ratio, Why: g.Why})
	}
	if len(hs) == 0 {
		hs = append(hs, report.Headline{Section: res.ID, Name: agreementText(res), Ours: math.NaN(), OursFrom: report.Simulated,
			Paper: math.NaN(), Ratio: math.NaN()})
	}
	return hs
}

// PageOf assembles the page from the figures' sections (in figure order;
// a pending one where a figure has not completed) and the headlines of the
// completed ones, in the same order.
func PageOf(command, commit string, sections []report.Section, results []*Result) *report.Page {
	p := &report.Page{Title: PageTitle, Command: command, Commit: commit, Notes: []string{Provenance, ModelChoices}, Sections: sections}
	for _, res := range results {
		if res != nil {
			p.Headlines = append(p.Headlines, Headlines(res)...)
		}
	}
	return p
}
