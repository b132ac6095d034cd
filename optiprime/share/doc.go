// Package share is two-party additive secret sharing over the ring Z_{2^ℓ},
// 1 ≤ ℓ ≤ 64, as used between the HE linear layers and the OT-based nonlinear
// layers of a Cheetah-style private-inference session (Cheetah uses ℓ = 37
// for its CNNs and ℓ = 44 for deeper nets).
//
// A value x ∈ Z_{2^ℓ} is held as x0 + x1 ≡ x (mod 2^ℓ); a share alone is a
// uniformly random ℓ-bit value. Values are kept reduced in uint64 words.
// Signed integers use two's complement in ℓ bits, so [-2^{ℓ-1}, 2^{ℓ-1}) is
// representable. Reals are fixed point with Scale fractional bits (12, as in
// Cheetah): Encode(v) = round(v·2^12) in two's complement.
//
// Randomness comes from a PRG: SHAKE128 keyed by a 32-byte seed from
// crypto/rand. Pack and Unpack move slices of ℓ-bit values to and from the
// wire with no padding between values.
package share
