package fhe

import (
	"crypto/rand"
	"encoding/binary"
	"testing"

	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// TestCompactRoundTrip: the compact form of Lattigo-encoded BGV plaintexts
// (batched, at every level) is below t and lifts back to the identical
// plaintext; a ciphertext-like polynomial is refused.
func TestCompactRoundTrip(t *testing.T) {
	pr, err := Lookup("insecure-test-bgv")
	if err != nil {
		t.Fatal(err)
	}
	params, err := pr.BGVParameters()
	if err != nil {
		t.Fatal(err)
	}
	enc := bgv.NewEncoder(params)
	tmod := params.PlaintextModulus()
	vals := make([]uint64, params.MaxSlots())
	var b [8]byte
	for i := range vals {
		if _, err := rand.Read(b[:]); err != nil {
			t.Fatal(err)
		}
		vals[i] = binary.LittleEndian.Uint64(b[:]) % tmod
	}
	for level := 0; level <= params.MaxLevel(); level++ {
		pt := bgv.NewPlaintext(params, level)
		if err := enc.Encode(vals, pt); err != nil {
			t.Fatal(err)
		}
		m, err := CompactBGV(params, pt)
		if err != nil {
			t.Fatalf("level %d: %v", level, err)
		}
		nonzero := 0
		for _, v := range m {
			if v >= tmod {
				t.Fatalf("level %d: coefficient %d ≥ t", level, v)
			}
			if v != 0 {
				nonzero++
			}
		}
		if nonzero < len(m)/2 {
			t.Errorf("level %d: only %d of %d coefficients non-zero", level, nonzero, len(m))
		}
		back := bgv.NewPlaintext(params, level)
		back.MetaData = pt.MetaData.CopyNew()
		if err := LiftCompactBGV(params, m, back); err != nil {
			t.Fatal(err)
		}
		for i := range pt.Value.Coeffs {
			for j, v := range pt.Value.Coeffs[i] {
				if back.Value.Coeffs[i][j] != v {
					t.Fatalf("level %d: limb %d coefficient %d: lifted %d, want %d", level, i, j, back.Value.Coeffs[i][j], v)
				}
			}
		}
		if back.IsBatched != pt.IsBatched || !back.Scale.Equal(pt.Scale) {
			t.Errorf("level %d: metadata changed by the lift", level)
		}
		// Decoding the lifted plaintext gives the values back.
		got := make([]uint64, len(vals))
		if err := enc.Decode(back, got); err != nil {
			t.Fatal(err)
		}
		for i := range vals {
			if got[i] != vals[i] {
				t.Fatalf("level %d: slot %d decodes to %d, want %d", level, i, got[i], vals[i])
			}
		}
	}
	// A random polynomial (not a plaintext) has coefficients above t.
	junk := bgv.NewPlaintext(params, 0)
	for j := range junk.Value.Coeffs[0] {
		junk.Value.Coeffs[0][j] = params.Q()[0] - 1 - uint64(j)
	}
	if _, err := CompactBGV(params, junk); err == nil {
		t.Error("a non-plaintext polynomial was accepted")
	}
	if err := LiftCompactBGV(params, []uint64{1, 2}, bgv.NewPlaintext(params, 0)); err == nil {
		t.Error("a short coefficient vector was accepted")
	}
}
