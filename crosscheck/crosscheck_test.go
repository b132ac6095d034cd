package crosscheck

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/ir"
)

func TestBitExactWithLattigo(t *testing.T) {
	for _, preset := range []string{"insecure-test", "insecure-test-bgv", "ckks-14", "bgv-14"} {
		env, err := NewEnv(preset)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range env.Ops() {
			r := env.Check(op)
			if r.Error != "" || !r.BitExact || !r.Decrypts {
				t.Errorf("%s %s (logN=%d dnum=%d): bitexact=%v decrypts=%v err=%s", preset, op, r.LogN, r.DNum, r.BitExact, r.Decrypts, r.Error)
			}
		}
	}
}

func TestTamperedKeyIsCaught(t *testing.T) {
	env, err := NewEnv("insecure-test")
	if err != nil {
		t.Fatal(err)
	}
	env.tamper = true
	r := env.Check("HRot")
	if r.Error != "" || r.BitExact {
		t.Fatalf("a corrupted key still matched Lattigo: %+v", r)
	}
}

// Every level exercises digits of every size, including the one-prime digit
// Lattigo lifts by its centered representative (e.g. level 2 with α = 2), and
// pir-bgv has α = 1 (single-prime digits only).
func TestBitExactAtEveryLevel(t *testing.T) {
	for _, preset := range []string{"insecure-test", "insecure-test-bgv", "pir-bgv"} {
		env, err := NewEnv(preset)
		if err != nil {
			t.Fatal(err)
		}
		for level := env.Params.MaxLevel(); level >= 1; level-- {
			ops := []ir.Op{ir.OpHRot, "HMult+Relinearize", ir.OpConjugate, ir.OpRescale, ir.OpCMult}
			if env.Preset.Scheme == fhe.BGV {
				ops = append(ops, compiler.OpPMultCompact)
			}
			for _, op := range ops {
				r := env.CheckAt(op, level)
				if r.Error != "" || !r.BitExact || !r.Decrypts {
					t.Errorf("%s %s level %d: bitexact=%v decrypts=%v err=%s", preset, op, level, r.BitExact, r.Decrypts, r.Error)
				}
			}
		}
	}
}

func TestGaloisElementsMatchLattigo(t *testing.T) {
	env, err := NewEnv("insecure-test")
	if err != nil {
		t.Fatal(err)
	}
	r := compiler.RingOf(env.Params)
	for _, k := range []int{0, 1, 5, -1, -7, 1023, 1 << 20} {
		if g, w := r.GaloisElement(k), env.Params.GaloisElement(k); g != w {
			t.Fatalf("rotation %d: %d, Lattigo %d", k, g, w)
		}
	}
	if r.ConjugateElement() != env.Params.GaloisElementOrderTwoOrthogonalSubgroup() {
		t.Fatal("conjugation element differs")
	}
}
