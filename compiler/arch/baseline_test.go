package arch

import "testing"

// The embedded CPU baseline carries the measured figures unchanged: the
// simulated CPU system depends on them.
func TestCPUBaseline(t *testing.T) {
	b, err := CPU()
	if err != nil {
		t.Fatal(err)
	}
	if b.CalibLogN != 13 || b.CorePowerW != 350.0/32 {
		t.Fatalf("calib_log_n %d, core power %g W", b.CalibLogN, b.CorePowerW)
	}
	ifma, err := b.Kernels(49)
	if err != nil {
		t.Fatal(err)
	}
	wide, err := b.Kernels(50)
	if err != nil {
		t.Fatal(err)
	}
	if ifma[NTT] != 7947 || ifma[BConv] != 31737.0/32 || ifma[ModSub] != ifma[ModAdd] || len(ifma) != 9 {
		t.Fatalf("49-bit table %v", ifma)
	}
	if wide[NTT] != 12729 || wide[INTT] != 15418 || wide[BConv] != 102012.0/32 || len(wide) != 9 {
		t.Fatalf("wide table %v", wide)
	}
	// LWEMAC: 32 KiB of matrix at the measured 16.14 GB/s, in both tables.
	if ifma[LWEMAC] != 2030 || wide[LWEMAC] != 2030 {
		t.Fatalf("LWEMAC %g / %g ns, want 2030", ifma[LWEMAC], wide[LWEMAC])
	}
	if w60, _ := b.Kernels(60); w60[ModMul] != 2504 {
		t.Fatalf("60-bit primes: MODMUL %g ns, want 2504", w60[ModMul])
	}
	if _, err := b.Kernels(65); err == nil {
		t.Fatal("65-bit primes accepted")
	}
	bad := *b
	bad.Tables = []CPUKernelTable{{MaxPrimeBits: 49, Ns: map[string]float64{"NTT": 1}, Source: "x"}}
	if err := bad.Validate(); err == nil {
		t.Fatal("a table without every compute kernel accepted")
	}
}
