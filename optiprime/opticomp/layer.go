package opticomp

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/linear"
)

// DefaultSegmentBytes is the segment size used when none is given (a
// 512-bit HBM burst × 4).
const DefaultSegmentBytes = 256

// LayerStats is the plaintext memory traffic of one layer.
type LayerStats struct {
	Plaintexts      int     `json:"plaintexts"`       // distinct weight plaintexts of the layer
	Sampled         int     `json:"sampled"`          // how many were compressed to measure
	EvalBytes       int64   `json:"eval_bytes"`       // baseline: evaluation-domain plaintexts, N·limbs·8 each
	CoeffBytes      int64   `json:"coeff_bytes"`      // coefficient domain, bit-packed at log2 t'
	CompressedBytes int64   `json:"compressed_bytes"` // OptiComp
	RatioVsEval     float64 `json:"ratio_vs_eval"`
	RatioVsCoeff    float64 `json:"ratio_vs_coeff"`
	SavedBytes      int64   `json:"saved_bytes"` // EvalBytes − CompressedBytes
}

// MeasureLayer compresses the layer's real weight plaintexts (the first
// 'sample' of them when sample > 0, extrapolated linearly to all) and
// reports the traffic against streaming evaluation-domain plaintexts.
// Every compressed plaintext is decompressed and checked.
func MeasureLayer(pl *linear.Plan, w []uint64, segBytes, sample int) (LayerStats, error) {
	if segBytes == 0 {
		segBytes = DefaultSegmentBytes
	}
	var st LayerStats
	st.Plaintexts = pl.NumPlaintexts()
	N := pl.Params.N()
	var comp, coeff int64
	err := pl.Plaintexts(w, sample, func(poly []uint64) error {
		data, s, err := Compress(poly, pl.LogTp, segBytes)
		if err != nil {
			return err
		}
		back, err := Decompress(data)
		if err != nil {
			return fmt.Errorf("opticomp: own output rejected: %w", err)
		}
		for i := range back {
			if back[i] != poly[i] {
				return fmt.Errorf("opticomp: decompression differs at %d", i)
			}
		}
		comp += int64(s.CompressedBytes)
		coeff += int64(s.DenseBytes)
		st.Sampled++
		return nil
	})
	if err != nil {
		return st, err
	}
	if st.Sampled == 0 {
		return st, fmt.Errorf("opticomp: layer has no plaintexts")
	}
	scale := float64(st.Plaintexts) / float64(st.Sampled)
	st.CompressedBytes = int64(float64(comp) * scale)
	st.CoeffBytes = int64(float64(coeff) * scale)
	st.EvalBytes = int64(st.Plaintexts) * int64(N) * int64(pl.Params.MaxLevel()+1) * 8
	st.RatioVsEval = float64(st.EvalBytes) / float64(st.CompressedBytes)
	st.RatioVsCoeff = float64(st.CoeffBytes) / float64(st.CompressedBytes)
	st.SavedBytes = st.EvalBytes - st.CompressedBytes
	return st, nil
}
