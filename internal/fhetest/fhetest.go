package fhetest

import (
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"

	"github.com/rosemary-fhe/rosemary/fhe"
)

// BGVParams looks up the named BGV preset and its parameters; a test that
// names a preset that does not exist, or is not BGV, fails here.
func BGVParams(t testing.TB, preset string) (fhe.Preset, bgv.Parameters) {
	t.Helper()
	return lookup(t, preset, fhe.Preset.BGVParameters)
}

// CKKSParams is BGVParams for a CKKS preset.
func CKKSParams(t testing.TB, preset string) (fhe.Preset, ckks.Parameters) {
	t.Helper()
	return lookup(t, preset, fhe.Preset.CKKSParameters)
}

// lookup finds the named preset and makes its parameters of one scheme.
func lookup[P any](t testing.TB, preset string, parameters func(fhe.Preset) (P, error)) (fhe.Preset, P) {
	t.Helper()
	pr, err := fhe.Lookup(preset)
	if err != nil {
		t.Fatal(err)
	}
	params, err := parameters(pr)
	if err != nil {
		t.Fatal(err)
	}
	return pr, params
}

// CKKS is a CKKS key set for one preset with the objects to use it.
// Galois holds the Galois keys generated so far (AddGaloisKeys), keyed by
// Galois element; it is the map itself, so keys added later are seen by
// whoever holds it.
type CKKS struct {
	Preset    fhe.Preset
	Params    ckks.Parameters
	SK        *rlwe.SecretKey
	Relin     *rlwe.RelinearizationKey
	Galois    map[uint64]*rlwe.GaloisKey
	Encoder   *ckks.Encoder
	Encryptor *rlwe.Encryptor
	Decryptor *rlwe.Decryptor

	kg *rlwe.KeyGenerator
}

// NewCKKS looks up the named CKKS preset and generates a secret key and its
// relinearisation key (no Galois keys: see AddGaloisKeys).
func NewCKKS(t testing.TB, preset string) *CKKS {
	t.Helper()
	pr, params := CKKSParams(t, preset)
	kg := rlwe.NewKeyGenerator(params)
	sk := kg.GenSecretKeyNew()
	return &CKKS{
		Preset:    pr,
		Params:    params,
		SK:        sk,
		Relin:     kg.GenRelinearizationKeyNew(sk),
		Galois:    map[uint64]*rlwe.GaloisKey{},
		Encoder:   ckks.NewEncoder(params),
		Encryptor: rlwe.NewEncryptor(params, sk),
		Decryptor: rlwe.NewDecryptor(params, sk),
		kg:        kg,
	}
}

// AddGaloisKeys generates the Galois keys of the elements galEls that c
// does not hold yet.
func (c *CKKS) AddGaloisKeys(galEls ...uint64) {
	for _, g := range galEls {
		if _, ok := c.Galois[g]; !ok {
			c.Galois[g] = c.kg.GenGaloisKeyNew(g, c.SK)
		}
	}
}

// Encode encodes v into the first len(v) slots (the others zero) of a
// plaintext at the given level and the default scale.
func (c *CKKS) Encode(t testing.TB, v []float64, level int) *rlwe.Plaintext {
	t.Helper()
	return c.encode(t, v, level)
}

// EncodeComplex is Encode for complex slot values.
func (c *CKKS) EncodeComplex(t testing.TB, v []complex128, level int) *rlwe.Plaintext {
	t.Helper()
	return c.encode(t, v, level)
}

func (c *CKKS) encode(t testing.TB, v any, level int) *rlwe.Plaintext {
	t.Helper()
	pt := ckks.NewPlaintext(c.Params, level)
	if err := c.Encoder.Encode(v, pt); err != nil {
		t.Fatal(err)
	}
	return pt
}

// Encrypt encrypts pt under the secret key.
func (c *CKKS) Encrypt(t testing.TB, pt *rlwe.Plaintext) *rlwe.Ciphertext {
	t.Helper()
	ct, err := c.Encryptor.EncryptNew(pt)
	if err != nil {
		t.Fatal(err)
	}
	return ct
}

// Decrypt decrypts ct and decodes the real parts of all its slots.
func (c *CKKS) Decrypt(t testing.TB, ct *rlwe.Ciphertext) []float64 {
	t.Helper()
	out := make([]float64, c.Params.MaxSlots())
	c.decode(t, ct, out)
	return out
}

// DecryptComplex decrypts ct and decodes all its slots.
func (c *CKKS) DecryptComplex(t testing.TB, ct *rlwe.Ciphertext) []complex128 {
	t.Helper()
	out := make([]complex128, c.Params.MaxSlots())
	c.decode(t, ct, out)
	return out
}

func (c *CKKS) decode(t testing.TB, ct *rlwe.Ciphertext, out any) {
	t.Helper()
	if err := c.Encoder.Decode(c.Decryptor.DecryptNew(ct), out); err != nil {
		t.Fatal(err)
	}
}
