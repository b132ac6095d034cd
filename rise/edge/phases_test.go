package edge

import (
	"reflect"
	"testing"
)

// EncryptPhased and DecryptPhased run Encrypt's and Decrypt's steps: with the
// same seed they give the same ciphertext words and the same slots, and
// they mark every phase in order, the per-limb phases once per limb.
func TestPhasedMatchesEncryptDecrypt(t *testing.T) {
	for _, n := range []int{1024, 4096} {
		for _, path := range []NTTPath{PathFly, PathTable} {
			p, _ := Preset(n)
			ctx, err := NewContext(p, WithPath(path))
			if err != nil {
				t.Fatal(err)
			}
			sk, pk, err := ctx.GenKeys()
			if err != nil {
				t.Fatal(err)
			}
			var seed [SeedSize]byte
			seed[0] = byte(n >> 8)
			a, _ := NewEncryptorSeed(ctx, pk, seed)
			b, _ := NewEncryptorSeed(ctx, pk, seed)
			vals := testValues(n / 2)
			scale := float64(uint64(1) << p.LogScale)
			want, got := ctx.NewCiphertext(), ctx.NewCiphertext()
			if err := a.Encrypt(vals, scale, want); err != nil {
				t.Fatal(err)
			}
			var marks []Phase
			if err := b.EncryptPhased(vals, scale, got, func(ph Phase) { marks = append(marks, ph) }); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("N=%d %s: EncryptPhased's ciphertext differs from Encrypt's", n, path)
			}
			wantMarks := []Phase{PhaseEncode, PhaseSample}
			for range p.Q {
				wantMarks = append(wantMarks, PhaseLift, PhaseNTT, PhaseProduct)
			}
			dec, _ := NewDecryptor(ctx, sk)
			outA, outB := make([]float64, n/2), make([]float64, n/2)
			if err := dec.Decrypt(want, outA); err != nil {
				t.Fatal(err)
			}
			if err := dec.DecryptPhased(got, outB, func(ph Phase) { marks = append(marks, ph) }); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(outA, outB) {
				t.Fatalf("N=%d %s: DecryptPhased's slots differ from Decrypt's", n, path)
			}
			for range dec.nl {
				wantMarks = append(wantMarks, PhaseDecProduct, PhaseINTT)
			}
			wantMarks = append(wantMarks, PhaseCRT, PhaseDecode)
			if !reflect.DeepEqual(marks, wantMarks) {
				t.Fatalf("N=%d %s: marks %v, want %v", n, path, marks, wantMarks)
			}
			tol := float64(1<<17) / scale // the encryption noise in a slot (tens of thousands) over Δ
			for j := range outB {
				if d := outB[j] - vals[j]; d > tol || d < -tol {
					t.Fatalf("N=%d %s: slot %d decrypts to %v, want %v", n, path, j, outB[j], vals[j])
				}
			}
		}
	}
}

func TestPhaseNames(t *testing.T) {
	for _, p := range Phases {
		q, err := ParsePhase(p.String())
		if err != nil || q != p {
			t.Fatalf("%v round-trips to %v, %v", p, q, err)
		}
	}
	if _, err := ParsePhase("fft"); err == nil {
		t.Fatal("unknown phase accepted")
	}
}
