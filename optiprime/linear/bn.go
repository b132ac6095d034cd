package linear

import "fmt"

// FuseBatchNorm folds a quantized batch normalization y = scale⊙z + shift,
// applied after a convolution z = conv(x; w) + bias, into the convolution:
// w'[o] = scale[o]·w[o] and bias'[o] = scale[o]·bias[o] + shift[o], all mod
// 2^logT (the fixed-point rescaling that follows is the truncation protocol's
// job). bias may be nil (zero).
func FuseBatchNorm(s ConvShape, w, bias, scale, shift []uint64, logT int) (wf, bf []uint64, err error) {
	if len(w) != s.WeightLen() || len(scale) != s.Co || len(shift) != s.Co || (bias != nil && len(bias) != s.Co) {
		return nil, nil, fmt.Errorf("linear: batch norm: sizes w=%d scale=%d shift=%d bias=%d for shape %+v",
			len(w), len(scale), len(shift), len(bias), s)
	}
	if logT < 1 || logT > 64 {
		return nil, nil, fmt.Errorf("linear: batch norm: bad ℓ=%d", logT)
	}
	mask := ^uint64(0)
	if logT < 64 {
		mask = uint64(1)<<uint(logT) - 1
	}
	per := s.Ci * s.Kh * s.Kw
	wf = make([]uint64, len(w))
	bf = make([]uint64, s.Co)
	for o := 0; o < s.Co; o++ {
		for k := 0; k < per; k++ {
			wf[o*per+k] = (scale[o] * w[o*per+k]) & mask
		}
		var b uint64
		if bias != nil {
			b = bias[o]
		}
		bf[o] = (scale[o]*b + shift[o]) & mask
	}
	return wf, bf, nil
}
