package demo

import "testing"

func TestDemoIsCorrect(t *testing.T) {
	s, err := Run(nil, "insecure-test", 3)
	if err != nil {
		t.Fatal(err)
	}
	if !s.BitExact || !s.Correct || s.MaxError > 1e-4 || s.MicroOps == 0 {
		t.Fatalf("demo summary %+v", s)
	}
}
