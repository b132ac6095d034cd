package soc

import (
	"fmt"
	"math"

	"github.com/rosemary-fhe/rosemary/rise/edge"
	"github.com/rosemary-fhe/rosemary/rise/video"
)

// System is one of the paper's four SoCs.
type System string

// The systems of the paper's evaluation (§VI-A).
const (
	Baseline   System = "baseline"    // everything in software on the core (Options.Baseline picks the software)
	RACE       System = "race"        // en/decryption on one BFU; sampling and codec on the core
	RISE1BFU   System = "rise-1bfu"   // sampling and en/decryption on the accelerator, one BFU
	RISEMaxBFU System = "rise-maxbfu" // as RISE-1BFU with MaxBFUs parallel BFUs
)

// Systems lists the systems in the paper's order.
var Systems = []System{Baseline, RACE, RISE1BFU, RISEMaxBFU}

// MaxBFUs is RISE-MaxBFU's BFU count (paper §VI-A: 32).
const MaxBFUs = 32

// BaselinePowerMW is the baseline SoC's power (paper §VI-B: 27.19 mW for
// both conversions).
const BaselinePowerMW = 27.19

// rng is a quoted percentage range: first value at the smallest N, second
// at the largest (our reading of the paper's "x%–y% for a range of scheme
// parameters"), linear in log2 N between.
type rng struct{ small, large float64 }

func (r rng) at(n, nMin, nMax int) float64 {
	if nMax <= nMin {
		return r.small
	}
	t := (math.Log2(float64(n)) - math.Log2(float64(nMin))) / (math.Log2(float64(nMax)) - math.Log2(float64(nMin)))
	t = min(max(t, 0), 1)
	return r.small + t*(r.large-r.small)
}

// Relative increases quoted from the paper §VI-B (Figure 8 text).
var (
	powerRACE  = rng{0.25, 0.28}     // RACE vs baseline: +25%–28%
	powerRISE1 = rng{0.1162, 0.3015} // RISE-1BFU vs RACE: +11.62%–30.15%
	powerMax   = rng{0.0449, 0.1098} // RISE-MaxBFU vs RISE-1BFU: +4.49%–10.98%
	areaRACE   = rng{0.15, 0.84}     // RACE vs baseline: +15% (smallest N) to +84% (largest N)
	areaRISE1  = rng{0.0365, 0.0214} // RISE-1BFU vs RACE: +3.65%–2.14%
	areaMax    = rng{0.1759, 0.2238} // RISE-MaxBFU vs RISE-1BFU: +17.59%–22.38%
)

// powerArea returns a system's power (mW) and area (baseline = 1).
func powerArea(s System, n, nMin, nMax int) (float64, float64) {
	p, a := BaselinePowerMW, 1.0
	steps := map[System]int{Baseline: 0, RACE: 1, RISE1BFU: 2, RISEMaxBFU: 3}[s]
	pr := []rng{powerRACE, powerRISE1, powerMax}
	ar := []rng{areaRACE, areaRISE1, areaMax}
	for i := range steps {
		p *= 1 + pr[i].at(n, nMin, nMax)
		a *= 1 + ar[i].at(n, nMin, nMax)
	}
	return p, a
}

// Mid-band 5G bandwidths. The paper cites [43] for the range without
// giving numbers in its text; 100 Mbit/s (minimum) and 900 Mbit/s (maximum)
// are the commonly quoted mid-band figures and reproduce the frame rates
// the paper states for N = 16384 (70/23 and 7/2 QQVGA/QVGA frames per
// second), which a test checks as a consistency check of the frame sizes.
const (
	Bandwidth5GMaxBits = 900e6
	Bandwidth5GMinBits = 100e6
)

// Frame is the ciphertext cost of one 8-bit grayscale frame (§II-D).
type Frame struct {
	Name        string  `json:"name"`
	Width       int     `json:"width"`
	Height      int     `json:"height"`
	Ciphertexts int     `json:"ciphertexts"` // ⌈8wh / (N/2·log q)⌉
	Bits        float64 `json:"bits"`        // ciphertexts · 2·N·log Q
	FPS5GMax    float64 `json:"fps_5g_max"`  // frames/s a 900 Mbit/s link carries
	FPS5GMin    float64 `json:"fps_5g_min"`  // ... and a 100 Mbit/s link
}

// FramePlan returns the frame cost at ring degree n with log q bits per
// slot and limbs primes of logQi bits each (log Q = limbs·logQi, the
// paper's N × log q × limbs × #cts per polynomial).
func FramePlan(name string, w, h, n, logQi, limbs int) (Frame, error) {
	if w <= 0 || h <= 0 || n < 2 || logQi <= 0 || limbs <= 0 {
		return Frame{}, fmt.Errorf("rise: invalid frame plan %dx%d at N=%d, log q=%d, %d limbs", w, h, n, logQi, limbs)
	}
	perCt := n / 2 * logQi
	bits := 8 * w * h
	cts := (bits + perCt - 1) / perCt
	f := Frame{Name: name, Width: w, Height: h, Ciphertexts: cts}
	f.Bits = float64(cts) * 2 * float64(n) * float64(logQi*limbs)
	f.FPS5GMax = Bandwidth5GMaxBits / f.Bits
	f.FPS5GMin = Bandwidth5GMinBits / f.Bits
	return f, nil
}

// Conversion is one conversion's latency and its energy products.
type Conversion struct {
	LatencyUs float64 `json:"latency_us"`
	Cost      Cost    `json:"cycles"`
	EnergyUJ  float64 `json:"energy_uj"` // power · latency
	ADP       float64 `json:"adp"`       // area (baseline = 1) · latency in µs
	EDP       float64 `json:"edp"`       // energy (µJ) · latency (µs)
}

// Row is one system at one parameter point.
type Row struct {
	System      System     `json:"system"`
	BFUs        int        `json:"bfus"`
	PowerMW     float64    `json:"power_mw"`
	AreaRel     float64    `json:"area_rel"` // area in units of the baseline SoC
	Encrypt     Conversion `json:"message_to_ciphertext"`
	Decrypt     Conversion `json:"ciphertext_to_message"`
	FPSQQVGA    float64    `json:"fps_qqvga"`     // message-to-ciphertext frames per second
	FPSQVGA     float64    `json:"fps_qvga"`      // ...
	DecFPSQQVGA float64    `json:"dec_fps_qqvga"` // ciphertext-to-message frames per second
	DecFPSQVGA  float64    `json:"dec_fps_qvga"`
}

// Point is one (N, log Q) parameter set with its frames and systems.
type Point struct {
	Name    string `json:"name"`
	N       int    `json:"n"`
	LogQ    int    `json:"log_q"`  // limbs · bits per prime (the paper's labels: 90, 390, ...)
	LogQi   int    `json:"log_qi"` // bits per prime = bits per slot in the frame packing
	Limbs   int    `json:"limbs"`
	DecLimb int    `json:"dec_limbs"` // limbs the decryptor's CRT uses
	Enc     Phases `json:"enc_ops"`
	Dec     Phases `json:"dec_ops"`
	// Software on the core: its name, where its decryption phases come
	// from, its cycles and (measured) instructions per edge.Phase name.
	Software     string             `json:"software"`
	DecryptFrom  string             `json:"decrypt_from"`
	CoreCycles   map[string]float64 `json:"core_cycles"`
	Instructions map[string]float64 `json:"instructions,omitempty"`
	// Component speed-ups of the accelerator over software at this point
	// (the paper quotes these in §VI-B): sampling (core vs RISE sampler),
	// encryption and decryption arithmetic (core vs RACE incl. link).
	SamplingSpeedup   float64 `json:"sampling_speedup"`
	EncryptionSpeedup float64 `json:"encryption_speedup"`
	DecryptionSpeedup float64 `json:"decryption_speedup"`
	QQVGA             Frame   `json:"qqvga"`
	QVGA              Frame   `json:"qvga"`
	Rows              []Row   `json:"systems"`
}

// Options configure Table; zero values take the defaults.
type Options struct {
	Core   *CoreCosts
	Accel  *AccelCosts
	Params []edge.Params // default edge.Presets
	MaxBFU int           // default MaxBFUs
	// Baseline is the software on the core: BaselineEdge (default),
	// BaselineSEAL or BaselineDerived.
	Baseline string
	Profiles []Profile // measured counts; default MeasuredProfiles
}

// Report is the SoC model's output.
type Report struct {
	Source   string      `json:"source"` // "simulated" plus how
	Baseline string      `json:"baseline"`
	Core     CoreCosts   `json:"core"`
	Accel    AccelCosts  `json:"accel"`
	Points   []Point     `json:"points"`
	Model    Summary     `json:"model_summary"` // the model's counterparts of Paper
	Paper    PaperValues `json:"paper"`
}

// Evaluate returns one system's row at one parameter set, with sw the
// software that runs on its core.
func Evaluate(s System, p edge.Params, sw Software, core CoreCosts, acc AccelCosts, maxBFU, nMin, nMax int) (Row, error) {
	enc, dec, err := Counts(p)
	if err != nil {
		return Row{}, err
	}
	bfus := 1
	if s == RISEMaxBFU {
		bfus = maxBFU
	}
	if err := acc.validate(bfus); err != nil {
		return Row{}, err
	}
	if !(core.ClockHz > 0) || !(acc.ClockHz == core.ClockHz) {
		return Row{}, fmt.Errorf("rise: core and accelerator must share a positive clock (got %g and %g Hz)", core.ClockHz, acc.ClockHz)
	}
	n, L := p.N, len(p.Q)
	var ec, dc Cost
	onCore := func(c *Cost, phs ...edge.Phase) {
		for _, ph := range phs {
			c.addPart("core:"+ph.String(), Cost{CoreCycles: sw.Cycles[ph]})
		}
	}
	onCore(&ec, edge.PhaseEncode)
	onCore(&dc, edge.PhaseCRT, edge.PhaseDecode)
	switch s {
	case Baseline:
		onCore(&ec, edge.PhaseSample, edge.PhaseLift, edge.PhaseNTT, edge.PhaseProduct)
		onCore(&dc, edge.PhaseDecProduct, edge.PhaseINTT)
	case RACE:
		onCore(&ec, edge.PhaseSample)
		ec.addPart("accel:encrypt", acc.encryptCrypto(n, L, bfus, true))
		dc.addPart("accel:decrypt", acc.decryptCrypto(n, dec.Crypto.Limbs, bfus))
	case RISE1BFU, RISEMaxBFU:
		ec.addPart("accel:sample", Cost{AccelCycles: acc.sampleCycles(enc.Sample)})
		ec.addPart("accel:encrypt", acc.encryptCrypto(n, L, bfus, false))
		dc.addPart("accel:decrypt", acc.decryptCrypto(n, dec.Crypto.Limbs, bfus))
	default:
		return Row{}, fmt.Errorf("rise: unknown system %q", s)
	}
	pw, ar := powerArea(s, n, nMin, nMax)
	conv := func(c Cost) Conversion {
		us := c.Cycles() / core.ClockHz * 1e6
		e := pw * 1e-3 * us // mW · µs = nJ; ·1e-3 → µJ
		return Conversion{LatencyUs: us, Cost: c, EnergyUJ: e, ADP: ar * us, EDP: e * us}
	}
	return Row{System: s, BFUs: bfus, PowerMW: pw, AreaRel: ar, Encrypt: conv(ec), Decrypt: conv(dc)}, nil
}

// software returns the baseline software of opt at p.
func software(opt Options, p edge.Params, core CoreCosts) (Software, error) {
	switch opt.Baseline {
	case BaselineDerived:
		return DerivedSoftware(p, core)
	case "", BaselineEdge, BaselineSEAL:
	default:
		return Software{}, fmt.Errorf("rise: unknown baseline %q (have %s, %s, %s)", opt.Baseline, BaselineEdge, BaselineSEAL, BaselineDerived)
	}
	profs := opt.Profiles
	if profs == nil {
		var err error
		if profs, err = MeasuredProfiles(); err != nil {
			return Software{}, err
		}
	}
	name := opt.Baseline
	if name == "" {
		name = BaselineEdge
	}
	prof, err := profileOf(profs, name)
	if err != nil {
		return Software{}, err
	}
	ours, err := profileOf(profs, BaselineEdge)
	if err != nil {
		return Software{}, err
	}
	return MeasuredSoftware(p, core, prof, ours)
}

// Table evaluates the four systems at every parameter point.
func Table(opt Options) (Report, error) {
	core, acc := DefaultCore(), DefaultAccel()
	if opt.Core != nil {
		core = *opt.Core
	}
	if opt.Accel != nil {
		acc = *opt.Accel
	}
	params := opt.Params
	if params == nil {
		params = edge.Presets
	}
	maxBFU := opt.MaxBFU
	if maxBFU == 0 {
		maxBFU = MaxBFUs
	}
	if len(params) == 0 {
		return Report{}, fmt.Errorf("rise: no parameter sets")
	}
	nMin, nMax := params[0].N, params[0].N
	for _, p := range params {
		nMin, nMax = min(nMin, p.N), max(nMax, p.N)
	}
	r := Report{
		Source: "simulated: core cycles from RV64 instruction counts measured under qemu-riscv64 (riscv_counts.json) × CPI plus streaming misses, " +
			"or first-principles per-operation costs for the derived baseline; analytic BFU/Keccak accelerator (DefaultAccel); power and area scaled from the paper's §VI-B percentages",
		Baseline: opt.Baseline, Core: core, Accel: acc, Paper: Paper(),
	}
	if r.Baseline == "" {
		r.Baseline = BaselineEdge
	}
	for _, p := range params {
		enc, dec, err := Counts(p)
		if err != nil {
			return Report{}, err
		}
		logQi := int(math.Round(math.Log2(float64(p.Q[0]))))
		sw, err := software(opt, p, core)
		if err != nil {
			return Report{}, err
		}
		pt := Point{Name: p.Name, N: p.N, LogQi: logQi, Limbs: len(p.Q), LogQ: logQi * len(p.Q),
			DecLimb: dec.Crypto.Limbs, Enc: enc, Dec: dec, Software: sw.Name, DecryptFrom: sw.DecryptFrom,
			CoreCycles: map[string]float64{}, Instructions: map[string]float64{}}
		for ph, c := range sw.Cycles {
			pt.CoreCycles[ph.String()] = c
		}
		for ph, c := range sw.Instr {
			pt.Instructions[ph.String()] = c
		}
		pt.SamplingSpeedup = sw.sum(edge.PhaseSample) / acc.sampleCycles(enc.Sample)
		pt.EncryptionSpeedup = sw.sum(edge.PhaseLift, edge.PhaseNTT, edge.PhaseProduct) / acc.encryptCrypto(p.N, len(p.Q), 1, true).Cycles()
		pt.DecryptionSpeedup = sw.sum(edge.PhaseDecProduct, edge.PhaseINTT) / acc.decryptCrypto(p.N, dec.Crypto.Limbs, 1).Cycles()
		if pt.QQVGA, err = FramePlan("qqvga", video.QQVGAWidth, video.QQVGAHeight, p.N, logQi, len(p.Q)); err != nil {
			return Report{}, err
		}
		if pt.QVGA, err = FramePlan("qvga", video.QVGAWidth, video.QVGAHeight, p.N, logQi, len(p.Q)); err != nil {
			return Report{}, err
		}
		for _, s := range Systems {
			row, err := Evaluate(s, p, sw, core, acc, maxBFU, nMin, nMax)
			if err != nil {
				return Report{}, fmt.Errorf("rise: %s at N=%d: %w", s, p.N, err)
			}
			row.FPSQQVGA = FPS(row.Encrypt.LatencyUs, pt.QQVGA.Ciphertexts)
			row.FPSQVGA = FPS(row.Encrypt.LatencyUs, pt.QVGA.Ciphertexts)
			row.DecFPSQQVGA = FPS(row.Decrypt.LatencyUs, pt.QQVGA.Ciphertexts)
			row.DecFPSQVGA = FPS(row.Decrypt.LatencyUs, pt.QVGA.Ciphertexts)
			pt.Rows = append(pt.Rows, row)
		}
		r.Points = append(r.Points, pt)
	}
	r.Model = Summarize(r)
	return r, nil
}

// FPS is the frame rate when each frame needs cts conversions of latencyUs
// microseconds each, one after the other.
func FPS(latencyUs float64, cts int) float64 {
	if latencyUs <= 0 || cts <= 0 {
		return 0
	}
	return 1e6 / (latencyUs * float64(cts))
}
