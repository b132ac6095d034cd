package soc

import (
	"fmt"
	"math"
	"strings"
)

// Comparison is one quoted figure of the paper beside the model's.
type Comparison struct {
	Name  string  `json:"name"`
	Model float64 `json:"model"`
	Paper float64 `json:"paper"`
	// Below1 marks a paper figure stated only as "less than one" (frames
	// per second); Paper is then 1 and Ratio compares with 1.
	Below1 bool    `json:"paper_below_1,omitempty"`
	Ratio  float64 `json:"ratio"` // model / paper
	// Why names the parts (measured core phases, simulated accelerator,
	// link) that dominate the model's latencies behind a ratio off by more
	// than 25%.
	Why string `json:"why,omitempty"`
}

// PaperText is the paper's figure as quoted.
func (c Comparison) PaperText() string {
	if c.Below1 {
		return "< 1"
	}
	return fmt.Sprintf("%.2f", c.Paper)
}

// RatioText is the ratio, "ok" when the paper only bounds it and the model
// stays under the bound.
func (c Comparison) RatioText() string {
	if c.Below1 && c.Model < 1 {
		return "<1 ok"
	}
	return fmt.Sprintf("%.2f", c.Ratio)
}

// off reports whether a comparison differs by more than 25%.
func (c Comparison) off() bool {
	if c.Below1 {
		return c.Model >= 1
	}
	return math.Abs(c.Ratio-1) > 0.25
}

// describe names the dominant part of a conversion, with the measured
// instructions when it is a core phase.
func describe(p Point, r Row, enc bool) string {
	c, what := r.Encrypt.Cost, "encrypt"
	if !enc {
		c, what = r.Decrypt.Cost, "decrypt"
	}
	part, share := c.Dominant()
	s := fmt.Sprintf("%s %s: %s %.0f%%", r.System, what, part, 100*share)
	if ph, ok := strings.CutPrefix(part, "core:"); ok {
		if in, ok := p.Instructions[ph]; ok && in > 0 {
			src := p.Software
			if (ph == "dec-product" || ph == "intt" || ph == "crt" || ph == "decode") && p.DecryptFrom != "" {
				src = p.DecryptFrom
			}
			s += fmt.Sprintf(" (%s, %.2fM instructions measured)", src, in/1e6)
		}
	} else {
		s += " (simulated)"
	}
	return s
}

// Compare sets the model's counterparts of the paper's quoted Figure 7
// ranges and Figure 10 end points beside them.
func Compare(r Report) []Comparison {
	if len(r.Points) == 0 {
		return nil
	}
	pv := r.Paper
	get := func(p Point, s System) Row {
		for _, x := range p.Rows {
			if x.System == s {
				return x
			}
		}
		return Row{}
	}
	type ratio struct {
		name     string
		paper    [2]float64
		num, den System
		enc      bool
	}
	ratios := []ratio{
		{"Fig.7 RACE vs baseline, encrypt", pv.RACEvsBaselineEnc, Baseline, RACE, true},
		{"Fig.7 RACE vs baseline, decrypt", pv.RACEvsBaselineDec, Baseline, RACE, false},
		{"Fig.7 RISE-1BFU vs RACE, encrypt", pv.RISE1vsRACEEnc, RACE, RISE1BFU, true},
		{"Fig.7 RISE-MaxBFU vs RISE-1BFU, encrypt", pv.MaxvsRISE1Enc, RISE1BFU, RISEMaxBFU, true},
		{"Fig.7 RISE-MaxBFU vs RISE-1BFU, decrypt", pv.MaxvsRISE1Dec, RISE1BFU, RISEMaxBFU, false},
		{"Fig.7 RISE-MaxBFU vs baseline, encrypt", pv.MaxvsBaselineEnc, Baseline, RISEMaxBFU, true},
		{"Fig.7 RISE-MaxBFU vs baseline, decrypt", pv.MaxvsBaselineDec, Baseline, RISEMaxBFU, false},
	}
	var out []Comparison
	for _, q := range ratios {
		lat := func(p Point, s System) float64 {
			if q.enc {
				return get(p, s).Encrypt.LatencyUs
			}
			return get(p, s).Decrypt.LatencyUs
		}
		// The model's smallest and largest ratio over the points, beside
		// the paper's range ends.
		lo, hi := 0, 0
		v := func(i int) float64 { return lat(r.Points[i], q.num) / lat(r.Points[i], q.den) }
		for i := range r.Points {
			if v(i) < v(lo) {
				lo = i
			}
			if v(i) > v(hi) {
				hi = i
			}
		}
		for k, i := range []int{lo, hi} {
			end := [2]string{"low", "high"}[k]
			c := Comparison{Name: fmt.Sprintf("%s (%s end, model at N=%d)", q.name, end, r.Points[i].N),
				Model: v(i), Paper: q.paper[k]}
			c.Ratio = c.Model / c.Paper
			if c.off() {
				p := r.Points[i]
				c.Why = describe(p, get(p, q.num), q.enc) + "; " + describe(p, get(p, q.den), q.enc)
			}
			out = append(out, c)
		}
	}
	// §VI-B component speed-ups: accelerator over the core's software for
	// the same step. A paper figure far above the model's means the
	// paper's software took that many more cycles for the step than the
	// measured instructions × CPI: the why states the cycles it implies.
	for _, q := range []struct {
		name   string
		paper  [2]float64
		get    func(Point) float64
		phases []string
	}{
		{"§VI-B sampling speed-up (RISE sampler vs core)", pv.SamplingSpeedup, func(p Point) float64 { return p.SamplingSpeedup }, []string{"sample"}},
		{"§VI-B encryption speed-up (RACE vs core)", pv.EncryptionSpeedup, func(p Point) float64 { return p.EncryptionSpeedup }, []string{"lift", "ntt", "product"}},
		{"§VI-B decryption speed-up (RACE vs core)", pv.DecryptionSpeedup, func(p Point) float64 { return p.DecryptionSpeedup }, []string{"dec-product", "intt"}},
	} {
		for k, p := range ends(r.Points) {
			c := Comparison{Name: fmt.Sprintf("%s, N=%d", q.name, p.N), Model: q.get(p), Paper: q.paper[k]}
			c.Ratio = c.Model / c.Paper
			if c.off() {
				src := p.Software
				if q.phases[0] == "dec-product" && p.DecryptFrom != "" {
					src = p.DecryptFrom
				}
				in, cy := 0.0, 0.0
				for _, ph := range q.phases {
					in += p.Instructions[ph]
					cy += p.CoreCycles[ph]
				}
				c.Why = fmt.Sprintf("core:%s %.2fM instructions measured (%s), %.2fM model cycles; the paper's figure implies %.1f× those cycles",
					strings.Join(q.phases, "+"), in/1e6, src, cy/1e6, c.Paper/c.Model)
			}
			out = append(out, c)
		}
	}
	ends := ends(r.Points)
	for _, f := range []struct {
		name  string
		paper map[System][2]float64
		fps   func(Row) float64
	}{
		{"QQVGA", pv.FPSQQVGA, func(x Row) float64 { return x.FPSQQVGA }},
		{"QVGA", pv.FPSQVGA, func(x Row) float64 { return x.FPSQVGA }},
	} {
		for _, s := range Systems {
			for k, p := range ends {
				c := Comparison{Name: fmt.Sprintf("Fig.10 %s fps, %s, N=%d", f.name, s, p.N),
					Model: f.fps(get(p, s)), Paper: f.paper[s][k]}
				if c.Paper == 0 {
					c.Paper, c.Below1 = 1, true
				}
				c.Ratio = c.Model / c.Paper
				if c.off() {
					c.Why = describe(p, get(p, s), true)
				}
				out = append(out, c)
			}
		}
	}
	return out
}

// ends are the smallest-N and largest-N points.
func ends(ps []Point) []Point { return []Point{ps[0], ps[len(ps)-1]} }

// FrameVerdict states the baseline's QQVGA frame rate at N = 4096 against
// the paper's "SEAL-Embedded fails to encrypt even one frame per second"
// (§I, at N = 4096 with three 30-bit primes on a 1 GHz BlackParrot).
func FrameVerdict(r Report) string {
	for _, p := range r.Points {
		if p.N != 4096 {
			continue
		}
		for _, x := range p.Rows {
			if x.System == Baseline {
				verdict := "consistent with"
				if x.FPSQQVGA >= 1 {
					verdict = "contradicts"
				}
				instr := 0.0
				for _, ph := range encPhases {
					instr += p.Instructions[ph.String()]
				}
				s := fmt.Sprintf("%s baseline, QQVGA at N=4096 (log Q=%d): %.2f frames/s (%d ciphertexts of %.1f ms) — %s the paper's \"fails to encrypt even one frame per second\"",
					r.Baseline, p.LogQ, x.FPSQQVGA, p.QQVGA.Ciphertexts, x.Encrypt.LatencyUs/1e3, verdict)
				if instr > 0 {
					// Under one frame per second means at least 1/cts seconds per conversion.
					need := r.Core.ClockHz / float64(p.QQVGA.Ciphertexts)
					s += fmt.Sprintf("; that needs ≥ %.1f cycles per measured instruction (%.2fM per conversion), the model charges %.2f",
						need/instr, instr/1e6, x.Encrypt.Cost.Cycles()/instr)
				}
				return s
			}
		}
	}
	return ""
}
