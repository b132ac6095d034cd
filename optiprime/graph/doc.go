// Package graph describes the fixed-point networks run end to end by
// package e2e — residual networks (ResNet-18 and ResNet-50 at ImageNet
// shapes, and reduced versions with the same layer types) — and computes
// their plaintext reference.
//
// A Net is a list of operations on CHW tensors of signed fixed-point
// integers (ActScale = 12 fractional bits); value 0 is the input image and
// value i+1 the output of operation i:
//
//	Conv     convolution or fully-connected layer (batch normalization
//	         folded in), accumulator at scale ActScale + Shift
//	Trunc    ⌊x / 2^Shift⌋ (back to ActScale)
//	ReLU     max(x, 0)
//	MaxPool  K×K window, stride, zero padding (exact: its inputs are ReLU
//	         outputs, so zero padding equals −∞ padding)
//	AvgPool  global average: ⌊(Σ x)·Mul / 2^Shift⌋, Mul = round(2^Shift/(H·W))
//	Add      residual sum of two values
//
// Weights are random but seeded (no ImageNet model ships here): He-normal
// convolution weights, batch-normalization parameters calibrated on the
// seeded input image (per-channel mean and variance of that image, so
// activations stay near unit scale through every block, as trained
// batch normalization keeps them) with random γ and β, folded into the
// convolution, then quantized per layer to WeightBits-bit integers with a
// power-of-two scale. The input image is seeded random pixels, normalized.
//
// Reference evaluates a Net in int64 arithmetic exactly as the two-party
// protocol does on shares mod 2^LogT (with exact truncation), and fails
// with a named error if any value leaves the range the protocols need
// (|x| < 2^(LogT−2)), so the private result must equal it bit for bit.
package graph
