package crosscheck

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/fhe"
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
				ops = append(ops, lower.OpPMultCompact)
			} else {
				ops = append(ops, ir.OpModRaise) // level 0 raised to this level
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
	r := lower.RingOf(env.Params)
	for _, k := range []int{0, 1, 5, -1, -7, 1023, 1 << 20} {
		if g, w := r.GaloisElement(k), env.Params.GaloisElement(k); g != w {
			t.Fatalf("rotation %d: %d, Lattigo %d", k, g, w)
		}
	}
	if r.ConjugateElement() != env.Params.GaloisElementOrderTwoOrthogonalSubgroup() {
		t.Fatal("conjugation element differs")
	}
}

// TestRaisedDecryptionCatchesAWrongLift: a ModRaise that lifts the NTT
// values (forgetting the INTT) leaves q_0·I with I spread over about q_1,
// which the decryption check refuses; the right lift passes.
func TestRaisedDecryptionCatchesAWrongLift(t *testing.T) {
	env, err := NewEnv("insecure-test")
	if err != nil {
		t.Fatal(err)
	}
	m := env.randomMessage()
	ct, err := env.encrypt(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	top := env.Params.MaxLevel()
	good, err := env.modUp(ct, top)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := env.raisedDecryptsTo(good, m); err != nil || !ok {
		t.Fatalf("the centered lift does not decrypt: %v %v", ok, err)
	}
	bad := ct.CopyNew()
	bad.Resize(bad.Degree(), top)
	rq := env.Params.RingQ().AtLevel(top)
	q0 := rq.SubRings[0].Modulus
	for _, p := range bad.Value { // limb 0 is in NTT form: lifting it as it is is wrong
		for i := 1; i <= top; i++ {
			qi := rq.SubRings[i].Modulus
			for j, v := range p.Coeffs[0] {
				if v >= q0>>1 {
					p.Coeffs[i][j] = (qi - (q0-v)%qi) % qi
				} else {
					p.Coeffs[i][j] = v % qi
				}
			}
		}
	}
	if ok, err := env.raisedDecryptsTo(bad, m); err != nil || ok {
		t.Fatalf("a lift of the NTT values passed the decryption check: %v %v", ok, err)
	}
}

// TestBitExactLogN16: every operation, ModRaise included, at ckks-16 (the
// preset behind the whole-operation speed figures), top level.
func TestBitExactLogN16(t *testing.T) {
	if testing.Short() {
		t.Skip("logN 16 keys take seconds; run without -short")
	}
	env, err := NewEnv("ckks-16")
	if err != nil {
		t.Fatal(err)
	}
	seen := false
	for _, op := range env.Ops() {
		r := env.Check(op)
		seen = seen || op == ir.OpModRaise
		if r.Error != "" || !r.BitExact || !r.Decrypts || r.LogN != 16 {
			t.Errorf("ckks-16 %s: logN=%d bitexact=%v decrypts=%v err=%s", op, r.LogN, r.BitExact, r.Decrypts, r.Error)
		}
	}
	if !seen {
		t.Error("ModRaise is not among the checked operations")
	}
}

// TestBootstrapBitExact: a whole bootstrapping on the interpreter equals
// Lattigo's and decrypts — logN 10 with full and sparse slots, logN 11 and
// (without -short) 12 with full slots.
func TestBootstrapBitExact(t *testing.T) {
	cases := [][2]int{{10, 9}, {10, 6}, {11, 10}}
	if !testing.Short() {
		cases = append(cases, [2]int{12, 11})
	}
	for _, c := range cases {
		r := CheckBootstrap(c[0], c[1])
		if r.Error != "" || !r.BitExact || !r.Decrypts || r.MicroOps == 0 {
			t.Errorf("logN %d %s: bitexact=%v decrypts=%v micro-ops=%d err=%s", r.LogN, r.Op, r.BitExact, r.Decrypts, r.MicroOps, r.Error)
		}
	}
}
