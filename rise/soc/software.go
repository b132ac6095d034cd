package soc

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/rise/edge"
)

// Software is a baseline's core cycles per phase at one parameter point:
// measured instructions × CPI plus the streaming-miss term (measured
// baselines), or the per-operation first-principles costs (derived).
type Software struct {
	Name   string                 `json:"name"`
	Cycles map[edge.Phase]float64 `json:"-"`
	Instr  map[edge.Phase]float64 `json:"-"` // measured instructions (empty for derived)
	// DecryptFrom names the software whose decryption phases are used
	// (SEAL-Embedded has no decryptor: ours).
	DecryptFrom string `json:"decrypt_from"`
}

func (s Software) sum(phs ...edge.Phase) float64 {
	t := 0.0
	for _, p := range phs {
		t += s.Cycles[p]
	}
	return t
}

// phaseOps splits Counts' operations by edge.Phase, for the miss term and
// the derived costs.
func phaseOps(p edge.Params) (map[edge.Phase]OpCounts, error) {
	enc, dec, err := Counts(p)
	if err != nil {
		return nil, err
	}
	N, fn := float64(p.N), float64(dec.Crypto.Limbs)
	c := enc.Crypto
	d := dec.Crypto
	return map[edge.Phase]OpCounts{
		edge.PhaseEncode:     enc.Codec,
		edge.PhaseSample:     enc.Sample,
		edge.PhaseLift:       {Lifts: c.Lifts, ReduceSigned: c.ReduceSigned},
		edge.PhaseNTT:        {Butterflies: c.Butterflies, NTTTwiddles: c.NTTTwiddles, NTTs: c.NTTs},
		edge.PhaseProduct:    {ModMul: c.ModMul, ModAdd: c.ModAdd},
		edge.PhaseDecProduct: {ModMul: N * fn, ModAdd: d.ModAdd},
		edge.PhaseINTT:       {Butterflies: d.Butterflies, NTTTwiddles: d.NTTTwiddles, ModMul: N * fn, NTTs: d.NTTs},
		edge.PhaseCRT:        {CRTModMul: dec.Codec.CRTModMul, CRTWide: dec.Codec.CRTWide, FloatCoeffs: dec.Codec.FloatCoeffs},
		edge.PhaseDecode:     {FFTButterflies: dec.Codec.FFTButterflies, FFTTwiddles: dec.Codec.FFTTwiddles, SlotMoves: dec.Codec.SlotMoves},
	}, nil
}

// DerivedSoftware is our encryptor under the first-principles per-operation
// costs (the model before measurement, kept to report beside it).
func DerivedSoftware(p edge.Params, core CoreCosts) (Software, error) {
	ops, err := phaseOps(p)
	if err != nil {
		return Software{}, err
	}
	s := Software{Name: BaselineDerived, Cycles: map[edge.Phase]float64{}, Instr: map[edge.Phase]float64{}, DecryptFrom: BaselineDerived}
	for ph, o := range ops {
		s.Cycles[ph] = core.Cycles(o, p.N)
	}
	return s, nil
}

// MeasuredSoftware charges each phase its measured instructions × core.CPI
// plus the streaming misses of the phase's memory traffic (core.Misses).
// Decryption phases come from dec when pt has none.
func MeasuredSoftware(p edge.Params, core CoreCosts, prof Profile, decProf Profile) (Software, error) {
	if !(core.CPI > 0) {
		return Software{}, fmt.Errorf("rise: CPI %v must be positive", core.CPI)
	}
	ops, err := phaseOps(p)
	if err != nil {
		return Software{}, err
	}
	pt, err := prof.Point(p.N)
	if err != nil {
		return Software{}, err
	}
	if pt.Limbs != len(p.Q) {
		return Software{}, fmt.Errorf("rise: %s measured N=%d with %d limbs, the point has %d", prof.Software, p.N, pt.Limbs, len(p.Q))
	}
	s := Software{Name: prof.Software, Cycles: map[edge.Phase]float64{}, Instr: map[edge.Phase]float64{}, DecryptFrom: prof.Software}
	dpt := pt
	if !pt.HasDecrypt() {
		if dpt, err = decProf.Point(p.N); err != nil {
			return Software{}, err
		}
		if !dpt.HasDecrypt() {
			return Software{}, fmt.Errorf("rise: %s at N=%d has no decryption phases", decProf.Software, p.N)
		}
		s.DecryptFrom = decProf.Software
	}
	for _, ph := range encPhases {
		s.Instr[ph] = pt.Instr(ph)
	}
	for _, ph := range decPhases {
		s.Instr[ph] = dpt.Instr(ph)
	}
	for ph, in := range s.Instr {
		s.Cycles[ph] = in*core.CPI + core.Misses(ops[ph], p.N)
	}
	return s, nil
}
