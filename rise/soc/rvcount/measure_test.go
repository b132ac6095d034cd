package rvcount

import (
	"context"
	"testing"
)

// Our encryptor measured at N = 1024 (cross-built, run under qemu): every
// phase marked, the driver's decryption check passed (Run fails
// otherwise), and the three forward NTTs cost a plausible number of
// instructions per butterfly.
func TestMeasureEdgeSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("cross build skipped in -short mode")
	}
	tools, err := FindTools(false)
	if err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	q, err := NewQemu(ctx, tools, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ms, err := MeasureEdge(ctx, tools, q, []int{1024})
	if err != nil {
		t.Fatal(err)
	}
	m := ms[0]
	if m.N != 1024 || m.Limbs != 1 || len(m.Phases) != 9 {
		t.Fatalf("measurement %+v", m)
	}
	butterflies := 3.0 * 512 * 10
	if per := float64(m.Phases["ntt"]) / butterflies; per < 5 || per > 60 {
		t.Fatalf("%.1f instructions per NTT butterfly", per)
	}
	var sum uint64
	for _, v := range m.Phases {
		sum += v
	}
	if sum >= m.Total {
		t.Fatalf("phases %d ≥ the whole run %d", sum, m.Total)
	}
}
