package soc

import "math"

// Span is the range of a ratio over the parameter points.
type Span struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

func (s *Span) add(v float64) {
	if s.Min == 0 && s.Max == 0 {
		s.Min, s.Max = v, v
		return
	}
	s.Min, s.Max = math.Min(s.Min, v), math.Max(s.Max, v)
}

// Summary holds the model's counterparts of the ratios the paper quotes
// for Figure 7 (speed-ups over the (N, log Q) points) and of its Figure 10
// end points, for the closing note.
type Summary struct {
	RACEvsBaselineEnc Span `json:"race_vs_baseline_enc"`
	RACEvsBaselineDec Span `json:"race_vs_baseline_dec"`
	RISE1vsRACEEnc    Span `json:"rise1_vs_race_enc"`
	MaxvsRISE1Enc     Span `json:"max_vs_rise1_enc"`
	MaxvsRISE1Dec     Span `json:"max_vs_rise1_dec"`
	MaxvsBaselineEnc  Span `json:"max_vs_baseline_enc"`
	MaxvsBaselineDec  Span `json:"max_vs_baseline_dec"`
	SamplingSpeedup   Span `json:"sampling_speedup"`
	EncryptionSpeedup Span `json:"encryption_speedup"`
	DecryptionSpeedup Span `json:"decryption_speedup"`
	// Message-to-ciphertext frames per second at the smallest and the
	// largest N of the table.
	FPSQQVGA map[System][2]float64 `json:"fps_qqvga"`
	FPSQVGA  map[System][2]float64 `json:"fps_qvga"`
}

// Summarize computes the Summary of a report.
func Summarize(r Report) Summary {
	s := Summary{FPSQQVGA: map[System][2]float64{}, FPSQVGA: map[System][2]float64{}}
	if len(r.Points) == 0 {
		return s
	}
	get := func(p Point, sys System) Row {
		for _, x := range p.Rows {
			if x.System == sys {
				return x
			}
		}
		return Row{}
	}
	for _, p := range r.Points {
		b, rc, r1, mx := get(p, Baseline), get(p, RACE), get(p, RISE1BFU), get(p, RISEMaxBFU)
		s.RACEvsBaselineEnc.add(b.Encrypt.LatencyUs / rc.Encrypt.LatencyUs)
		s.RACEvsBaselineDec.add(b.Decrypt.LatencyUs / rc.Decrypt.LatencyUs)
		s.RISE1vsRACEEnc.add(rc.Encrypt.LatencyUs / r1.Encrypt.LatencyUs)
		s.MaxvsRISE1Enc.add(r1.Encrypt.LatencyUs / mx.Encrypt.LatencyUs)
		s.MaxvsRISE1Dec.add(r1.Decrypt.LatencyUs / mx.Decrypt.LatencyUs)
		s.MaxvsBaselineEnc.add(b.Encrypt.LatencyUs / mx.Encrypt.LatencyUs)
		s.MaxvsBaselineDec.add(b.Decrypt.LatencyUs / mx.Decrypt.LatencyUs)
		s.SamplingSpeedup.add(p.SamplingSpeedup)
		s.EncryptionSpeedup.add(p.EncryptionSpeedup)
		s.DecryptionSpeedup.add(p.DecryptionSpeedup)
	}
	first, last := r.Points[0], r.Points[len(r.Points)-1]
	for _, sys := range Systems {
		s.FPSQQVGA[sys] = [2]float64{get(first, sys).FPSQQVGA, get(last, sys).FPSQQVGA}
		s.FPSQVGA[sys] = [2]float64{get(first, sys).FPSQVGA, get(last, sys).FPSQVGA}
	}
	return s
}
