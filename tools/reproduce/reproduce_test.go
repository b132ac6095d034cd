package reproduce

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/sim/system"
	"github.com/rosemary-fhe/rosemary/tools/report"
)

// testWorkloads is the reduced set: a flash scan (PIR), the coefficient
// scan (HEVEC) and a bootstrapping top-k search (VQ2-S).
var testWorkloads = []string{"pir-vcall", "hevec", "vecdist"}

var (
	runnerOnce sync.Once
	shared     *Runner
	sharedErr  error
	resMu      sync.Mutex
	results    = map[string]*Result{}
)

// runner is shared by the tests so that plans and reports are computed once.
func runner(t *testing.T) *Runner {
	t.Helper()
	runnerOnce.Do(func() {
		shared, sharedErr = NewRunner(Options{Workloads: testWorkloads, MaxTiles: 32, TileBudget: 1 << 12})
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// result is figure id's result; the first call runs every figure at once
// (RunAll), as `rosemary reproduce` does.
func result(t *testing.T, id string) *Result {
	t.Helper()
	resMu.Lock()
	defer resMu.Unlock()
	if len(results) == 0 {
		rs, err := RunAll(runner(t), Figures, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range Figures {
			results[f.ID] = rs[i]
		}
	}
	r, ok := results[id]
	if !ok {
		t.Fatalf("no figure %s", id)
	}
	return r
}

func col(t *testing.T, tb interface{ Records() []map[string]any }, row map[string]any, name string) float64 {
	t.Helper()
	v, ok := row[name]
	if !ok {
		t.Fatalf("row %v has no column %q", row, name)
	}
	f, ok := v.(float64)
	if !ok {
		t.Fatalf("column %q of %v is %T, not a number", name, row, v)
	}
	return f
}

func TestFigureTablesShape(t *testing.T) {
	n := len(testWorkloads)
	want := map[string]struct {
		cols []string
		rows int
	}{
		"9":  {[]string{"workload", "cpu_latency_s", "ha_latency_s", "rosemary_latency_s", "speedup_vs_cpu", "speedup_vs_ha", "paper", "ratio", "why"}, n + 1},
		"10": {[]string{"workload", "ha_pcie_bytes", "rosemary_pcie_bytes", "reduction", "paper", "ratio", "why"}, n + 1},
		"11": {[]string{"database", "batch", "cpu_latency_s", "inspire_latency_s", "rosemary_latency_s", "inspire_speedup_vs_cpu", "rosemary_speedup_vs_cpu", "rosemary_vs_inspire", "paper", "ratio", "why"}, len(Batches)},
		"12": {[]string{"workload", "bare_latency_s", "tdap_latency_s", "full_latency_s", "tdap_gain", "full_gain", "paper_tdap", "paper_full", "ratio_tdap", "ratio_full", "why"}, n + 1},
		"13": {[]string{"workload", "resource", "utilization_pct", "paper", "ratio", "why"}, (n + 1) * len(Resources)},
		"14": {[]string{"workload", "edram_mb", "latency_s", "speedup_vs_no_edram", "paper", "ratio", "why"}, (n + 1) * len(EDRAMSizesMB)},
		"15": {[]string{"workload", "aus", "latency_s", "speedup_vs_ha", "paper", "ratio", "why"}, (n + 1) * len(AUCounts)},
		"16": {[]string{"workload", "aus", "ssd", "latency_s", "speedup_vs_medium", "paper", "ratio", "why"}, (n + 1) * len(SSDs) * len(SSDAUs)},
		"16K": {[]string{"workload", "ssds", "total_s", "speedup", "efficiency", "host_link_share", "aggregation_share", "binding", "why"},
			3 * len(SSDCounts)},
		"17": {[]string{"workload", "ha_energy_j", "rosemary_energy_j", "energy_gain", "ha_edap", "rosemary_edap", "edap_gain", "paper", "ratio", "why"}, n + 3},
		"V":  {[]string{"component", "area_mm2", "power_w", "paper_area_mm2", "paper_power_w", "ratio_area", "ratio_power", "why"}, 7},
		"VAL": {[]string{"model", "workload", "ours_s", "published_s", "ratio", "nand_bytes", "ours_flash_gbps", "implied_flash_gbps", "binding", "why"},
			3},
	}
	if len(want) != len(Figures) {
		t.Fatalf("test covers %d figures, Figures lists %d", len(want), len(Figures))
	}
	dir := t.TempDir()
	for _, f := range Figures {
		w, ok := want[f.ID]
		if !ok {
			t.Fatalf("figure %s not covered", f.ID)
		}
		res := result(t, f.ID)
		if f.Title == "" || !strings.HasPrefix(res.Table.Title, f.Title+" (") {
			t.Errorf("figure %s: table title %q, listed as %q", f.ID, res.Table.Title, f.Title)
		}
		if strings.Join(res.Table.Columns, ",") != strings.Join(w.cols, ",") {
			t.Errorf("figure %s columns %v, want %v", f.ID, res.Table.Columns, w.cols)
		}
		if len(res.Table.Rows) != w.rows {
			t.Errorf("figure %s has %d rows, want %d", f.ID, len(res.Table.Rows), w.rows)
		}
		// Every row with a paper value has ratio = ours/paper and a why
		// exactly when they differ by more than 25%.
		for _, rec := range res.Records() {
			if rec["figure"] != res.FigureKey() {
				t.Fatalf("figure %s: record %v lacks its figure key", f.ID, rec)
			}
		}
		if err := res.Write(dir); err != nil {
			t.Fatalf("figure %s: %v", f.ID, err)
		}
		for _, ext := range []string{".md", ".csv", ".svg", ".png"} {
			st, err := os.Stat(filepath.Join(dir, res.FileBase()+ext))
			if err != nil || st.Size() == 0 {
				t.Errorf("figure %s: %s missing or empty (%v)", f.ID, ext, err)
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, res.FileBase()+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			t.Fatalf("figure %s csv: %v", f.ID, err)
		}
		if len(recs) != w.rows+1 {
			t.Errorf("figure %s csv has %d records, want %d", f.ID, len(recs), w.rows+1)
		}
		md, err := os.ReadFile(filepath.Join(dir, res.FileBase()+".md"))
		if err != nil {
			t.Fatal(err)
		}
		quotes := []byte("Paper: \"")
		if f.ID == "VAL" {
			quotes = []byte("Published: ")
		}
		if !bytes.Contains(md, []byte("Provenance")) || !bytes.Contains(md, quotes) {
			t.Errorf("figure %s markdown lacks provenance or paper quotes", f.ID)
		}
	}
}

// TestRatiosAndWhy: in every table with (ours, paper, ratio, why) columns,
// ratio = ours/paper and a why is present exactly when they differ by more
// than 25%.
func TestRatiosAndWhy(t *testing.T) {
	ours := map[string]string{"9": "speedup_vs_ha", "10": "reduction", "11": "rosemary_vs_inspire", "13": "utilization_pct",
		"14": "speedup_vs_no_edram", "15": "speedup_vs_ha", "16": "speedup_vs_medium", "17": "edap_gain"}
	checked := 0
	for id, oc := range ours {
		res := result(t, id)
		for _, rec := range res.Records() {
			p, ok := rec["paper"].(float64)
			if !ok {
				continue
			}
			o := col(t, res.Table, rec, oc)
			q := col(t, res.Table, rec, "ratio")
			if math.Abs(q-o/p) > 1e-12*math.Abs(o/p) {
				t.Errorf("figure %s %v: ratio %g, want %g", id, rec, q, o/p)
			}
			why, _ := rec["why"].(string)
			if (why != "") != (q > 1.25 || q < 0.8) {
				t.Errorf("figure %s %v: ratio %g with why %q", id, rec, q, why)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Fatalf("only %d rows with paper values checked", checked)
	}
}

// latencies returns latency_s per workload and per value of key.
func latencies(t *testing.T, res *Result, key string) map[string]map[float64]float64 {
	t.Helper()
	out := map[string]map[float64]float64{}
	for _, rec := range res.Records() {
		w := rec["workload"].(string)
		if w == "geomean" {
			continue
		}
		if out[w] == nil {
			out[w] = map[float64]float64{}
		}
		var k float64
		switch v := rec[key].(type) {
		case int:
			k = float64(v)
		case float64:
			k = v
		default:
			t.Fatalf("%s is %T", key, v)
		}
		out[w][k] = col(t, res.Table, rec, "latency_s")
	}
	return out
}

// TestEDRAMSaturates: more scratchpad never slows a workload down and the last
// step (96 -> 128 MB) changes latency by less than 5%.
func TestEDRAMSaturates(t *testing.T) {
	lat := latencies(t, result(t, "14"), "edram_mb")
	if len(lat) != len(testWorkloads) {
		t.Fatalf("%d workloads in the sweep", len(lat))
	}
	for w, l := range lat {
		if l[128] > l[0]*(1+1e-9) {
			t.Errorf("%s: 128 MB eDRAM slower than none (%g > %g s)", w, l[128], l[0])
		}
		if d := math.Abs(l[96]/l[128] - 1); d >= 0.05 {
			t.Errorf("%s: 96 -> 128 MB changes latency by %.1f%%", w, 100*d)
		}
	}
}

// TestAUsSaturate: more AUs never slow a workload down, and 32 -> 64 AUs
// changes latency by less than 5%; the 4-AU engine is slower than the
// 64-AU one for at least one workload (the sweep is not flat).
func TestAUsSaturate(t *testing.T) {
	lat := latencies(t, result(t, "15"), "aus")
	grows := false
	for w, l := range lat {
		if l[64] > l[4]*(1+1e-9) {
			t.Errorf("%s: 64 AUs slower than 4 (%g > %g s)", w, l[64], l[4])
		}
		if l[4] > 1.05*l[64] {
			grows = true
		}
		if d := math.Abs(l[32]/l[64] - 1); d >= 0.05 {
			t.Errorf("%s: 32 -> 64 AUs changes latency by %.1f%%", w, 100*d)
		}
	}
	if !grows {
		t.Error("no workload gains more than 5% from 4 to 64 AUs")
	}
}

// TestSmallSSDHurtsPIRMost: at both engine sizes every workload is slower
// on the small SSD, and PIR is among the most hurt: its slowdown is the
// flash bandwidth ratio of the two presets (8 × 1.8 GB/s over 16 × 2.4 GB/s)
// within 3%, and no workload is hurt more than 2% beyond it. (The other
// flash scans, HEVEC and vecdist, tie with it in our model.)
func TestSmallSSDHurtsPIRMost(t *testing.T) {
	res := result(t, "16")
	const flashRatio = 8 * 1.8 / (16 * 2.4)
	for _, n := range SSDAUs {
		worst, worstSp, pirSp := "", math.Inf(1), math.NaN()
		for _, rec := range res.Records() {
			if rec["ssd"] != "ssd-small" || rec["aus"] != n || rec["workload"] == "geomean" {
				continue
			}
			sp := col(t, res.Table, rec, "speedup_vs_medium")
			if sp >= 1 {
				t.Errorf("%v AUs: %v is not slower on the small SSD (%g)", n, rec["workload"], sp)
			}
			if sp < worstSp {
				worst, worstSp = rec["workload"].(string), sp
			}
			if rec["workload"] == "pir-vcall" {
				pirSp = sp
			}
		}
		if math.IsNaN(pirSp) || math.IsInf(worstSp, 1) {
			t.Fatalf("%d AUs: figure 16 has no small-SSD rows for PIR (%g) or any workload (%g)", n, pirSp, worstSp)
		}
		if math.Abs(pirSp/flashRatio-1) > 0.03 {
			t.Errorf("%d AUs: PIR on the small SSD %.3g×, the flash ratio is %.3g", n, pirSp, flashRatio)
		}
		if worstSp < pirSp/1.02 {
			t.Errorf("%d AUs: the small SSD hurts %s (%.3g×) more than PIR (%.3g×)", n, worst, worstSp, pirSp)
		}
	}
}

// TestAblationOrder: TDAP+CLCAO is at least as fast as TDAP, which is at
// least as fast as Bare, on every workload.
func TestAblationOrder(t *testing.T) {
	res := result(t, "12")
	for _, rec := range res.Records() {
		if rec["workload"] == "geomean" {
			continue
		}
		b, d, f := col(t, res.Table, rec, "bare_latency_s"), col(t, res.Table, rec, "tdap_latency_s"), col(t, res.Table, rec, "full_latency_s")
		if d > b*(1+1e-9) || f > d*(1+1e-9) {
			t.Errorf("%v: bare %g s, tdap %g s, full %g s: not full <= tdap <= bare", rec["workload"], b, d, f)
		}
	}
}

// TestPaperQuotes: every quoted value appears in its sentence, and every
// sentence appears in the paper text (after undoing its LaTeX).
func TestPaperQuotes(t *testing.T) {
	paper, err := rosemaryPaper()
	if err != nil {
		t.Logf("quotes checked against their values only: %v", err)
	}
	norm := func(s string) string {
		r := strings.NewReplacer("$", "", `\times`, "×", `\%`, "%", `\ \mathrm{mm}^2`, "mm2", " ", "")
		return r.Replace(s)
	}
	text := norm(string(paper))
	num := regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)
	for _, f := range Figures {
		res := result(t, f.ID)
		for _, g := range res.GeoMeans {
			if math.IsNaN(g.Paper) {
				continue
			}
			found := false
			for _, m := range num.FindAllString(g.Quote, -1) {
				// "about 38%" is the factor 1.38.
				if v, _ := strconv.ParseFloat(m, 64); v == g.Paper || math.Abs(1+v/100-g.Paper) < 1e-12 {
					found = true
				}
			}
			if !found {
				t.Errorf("figure %s %s: paper value %g not in its quote %q", f.ID, g.Name, g.Paper, g.Quote)
			}
		}
		for _, n := range res.Table.Notes {
			q, ok := strings.CutPrefix(n, "Paper: \"")
			if !ok {
				continue
			}
			q = strings.TrimSuffix(q, "\"")
			// "…" marks text the paper interrupts (a table in the text).
			for _, part := range strings.Split(q, "…") {
				if err == nil && !strings.Contains(text, norm(part)) {
					t.Errorf("figure %s: quote not in the paper: %q", f.ID, part)
				}
			}
		}
	}
	if err != nil {
		t.Skipf("paper text not available to check the sentences: %v", err)
	}
}

func TestBatchedPIR(t *testing.T) {
	w := Workload{Name: "b", Build: pirBuild("pir-test", 1<<20, 96, 4)}
	p, err := w.Build()
	if err != nil {
		t.Fatal(err)
	}
	outs, stored := 0, 0
	for _, n := range p.Nodes {
		switch n.Op {
		case ir.OpOutput:
			outs++
		case ir.OpStored:
			stored++
		}
	}
	if outs != 4 || stored != 1 {
		t.Fatalf("batched PIR of 4 queries has %d outputs and %d stored nodes, want 4 and 1", outs, stored)
	}
}

func TestFigureByID(t *testing.T) {
	for _, id := range []string{"9", "17", "V", "v", "5"} {
		if _, err := FigureByID(id); err != nil {
			t.Errorf("%q: %v", id, err)
		}
	}
	for _, id := range []string{"", "8", "18", "VI", "x"} {
		if _, err := FigureByID(id); err == nil {
			t.Errorf("%q accepted", id)
		}
	}
	if _, err := NewRunner(Options{Workloads: []string{"nope"}}); err == nil {
		t.Error("unknown workload accepted")
	}
	if _, err := NewRunner(Options{MaxTiles: -1}); err == nil {
		t.Error("negative tiles accepted")
	}
}

func TestChartShortNames(t *testing.T) {
	c := report.Chart{LogY: true, Categories: []string{"vecsearch-vq1-s", "b", "c"}, Series: []Series{{Name: "s", Y: []float64{math.NaN(), 0.5, 100}}}}
	s := shortNames(c)
	if s.Categories[0] != "vq1-s" || c.Categories[0] != "vecsearch-vq1-s" {
		t.Errorf("categories %v (input %v)", s.Categories, c.Categories)
	}
}

// rosemaryPaper reads the text of the Rosemary paper from the directory
// named by ROSEMARY_PAPERS (CI sets it; a clone has no papers): the file
// whose first line is the paper's title.
func rosemaryPaper() ([]byte, error) {
	dir := os.Getenv("ROSEMARY_PAPERS")
	if dir == "" {
		return nil, errors.New("ROSEMARY_PAPERS is not set")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if bytes.HasPrefix(b, []byte("Rosemary: Efficient and Adaptable In-Storage Acceleration")) {
			return b, nil
		}
	}
	return nil, fmt.Errorf("no Rosemary paper text in %s", dir)
}

// TestBatchedPIRIsCompact: Figure 11's batched PIR stores its database
// compact, as the single-query PIR does, and shares it among the queries.
func TestBatchedPIRIsCompact(t *testing.T) {
	d := pirDatabases[0]
	for _, batch := range []int{1, 8} {
		p, err := pirBuild(d.name, d.records, d.bytes, batch)()
		if err != nil {
			t.Fatal(err)
		}
		stored, pmults := 0, 0
		for _, n := range p.Nodes {
			switch n.Op {
			case ir.OpStored:
				stored++
				if !n.Compact || n.Degree != 0 {
					t.Errorf("batch %d: stored %q compact=%v degree=%d, want a compact plaintext", batch, n.Name, n.Compact, n.Degree)
				}
			case ir.OpPMult:
				pmults++
			}
		}
		if stored != 1 || pmults != batch {
			t.Errorf("batch %d: %d stored nodes and %d PMults, want 1 and %d", batch, stored, pmults, batch)
		}
	}
}

// TestValidationINSPIRE: the validation row simulates INSPIRE on the whole
// 288 GiB database (every byte read from flash at least once), beside the
// published 36 s, and its bandwidth columns follow from its own bytes.
func TestValidationINSPIRE(t *testing.T) {
	res := result(t, "VAL")
	if res.FileBase() != "VALIDATION" {
		t.Errorf("file base %q", res.FileBase())
	}
	rows := res.Records()
	found := false
	for _, rec := range rows {
		if rec["model"] != "INSPIRE" {
			continue
		}
		found = true
		ours, pub := col(t, res.Table, rec, "ours_s"), col(t, res.Table, rec, "published_s")
		nand := col(t, res.Table, rec, "nand_bytes")
		if pub != 36 || ours <= 0 || math.Abs(col(t, res.Table, rec, "ratio")-ours/pub) > 1e-12 {
			t.Errorf("ours %g s, published %g s, ratio %g", ours, pub, col(t, res.Table, rec, "ratio"))
		}
		if nand < 288<<30 {
			t.Errorf("INSPIRE read %g bytes of a 288 GiB database", nand)
		}
		if g := col(t, res.Table, rec, "implied_flash_gbps"); math.Abs(g-nand/36/1e9) > 1e-9*g {
			t.Errorf("implied %g GB/s, want %g", g, nand/36/1e9)
		}
		if g := col(t, res.Table, rec, "ours_flash_gbps"); math.Abs(g-nand/ours/1e9) > 1e-9*g {
			t.Errorf("ours %g GB/s, want %g", g, nand/ours/1e9)
		}
	}
	if !found {
		t.Fatalf("no INSPIRE row in %v", rows)
	}
}

// The validation table runs SHARP's bootstrapping and ResNet-20 on our host
// model at SHARP's parameters, beside SHARP's published 3.12 ms and 99 ms;
// the "why" accounts for the HBM traffic by kind, never more than the
// simulator moved.
func TestValidationSHARP(t *testing.T) {
	res := result(t, "VAL")
	want := map[string]float64{"sharp-boot": 3.12e-3, "resnet20-sharp": 99e-3}
	for _, rec := range res.Records() {
		name, _ := rec["workload"].(string)
		pub, ok := want[name]
		if !ok {
			continue
		}
		delete(want, name)
		ours := col(t, res.Table, rec, "ours_s")
		if col(t, res.Table, rec, "published_s") != pub || ours <= 0 || math.Abs(col(t, res.Table, rec, "ratio")-ours/pub) > 1e-12 {
			t.Errorf("%s: ours %g s, published %g s, ratio %g", name, ours, col(t, res.Table, rec, "published_s"), col(t, res.Table, rec, "ratio"))
		}
		if differs(ours, pub) && rec["why"] == "" {
			t.Errorf("%s: ours %g s vs %g s with no why", name, ours, pub)
		}
	}
	if len(want) > 0 {
		t.Fatalf("no rows for %v", want)
	}
	a, err := base()
	if err != nil {
		t.Fatal(err)
	}
	r := runner(t)
	for _, f := range sharpFigures {
		w := Workload{Name: f.name, Batch: 1, Build: f.build}
		pl, err := r.Plan(w, a, "full")
		if err != nil {
			t.Fatal(err)
		}
		rep, err := r.Sim(w, a, "full", system.HA)
		if err != nil {
			t.Fatal(err)
		}
		hr, err := hostReads(pl, a)
		if err != nil {
			t.Fatal(err)
		}
		if hr.keys <= 0 || hr.plaintexts <= 0 || hr.keys+hr.plaintexts > rep.HostMem {
			t.Errorf("%s: keys %d + plaintexts %d bytes vs %d bytes over HBM", f.name, hr.keys, hr.plaintexts, rep.HostMem)
		}
	}
}

// Figure 13's PIR-LWE row: ours (no paper value), simulated on Rosemary,
// flash-bound with the engine nearly idle (one byte MAC per byte at 2048
// lanes is 53× the flash's 38.4 GB/s), its why saying so.
func TestFig13LWEPIR(t *testing.T) {
	res := result(t, "13")
	got := map[string]float64{}
	for _, rec := range res.Records() {
		if rec["workload"] != "pir-lwe" {
			continue
		}
		if _, ok := rec["paper"].(float64); ok {
			t.Errorf("pir-lwe row with a paper value: %v", rec)
		}
		if why, _ := rec["why"].(string); !strings.Contains(why, "the paper has no figure for it") || !strings.Contains(why, "flash reads 4429185024 B") {
			t.Errorf("pir-lwe why %q", why)
		}
		got[rec["resource"].(string)] = col(t, res.Table, rec, "utilization_pct")
	}
	if len(got) != len(Resources) || got["nand"] < 95 || got["engine"] > 5 || got["host"] != 0 {
		t.Errorf("pir-lwe utilization %v", got)
	}
}
