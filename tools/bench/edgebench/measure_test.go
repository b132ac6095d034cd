package edgebench

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/rise/edge"
)

// One measured row on the N = 4096 preset (the benchmark's): every path
// present (the main one first), the paper's frame counts (30 bits per slot:
// 61,440 bits per ciphertext, so QQVGA takes 3 ciphertexts and QVGA 10),
// and Lattigo's ratios computed from the figures.
func TestMeasure(t *testing.T) {
	p, err := edge.Preset(4096)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Measure(p, edge.PathFly, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.N != 4096 || r.Limbs != len(p.Q) || r.Path != edge.PathFly || r.CtsQQVGA != 3 || r.CtsQVGA != 10 {
		t.Fatalf("row %+v", r)
	}
	if len(r.Paths) < 2 || r.Paths[0].Path != edge.PathFly || r.Paths[1].Path != edge.PathTable {
		t.Fatalf("paths %+v", r.Paths)
	}
	if r.EncryptMs <= 0 || r.DecryptMs <= 0 || r.SeededEncryptMs <= 0 || r.EncryptTableMs <= 0 || r.FPSQQVGA <= 0 || r.WorkingBytes <= 0 {
		t.Fatalf("a figure was not measured: %+v", r)
	}
	if r.CiphertextBytes < 2*4096*len(p.Q)*4 {
		t.Fatalf("ciphertext of %d bytes", r.CiphertextBytes)
	}
	r.EncryptMs, r.EncryptCPUMs, r.WorkingBytes = 2, 4, 1000
	r.SetLattigo(5, 6, 4000)
	if r.SpeedupWall != 2.5 || r.SpeedupCPU != 1.5 || r.WorkingRatio != 0.25 {
		t.Fatalf("ratios %g %g %g, want 2.5 1.5 0.25", r.SpeedupWall, r.SpeedupCPU, r.WorkingRatio)
	}
}

// Lattigo encrypts the same values under the same primes and reports its
// time and working memory.
func TestMeasureLattigo(t *testing.T) {
	p, _ := edge.Preset(4096)
	r, err := MeasureLattigo(p.N, p.Q, p.LogScale, Values(p.Slots()), 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.EncryptMs <= 0 || r.WorkingBytes <= 0 {
		t.Fatalf("Lattigo figures %+v", r)
	}
}

func TestValues(t *testing.T) {
	v := Values(1002)
	if v[0] != -499.75 || v[999] != 499.25 || v[1000] != -499.75 {
		t.Fatalf("values %g %g %g", v[0], v[999], v[1000])
	}
}
