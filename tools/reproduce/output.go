package reproduce

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rosemary-fhe/rosemary/tools/report"
)

// FileBase is the file name stem of a result: "FIG9", …, "FIG16K", "TABLEV",
// "VALIDATION".
func (res *Result) FileBase() string {
	if _, err := strconv.Atoi(strings.TrimSuffix(res.ID, "K")); err == nil {
		return "FIG" + res.ID
	}
	if res.ID == "VAL" {
		return "VALIDATION"
	}
	return "TABLE" + res.ID
}

// FigureKey is the figure's JSON key: the number for figures, "V" for the
// table.
func (res *Result) FigureKey() any {
	if n, err := strconv.Atoi(res.ID); err == nil {
		return n
	}
	return res.ID
}

// Write saves the result into dir as <base>.md, .csv, .svg and .png.
func (res *Result) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("reproduce: %w", err)
	}
	stem := filepath.Join(dir, res.FileBase())
	var md, csv bytes.Buffer
	if err := res.Table.Markdown(&md); err != nil {
		return fmt.Errorf("reproduce: %s markdown: %w", res.FileBase(), err)
	}
	if err := res.Table.CSV(&csv); err != nil {
		return fmt.Errorf("reproduce: %s csv: %w", res.FileBase(), err)
	}
	if err := os.WriteFile(stem+".md", md.Bytes(), 0o644); err != nil {
		return fmt.Errorf("reproduce: %w", err)
	}
	if err := os.WriteFile(stem+".csv", csv.Bytes(), 0o644); err != nil {
		return fmt.Errorf("reproduce: %w", err)
	}
	ch := shortNames(res.Chart)
	for _, ext := range []string{".svg", ".png"} {
		var err error
		if res.Lines {
			err = ch.Lines(stem + ext)
		} else {
			err = ch.Bars(stem + ext)
		}
		if err != nil {
			return fmt.Errorf("reproduce: %s chart: %w", res.FileBase(), err)
		}
	}
	return nil
}

// shortNames drops the common "vecsearch-" prefix from chart categories.
func shortNames(c report.Chart) report.Chart {
	out := c
	out.Categories = make([]string, len(c.Categories))
	for i, n := range c.Categories {
		out.Categories[i] = strings.TrimPrefix(n, "vecsearch-")
	}
	return out
}

// Records returns the table rows as maps with the figure key added.
func (res *Result) Records() []map[string]any {
	recs := res.Table.Records()
	for _, r := range recs {
		r["figure"] = res.FigureKey()
	}
	return recs
}

// JSONGeoMeans returns the summary figures with NaN replaced by nil.
func (res *Result) JSONGeoMeans() []map[string]any {
	var out []map[string]any
	for _, g := range res.GeoMeans {
		m := map[string]any{"figure": res.FigureKey(), "name": g.Name, "ours": num(g.Ours), "paper": num(g.Paper), "ratio": num(g.Ratio), "quote": g.Quote, "ours_from": g.OursFrom, "paper_from": "quoted"}
		if g.Why != "" {
			m["why"] = g.Why
		}
		out = append(out, m)
	}
	return out
}

func num(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}
