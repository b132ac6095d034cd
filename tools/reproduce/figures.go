package reproduce

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/sim/system"
	"github.com/rosemary-fhe/rosemary/tools/report"
)

// Provenance is the note every table carries.
const Provenance = "Provenance: \"ours\" columns are SIMULATED by our models (workload generators -> compiler.Compile -> sim/system, " +
	"arch preset rosemary unless stated); \"paper\" columns are QUOTED from the Rosemary paper (sentences below); " +
	"ratio = ours / paper; a \"why\" is given where they differ by more than 25%. Nothing here is measured on hardware."

// ModelChoices names the modelling decisions behind every figure that the
// paper leaves open (each documented where it is made).
const ModelChoices = "Model choices: PIR databases are stored compact (coefficients mod t, one limb per plaintext, lifted and NTT'd on the fly: ir.Node.Compact); " +
	"Bare follows the workloads' own segment hints (ir.Node.Segment); INSPIRE is Rosemary's engine and flash with everything in the SSD, " +
	"no eDRAM, no CLCAO beyond a fused multiply-accumulate (sim/system/inspire.go); the host accelerator keeps counted values it produces and " +
	"consumes instance by instance on chip (compiler.Streamable), for HA and Rosemary alike; evaluation keys are read per operation instance, " +
	"as the mPrograms load them; the CPU baseline is this machine's calibrated kernels scaled to 32 cores."

// Paper is a value quoted from the Rosemary paper with its sentence.
type Paper struct {
	Value float64
	Quote string
}

func none() Paper { return Paper{Value: math.NaN()} }

// GeoMean is one summary figure of a result: ours beside the paper's.
type GeoMean struct {
	Figure string  `json:"figure"`
	Name   string  `json:"name"`
	Ours   float64 `json:"ours"`
	Paper  float64 `json:"paper"`
	Ratio  float64 `json:"ratio"`
	Quote  string  `json:"quote"`
	Why    string  `json:"why,omitempty"`
	// OursFrom says where Ours comes from: "simulated" (every figure) or
	// "arch preset" (Table V).
	OursFrom string `json:"ours_from"`
}

// Result is one regenerated figure.
type Result struct {
	ID       string // "9" … "17", or "V" for Table V
	Table    *report.Table
	Chart    report.Chart
	Lines    bool // a line chart (sweeps); bars otherwise
	GeoMeans []GeoMean
}

// Figure is one entry of the figure table.
type Figure struct {
	ID    string
	Title string
	Run   func(r *Runner) (*Result, error)
}

// titles holds each figure's title once: the list below and the figure's
// table both take it from here.
var titles = map[string]string{
	"9":   "Figure 9: speedup of Rosemary over CPU and HA",
	"10":  "Figure 10: PCIe traffic, HA vs Rosemary",
	"11":  "Figure 11: INSPIRE vs Rosemary on PIR, batch 8/16/32",
	"12":  "Figure 12: ablation Bare / TDAP / TDAP+CLCAO, speedup over Bare",
	"13":  "Figure 13: utilization of host, NAND, LPDDR, engine under Rosemary (%)",
	"14":  "Figure 14: eDRAM scratchpad 0–128 MB, speedup over no eDRAM",
	"15":  "Figure 15: FHE engine size 4–64 AUs, speedup over HA",
	"16":  "Figure 16: SSD small / medium / large, speedup over the medium SSD",
	"16K": "Figure 16 extended: 1–64 SSDs behind one host, speedup over one SSD",
	"17":  "Figure 17: energy and EDAP, HA vs Rosemary",
	"V":   "Table V: area and power of the Rosemary device",
	"VAL": "Validation against independent published figures (INSPIRE, SHARP)",
}

// Figures lists every figure and table `rosemary reproduce` regenerates.
var Figures = []Figure{
	{"9", titles["9"], Fig9},
	{"10", titles["10"], Fig10},
	{"11", titles["11"], Fig11},
	{"12", titles["12"], Fig12},
	{"13", titles["13"], Fig13},
	{"14", titles["14"], Fig14},
	{"15", titles["15"], Fig15},
	{"16", titles["16"], Fig16},
	{"16K", titles["16K"], FigScaleOut},
	{"17", titles["17"], Fig17},
	{"V", titles["V"], TableV},
	{"VAL", titles["VAL"], FigValidation},
}

// FigureByID finds a figure ("9" … "17", "V"; "5" is accepted for V).
func FigureByID(id string) (Figure, error) {
	u := strings.ToUpper(strings.TrimSpace(id))
	if u == "5" {
		u = "V"
	}
	var ids []string
	for _, f := range Figures {
		if f.ID == u {
			return f, nil
		}
		ids = append(ids, f.ID)
	}
	return Figure{}, fmt.Errorf("reproduce: unknown figure %q (have %s)", id, strings.Join(ids, ", "))
}

// newTable starts figure id's table under its title.
func newTable(id string, cols ...string) *report.Table {
	return &report.Table{Title: titles[id] + " (ours: simulated; paper: quoted)", Columns: cols, Notes: []string{Provenance, ModelChoices}}
}

func quoteNote(t *report.Table, quotes ...string) {
	seen := map[string]bool{}
	for _, q := range quotes {
		if q == "" || seen[q] {
			continue
		}
		seen[q] = true
		t.Notes = append(t.Notes, "Paper: \""+q+"\"")
	}
}

func base() (*arch.Arch, error) {
	a, err := arch.Preset("rosemary")
	if err != nil {
		return nil, fmt.Errorf("reproduce: %w", err)
	}
	return a, nil
}

// perSeq scales a per-program figure of w to one sequence (transformers).
func perSeq(w Workload, v float64) float64 { return v / float64(w.Batch) }

// bottleneck names a report's busiest resource.
func bottleneck(rep system.Report) (string, float64) {
	u := rep.Utilization
	c := []struct {
		n string
		v float64
	}{{"host", u.Host}, {"NAND", u.NAND}, {"LPDDR", u.DRAM}, {"engine", u.Engine}, {"PCIe", u.PCIe}, {"HBM", u.HostMem}, {"SRAM", u.SRAM}, {"eDRAM", u.EDRAM}}
	best := c[0]
	for _, x := range c[1:] {
		if x.v > best.v {
			best = x
		}
	}
	return best.n, best.v
}

func bn(rep system.Report) string {
	n, v := bottleneck(rep)
	return fmt.Sprintf("%s %.0f%% busy", n, 100*v)
}

func isPIR(n string) bool { return strings.HasPrefix(n, "pir") }

func gm(name, fig string, ours float64, p Paper, why string) GeoMean {
	g := GeoMean{Figure: fig, Name: name, Ours: ours, Paper: p.Value, Ratio: ratio(ours, p.Value), Quote: p.Quote, OursFrom: "simulated"}
	if differs(ours, p.Value) {
		g.Why = why
	}
	return g
}

func addGeoMeans(t *report.Table, gs []GeoMean) {
	for _, g := range gs {
		s := fmt.Sprintf("Summary %s: ours %.4g (%s), paper %.4g (quoted), ratio %.3g", g.Name, g.Ours, g.OursFrom, g.Paper, g.Ratio)
		if g.Why != "" {
			s += "; why: " + g.Why
		}
		t.Notes = append(t.Notes, s)
	}
}

// ---------------------------------------------------------------- Figure 9

// Series is report.Series (shorthand).
type Series = report.Series

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func finite(v []float64) []float64 {
	var o []float64
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) && x > 0 {
			o = append(o, x)
		}
	}
	return o
}

// --------------------------------------------------------------- Figure 10

// sweep runs every selected workload on each architecture of a sweep under
// Rosemary (full) and returns latencies [workload][point].
func (r *Runner) sweep(archs []*arch.Arch) ([][]system.Report, error) {
	r.expect(len(r.workloads) * len(archs))
	var jobs []simJob
	for _, a := range archs {
		for _, w := range r.workloads {
			jobs = append(jobs, simJob{w, a, "full", system.Rosemary})
		}
	}
	r.prefetch(jobs)
	out := make([][]system.Report, len(r.workloads))
	// Architecture-major order keeps one architecture's plans together.
	for j, a := range archs {
		for i, w := range r.workloads {
			rep, err := r.Sim(w, a, "full", system.Rosemary)
			if err != nil {
				return nil, err
			}
			if j == 0 {
				out[i] = make([]system.Report, len(archs))
			}
			out[i][j] = rep
		}
	}
	return out, nil
}

func extreme(v []float64, max bool) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if max {
		return s[len(s)-1]
	}
	return s[0]
}

// ----------------------------------------------------------------- Table V
