package crosscheck

import (
	"testing"
)

func TestBitExactWithLattigo(t *testing.T) {
	for _, preset := range []string{"insecure-test", "insecure-test-bgv", "ckks-14", "bgv-14"} {
		env, err := NewEnv(preset)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range Ops {
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
