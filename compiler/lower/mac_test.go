package lower

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/isa"
)

// One LWE scan block at N = 2^13 (lwepir's hint ring): 2048 LWEMACs, one
// per matrix limb of four columns; the query limb, the accumulator and the
// 2048 matrix limbs loaded; the accumulator stored. pir-lwe's scan is 64 such
// blocks.
func TestLWEScanProfile(t *testing.T) {
	pf := NewProfiler()
	prof, err := pf.Of(ir.OpLWEScan, "lwepir-hint", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[arch.Kernel]int64{arch.LWEMAC: 2048, arch.Load: 2050, arch.Store: 1}
	if len(prof.Kernels) != len(want) {
		t.Errorf("kernels %v, want %v", prof.Kernels, want)
	}
	for k, c := range want {
		if prof.Kernels[k] != c {
			t.Errorf("%v: %d, want %d", k, prof.Kernels[k], c)
		}
	}
	if len(prof.InputLimbs) != 2 || prof.InputLimbs[0] != 1 || prof.InputLimbs[1] != 2048 || prof.OutputLimbs != 1 || prof.KeyLimbs != 0 || prof.N != 8192 {
		t.Errorf("profile %+v", prof)
	}
	b := ir.NewBuilder("scan", "lwepir-hint")
	b.Output("column", b.LWEScan(b.LWEQuery("query", 64), b.StoredLWEMatrix("database", 13, 64)))
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, inst, err := pf.NodeWork(p, p.Nodes[2]); err != nil || inst != 64 {
		t.Errorf("NodeWork: %d instances (%v), want 64 blocks", inst, err)
	}
	// The mProgram: the query's words are named in groups of four, group g
	// with matrix limb g.
	low, err := Op(ir.OpLWEScan, &Context{Scheme: "bgv", Ring: mustRing(t, pf, "lwepir-hint")})
	if err != nil {
		t.Fatal(err)
	}
	macs := 0
	for _, in := range low.Program.Code {
		if in.Op == isa.OpLWEMAC {
			if in.B.Limb() != macs {
				t.Fatalf("LWEMAC %d names word group %d", macs, in.B.Limb())
			}
			macs++
		}
	}
	if macs != 2048 {
		t.Errorf("%d LWEMACs", macs)
	}
}

func mustRing(t *testing.T, pf *Profiler, preset string) Ring {
	t.Helper()
	r, _, err := pf.Ring(preset)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
