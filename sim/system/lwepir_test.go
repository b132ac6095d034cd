package system

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler/workload"
)

// pir-lwe on Rosemary reads from flash exactly what the device stores: the
// 4 GiB byte matrix (64 blocks of 2048 limbs of 32 KiB, one page each) and
// the 2048 hint diagonals of 2 limbs of 8192 32-bit words (64 KiB); over
// PCIe go the 2 MiB query vector, the 128 KiB encrypted secret, the 32 KiB
// column and the 64 KiB hint ciphertext (rescaled to one limb). The scan
// is flash-bound: 4.1 GiB over the 16 × 2.4 GB/s channels, while the
// engine's LWEMACs take 64 × 2048 × 16 cycles (2.1 ms at 1 GHz). The other
// systems run it too.
func TestLWEPIRFullScale(t *testing.T) {
	a := preset(t, "rosemary")
	p, err := workload.Program("pir-lwe")
	if err != nil {
		t.Fatal(err)
	}
	plan := compile(t, p, a, "full")
	res := run(t, plan, a, Rosemary, Options{})
	r := res.Report
	if r.NANDBytes != 1<<32+2048*65536 {
		t.Errorf("flash read %d B, want %d (matrix + diagonals)", r.NANDBytes, 1<<32+2048*65536)
	}
	if r.PCIeBytes != 2097152+131072+32768+65536 {
		t.Errorf("PCIe %d B, want %d", r.PCIeBytes, 2097152+131072+32768+65536)
	}
	u := r.Utilization
	if u.NAND < 0.95 || u.Engine > 0.05 || u.Host != 0 {
		t.Errorf("utilization %+v: want NAND-bound, engine below 5%%, nothing on the host", u)
	}
	if res.Detail.EngineCycles < 64*2048*16 {
		t.Errorf("engine %d cycles, fewer than the scan's %d", res.Detail.EngineCycles, 64*2048*16)
	}
	if lower, upper := float64(1<<32+2048*65536)/38.4e9, 1.05*float64(1<<32+2048*65536)/38.4e9; r.LatencyS < lower || r.LatencyS > upper {
		t.Errorf("latency %.4g s outside [%.4g, %.4g] (flash time)", r.LatencyS, lower, upper)
	}
	for _, s := range []System{HA, CPU, INSPIRE} {
		o := run(t, plan, a, s, Options{}).Report
		if !(o.LatencyS >= r.LatencyS*0.99) {
			t.Errorf("%v: %.4g s, faster than Rosemary's %.4g s", s, o.LatencyS, r.LatencyS)
		}
		t.Logf("%-8s %.4g s, NAND %.1f%%, engine %.1f%%, host %.1f%%, PCIe %.1f%%", s, o.LatencyS,
			100*o.Utilization.NAND, 100*o.Utilization.Engine, 100*o.Utilization.Host, 100*o.Utilization.PCIe)
	}
}
