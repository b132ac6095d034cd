package reproduce

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/rosemary-fhe/rosemary/tools/report"
)

// allResults runs every figure on the test runner (shared with the other
// tests) and returns the results and the JSON `rosemary reproduce --json`
// prints for them, decoded.
func allResults(t *testing.T) ([]*Result, map[string]any) {
	t.Helper()
	var results []*Result
	var rows, gms []map[string]any
	for _, f := range Figures {
		res := result(t, f.ID)
		results = append(results, res)
		rows = append(rows, res.Records()...)
		gms = append(gms, res.JSONGeoMeans()...)
	}
	b, err := json.Marshal(map[string]any{"provenance": Provenance, "rows": rows, "geomeans": gms})
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return results, out
}

func finalPage(t *testing.T, results []*Result) []byte {
	t.Helper()
	l := NewLive("rosemary reproduce -o DIR --json", "abc123", Figures)
	for i, f := range Figures {
		if err := l.Complete(f, results[i]); err != nil {
			t.Fatal(err)
		}
	}
	l.Finish(nil)
	var b bytes.Buffer
	if err := l.Page().HTML(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// node helpers over golang.org/x/net/html trees.

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func hasClass(n *html.Node, c string) bool {
	v, _ := attr(n, "class")
	for _, x := range strings.Fields(v) {
		if x == c {
			return true
		}
	}
	return false
}

// all returns the element nodes under n (n included) that match.
func all(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(x *html.Node) {
		if x.Type == html.ElementNode && match(x) {
			out = append(out, x)
		}
		for c := x.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func tag(name string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Data == name }
}

func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(x *html.Node) {
		if x.Type == html.TextNode {
			b.WriteString(x.Data)
		}
		for c := x.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func byID(root *html.Node, id string) *html.Node {
	ns := all(root, func(n *html.Node) bool { v, ok := attr(n, "id"); return ok && v == id })
	if len(ns) != 1 {
		return nil
	}
	return ns[0]
}

// checkCell checks that a cell shows JSON value v: a number in data-value
// exactly, and as text to the 3 significant digits the tables use; a null
// as "null" and a dash; a string as its text.
func checkCell(t *testing.T, where string, td *html.Node, v any) {
	t.Helper()
	dv, hasValue := attr(td, "data-value")
	shown := text(td)
	switch x := v.(type) {
	case nil:
		if dv != "null" || shown != "—" {
			t.Errorf("%s: null shown as %q (data-value %q)", where, shown, dv)
		}
	case float64:
		got, err := strconv.ParseFloat(dv, 64)
		if !hasValue || err != nil || got != x {
			t.Errorf("%s: data-value %q, JSON %v", where, dv, x)
			return
		}
		s, err := strconv.ParseFloat(shown, 64)
		if err != nil || math.Abs(s-x) > 5e-3*math.Abs(x) {
			t.Errorf("%s: shows %q for %v", where, shown, x)
		}
	case string:
		if hasValue || shown != x {
			t.Errorf("%s: shows %q (data-value %q), JSON %q", where, shown, dv, x)
		}
	default:
		t.Errorf("%s: JSON value %T", where, v)
	}
}

func figureKey(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.Itoa(int(f))
	}
	return fmt.Sprint(v)
}

// TestPageAsAPersonReadsIt: the page, parsed as a browser would, has every
// figure with its title, chart and every table row, and the summary has
// every headline; every number equals the JSON output's; nothing is
// fetched from elsewhere.
func TestPageAsAPersonReadsIt(t *testing.T) {
	results, js := allResults(t)
	page := finalPage(t, results)
	root, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	if c := byID(root, "command"); c == nil || text(c) != "rosemary reproduce -o DIR --json" {
		t.Error("the command is not on the page")
	}
	if c := byID(root, "commit"); c == nil || text(c) != "abc123" {
		t.Error("the commit is not on the page")
	}
	if byID(root, "progress") != nil || len(all(root, func(n *html.Node) bool { v, _ := attr(n, "http-equiv"); return v == "refresh" })) > 0 {
		t.Error("a finished page shows progress or reloads")
	}
	// Self-contained: no scripts, links, images or frames; every reference
	// is an anchor on the page; no style loads anything.
	for _, n := range all(root, func(*html.Node) bool { return true }) {
		switch n.Data {
		case "script", "link", "img", "iframe", "object", "embed", "base":
			t.Errorf("page has a <%s>", n.Data)
		}
		for _, a := range n.Attr {
			switch {
			case a.Key == "src" || a.Key == "href" || a.Key == "xlink:href" || a.Key == "action":
				if !strings.HasPrefix(a.Val, "#") {
					t.Errorf("<%s %s=%q> points off the page", n.Data, a.Key, a.Val)
				}
			case strings.Contains(a.Val, "url("):
				t.Errorf("<%s %s=%q> loads a URL", n.Data, a.Key, a.Val)
			}
		}
	}
	for _, st := range all(root, tag("style")) {
		if strings.Contains(text(st), "url(") || strings.Contains(text(st), "@import") {
			t.Error("the style sheet loads something")
		}
	}

	rows := js["rows"].([]any)
	for fi, f := range Figures {
		res := results[fi]
		sec := byID(root, "fig-"+f.ID)
		if sec == nil {
			t.Errorf("figure %s: no section", f.ID)
			continue
		}
		if h := all(sec, tag("h2")); len(h) != 1 || text(h[0]) != f.Title {
			t.Errorf("figure %s: heading not %q", f.ID, f.Title)
		}
		if svgs := all(sec, tag("svg")); len(svgs) != 1 || len(all(svgs[0], tag("text"))) < 3 {
			t.Errorf("figure %s: no chart with labels (%d svg)", f.ID, len(svgs))
		}
		tables := all(sec, func(n *html.Node) bool { return n.Data == "table" && hasClass(n, "data") })
		if len(tables) != 1 {
			t.Fatalf("figure %s: %d data tables", f.ID, len(tables))
		}
		var cols []string
		var provs []string
		for _, th := range all(tables[0], tag("th")) {
			cols = append(cols, text(th))
			c, _ := attr(th, "class")
			provs = append(provs, c)
		}
		if strings.Join(cols, ",") != strings.Join(res.Table.Columns, ",") {
			t.Errorf("figure %s: columns %v", f.ID, cols)
		}
		for i, c := range cols {
			want := "p-" + columnProvenance(f.ID, c).String()
			if provs[i] != want {
				t.Errorf("figure %s column %s: class %q, want %q", f.ID, c, provs[i], want)
			}
		}
		var want []map[string]any
		for _, r := range rows {
			m := r.(map[string]any)
			if figureKey(m["figure"]) == f.ID {
				want = append(want, m)
			}
		}
		trs := all(all(tables[0], tag("tbody"))[0], tag("tr"))
		if len(trs) != len(want) || len(want) == 0 {
			t.Errorf("figure %s: %d rows on the page, %d in the JSON", f.ID, len(trs), len(want))
			continue
		}
		within, total := 0, 0
		for i, tr := range trs {
			tds := all(tr, tag("td"))
			if len(tds) != len(cols) {
				t.Fatalf("figure %s row %d: %d cells", f.ID, i, len(tds))
			}
			for j, c := range cols {
				checkCell(t, fmt.Sprintf("figure %s row %d %s", f.ID, i, c), tds[j], want[i][c])
				if q, ok := want[i][c].(float64); ok && strings.HasPrefix(c, "ratio") {
					total++
					if q <= 1.25 && q >= 1/1.25 {
						within++
					}
					if cls, _ := attr(tds[j], "class"); strings.Contains(cls, "agrees") != (q <= 1.25 && q >= 1/1.25) {
						t.Errorf("figure %s row %d: ratio %g classed %q", f.ID, i, q, cls)
					}
				}
			}
		}
		ag := all(sec, func(n *html.Node) bool { return hasClass(n, "agreement") })
		if len(ag) != 1 || (total > 0 && !strings.HasPrefix(text(ag[0]), fmt.Sprintf("%d of %d ", within, total))) {
			t.Errorf("figure %s: agreement line %q, counted %d of %d", f.ID, text(ag[0]), within, total)
		}
	}

	// The summary: the JSON's headlines in order, then a line for each
	// figure without one; every figure has a line.
	sum := byID(root, "summary")
	if sum == nil {
		t.Fatal("no summary table")
	}
	trs := all(all(sum, tag("tbody"))[0], tag("tr"))
	gms := js["geomeans"].([]any)
	bySection := map[string][]*html.Node{}
	for _, tr := range trs {
		s, _ := attr(tr, "data-section")
		bySection[s] = append(bySection[s], tr)
	}
	for _, f := range Figures {
		if len(bySection[f.ID]) == 0 {
			t.Errorf("figure %s has no line in the summary", f.ID)
		}
	}
	seen := map[string]int{}
	for _, g := range gms {
		m := g.(map[string]any)
		id := figureKey(m["figure"])
		lines := bySection[id]
		k := seen[id]
		seen[id]++
		if k >= len(lines) {
			t.Errorf("headline %v missing", m)
			continue
		}
		tds := all(lines[k], tag("td"))
		if len(tds) != 6 {
			t.Fatalf("summary line with %d cells", len(tds))
		}
		if text(tds[1]) != m["name"] {
			t.Errorf("figure %s headline %d: %q, JSON %q", id, k, text(tds[1]), m["name"])
		}
		for j, key := range []string{"ours", "paper", "ratio"} {
			checkCell(t, fmt.Sprintf("headline %q %s", m["name"], key), tds[2+j], m[key])
		}
		why, _ := m["why"].(string)
		if text(tds[5]) != why {
			t.Errorf("headline %q: why %q, JSON %q", m["name"], text(tds[5]), why)
		}
	}
	for id, lines := range bySection {
		if seen[id] == 0 && (len(lines) != 1 || !strings.Contains(text(lines[0]), " of ")) {
			t.Errorf("figure %s: without a summary value it should have one agreement line, has %d", id, len(lines))
		}
		if seen[id] > 0 && len(lines) != seen[id] {
			t.Errorf("figure %s: %d summary lines for %d headlines", id, len(lines), seen[id])
		}
	}
}

// TestLivePage: a page filling in reloads, shows its progress and lists
// pending figures; it serves GET and HEAD of the page only.
func TestLivePage(t *testing.T) {
	v, err := FigureByID("V")
	if err != nil {
		t.Fatal(err)
	}
	l := NewLive("rosemary reproduce --serve 127.0.0.1:0", "unknown", Figures)
	l.Progress(3, 10)
	srv := httptest.NewServer(l)
	defer srv.Close()
	get := func(method, path string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp, b.String()
	}
	resp, body := get("GET", "/")
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("GET /: %d, CSP %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
	root, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	p := byID(root, "progress")
	if p == nil || !strings.Contains(text(p), "0 of 12 figures completed, 3 of 10 simulations") {
		t.Fatalf("progress %v", p)
	}
	if len(all(root, func(n *html.Node) bool { v, _ := attr(n, "http-equiv"); return v == "refresh" })) != 1 {
		t.Error("a page filling in does not reload")
	}
	if n := len(all(root, func(n *html.Node) bool { return n.Data == "section" && hasClass(n, "pending") })); n != len(Figures) {
		t.Errorf("%d pending sections, want %d", n, len(Figures))
	}
	res, err := TableV(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Complete(v, res); err != nil {
		t.Fatal(err)
	}
	_, body = get("GET", "/index.html")
	root, _ = html.Parse(strings.NewReader(body))
	sec := byID(root, "fig-V")
	if sec == nil || hasClass(sec, "pending") || len(all(sec, tag("svg"))) != 1 {
		t.Fatal("Table V not filled in")
	}
	if !strings.Contains(text(byID(root, "progress")), "1 of 12 figures completed") {
		t.Error("progress not updated")
	}
	l.Finish(nil)
	_, body = get("GET", "/")
	if strings.Contains(body, `http-equiv="refresh"`) || strings.Contains(body, `id="progress"`) {
		t.Error("a finished page still reloads or shows progress")
	}
	for _, c := range []struct {
		method, path string
		code         int
	}{{"POST", "/", 405}, {"PUT", "/index.html", 405}, {"DELETE", "/", 405}, {"GET", "/FIG9.csv", 404}, {"GET", "/../etc/passwd", 404}} {
		if resp, _ := get(c.method, c.path); resp.StatusCode != c.code {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, resp.StatusCode, c.code)
		}
	}
	if resp, body := get("HEAD", "/"); resp.StatusCode != 200 || body != "" {
		t.Errorf("HEAD: %d with %d bytes", resp.StatusCode, len(body))
	}
	l.Finish(fmt.Errorf("boom"))
	if _, body := get("GET", "/"); !strings.Contains(body, "The run failed: boom") {
		t.Error("a failed run does not say so")
	}
}

// TestPageRejectsMismatch: a section whose provenance does not cover its
// table is an error, not a page with columns missing.
func TestPageRejectsMismatch(t *testing.T) {
	p := &report.Page{Sections: []report.Section{{ID: "x", Table: &report.Table{Columns: []string{"a", "b"}}, Provenance: []report.Provenance{report.Label}}}}
	if err := p.HTML(&bytes.Buffer{}); err == nil {
		t.Fatal("accepted")
	}
}
