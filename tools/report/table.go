package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
)

// Table is a titled grid of values with notes (how the figures were
// obtained, deviations explained).
type Table struct {
	Title   string
	Columns []string
	Rows    [][]any
	Notes   []string
}

// Add appends a row; it must have one value per column.
func (t *Table) Add(vals ...any) error {
	if len(vals) != len(t.Columns) {
		return fmt.Errorf("report: table %q: row has %d values for %d columns", t.Title, len(vals), len(t.Columns))
	}
	t.Rows = append(t.Rows, vals)
	return nil
}

func format(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case float64:
		switch {
		case math.IsNaN(x):
			return "—"
		case x == 0:
			return "0"
		case math.Abs(x) >= 1e5 || math.Abs(x) < 1e-3:
			return fmt.Sprintf("%.3g", x)
		case math.Abs(x) >= 100:
			return fmt.Sprintf("%.0f", x)
		default:
			return fmt.Sprintf("%.3g", x)
		}
	case float32:
		return format(float64(x))
	}
	return fmt.Sprint(v)
}

// Markdown writes the table as a GitHub-flavoured Markdown table.
func (t *Table) Markdown(w io.Writer) error {
	var b strings.Builder
	if t.Title != "" {
		fmt.Fprintf(&b, "### %s\n\n", t.Title)
	}
	b.WriteString("| " + strings.Join(t.Columns, " | ") + " |\n|")
	for range t.Columns {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		cells := make([]string, len(r))
		for i, v := range r {
			cells[i] = strings.ReplaceAll(format(v), "|", `\|`)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	for _, n := range t.Notes {
		b.WriteString("\n" + n + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// CSV writes the header and rows as CSV.
func (t *Table) CSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.Columns); err != nil {
		return err
	}
	for _, r := range t.Rows {
		rec := make([]string, len(r))
		for i, v := range r {
			rec[i] = fmt.Sprint(v)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Records returns the rows as maps keyed by column name (for JSON output).
func (t *Table) Records() []map[string]any {
	out := make([]map[string]any, len(t.Rows))
	for i, r := range t.Rows {
		m := make(map[string]any, len(r))
		for j, v := range r {
			if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
				v = nil
			}
			m[t.Columns[j]] = v
		}
		out[i] = m
	}
	return out
}

// JSON writes the records as a JSON array.
func (t *Table) JSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(t.Records())
}

// GeoMean returns the geometric mean of the positive values (NaN if none).
func GeoMean(vals []float64) float64 {
	var s float64
	n := 0
	for _, v := range vals {
		if v > 0 && !math.IsInf(v, 0) {
			s += math.Log(v)
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return math.Exp(s / float64(n))
}

// Bytes formats a byte count with binary units (B, KiB, MiB, …).
func Bytes(b int64) string {
	const unit = 1024
	if b < unit && b > -unit {
		return fmt.Sprintf("%d B", b)
	}
	f, i := float64(b), 0
	for (f >= unit || f <= -unit) && i < 6 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.2f %ciB", f, "KMGTPE"[i-1])
}
