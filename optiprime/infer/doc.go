// Package infer is the two-party private inference of the OptiPrime demo:
// the client holds an image, the server holds a quantized model (package
// model); the client learns the logits and nothing else about the weights
// beyond the public architecture, the server learns nothing about the image
// (semi-honest security).
//
// One session runs over one transport.Conn:
//
//  1. The client announces the protocol version, the linear-layer protocol
//     (cheetah, optiencode or optiencode-bsgs) and log N; the server answers
//     with the public model (layer shapes, scales, ℓ; no weights). Both
//     derive the same linear.Plan per layer.
//  2. The client sends its public key and the Galois keys the plans need,
//     seeded (cheetah.MarshalSeededGaloisKey); the server regenerates and
//     checks them, encodes its weights (PrepareWeights) and
//     replies ready. Both set up OT extension (nonlinear.NewParty).
//  3. Per image: the client's input share is the encoded image, the
//     server's is zero. For each layer the client sends its encrypted share
//     (EncryptInput); the server evaluates W·X − R + bias (EvaluatePrepared)
//     and returns the re-randomized result, so each party ends with an
//     additive share mod 2^ℓ of the accumulator. Between layers both run
//     truncation by the layer's weight scale and ReLU (package nonlinear);
//     after the last layer the server opens its logit shares to the client.
//
// Frame types 0x40–0x4f are this package's (0x4f aborts a session with a
// reason); ot and nonlinear use 0x20–0x3f on the same connection. Every
// peer message is size-checked by the transport and decoded with explicit
// bounds (DecodeMessages, fuzzed); malformed keys end the session with an
// error.
//
// Stats records per layer the linear and nonlinear traffic as measured on
// the connection and each party's wall-clock time per phase, plus the plan's
// own counters (ciphertexts, automorphisms, products).
//
// The result agrees with model.Quantized.Forward except for the truncation
// protocol's possible −1 per truncation, which Quantized.LogitErrorBound
// bounds.
package infer
