package opticomp

import (
	"crypto/rand"
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/nets"
)

// MeasureNetwork measures plaintext compression over a network's layers
// under a protocol, with random non-zero weights within the options' weight
// bound (the sparsity pattern of the plaintexts depends only on the layout,
// so this is representative of any dense model; pass real weights to
// MeasureLayer for a trained one). sample limits the plaintexts compressed
// per layer (0: all).
func MeasureNetwork(n nets.Network, proto linear.Protocol, params cheetah.Parameters, opt linear.Options, sample int) (LayerStats, error) {
	var tot LayerStats
	for _, l := range n.Layers {
		pl, err := linear.NewPlan(proto, params, l.Shape, opt)
		if err != nil {
			return tot, fmt.Errorf("opticomp: %s %s: %w", n.Name, l.Name, err)
		}
		w, err := randomWeights(l.Shape.WeightLen(), pl.Opt.WeightBits, pl.Opt.LogT)
		if err != nil {
			return tot, err
		}
		st, err := MeasureLayer(pl, w, 0, sample)
		if err != nil {
			return tot, fmt.Errorf("opticomp: %s %s: %w", n.Name, l.Name, err)
		}
		k := int64(l.Count)
		tot.Plaintexts += st.Plaintexts * l.Count
		tot.Sampled += st.Sampled
		tot.EvalBytes += st.EvalBytes * k
		tot.CoeffBytes += st.CoeffBytes * k
		tot.CompressedBytes += st.CompressedBytes * k
	}
	if tot.CompressedBytes > 0 {
		tot.RatioVsEval = float64(tot.EvalBytes) / float64(tot.CompressedBytes)
		tot.RatioVsCoeff = float64(tot.CoeffBytes) / float64(tot.CompressedBytes)
	}
	tot.SavedBytes = tot.EvalBytes - tot.CompressedBytes
	return tot, nil
}

// randomWeights draws non-zero weights with centered values in
// [-2^(wb-1), 2^(wb-1)) \ {0}, mod 2^l.
func randomWeights(n, wb, l int) ([]uint64, error) {
	buf := make([]byte, 8*n)
	if _, err := rand.Read(buf); err != nil {
		return nil, fmt.Errorf("opticomp: weights: %w", err)
	}
	w := make([]uint64, n)
	for i := range w {
		var v uint64
		for k := 0; k < 8; k++ {
			v |= uint64(buf[8*i+k]) << uint(8*k)
		}
		v &= 1<<uint(wb) - 1
		c := int64(v) - int64(1)<<uint(wb-1)
		if c == 0 {
			c = 1
		}
		w[i] = uint64(c) & (1<<uint(l) - 1)
	}
	return w, nil
}
