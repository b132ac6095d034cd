// Package nets generates the linear-layer shapes of the networks the
// OptiPrime evaluation uses — ResNet-18, ResNet-50, VGG-16 and MobileNetV2
// on ImageNet (224×224×3) and the linear layers of BERT-base as 1×1
// convolutions — and counts their cost under each protocol by building the
// real optiprime/linear plan of every layer (the same tiling, packing, schedule
// and wire sizes the protocols execute), not by separate formulas.
//
// Nonlinear layers (ReLU, pooling, softmax, GELU, LayerNorm) and the
// ciphertext-ciphertext attention products of BERT are not linear layers
// with server weights and are not counted here.
package nets
