package system

import (
	"fmt"
	"math/bits"

	"github.com/rosemary-fhe/rosemary/arch"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// CPU baseline calibration: the time of one kernel over one RNS limb of
// 2^13 coefficients with Rosemary's own rns package, single-threaded.
//
// Measured here on 2026-11-29, machine: 2-core "AMD EPYC" virtual machine
// with AVX-512 and AVX-512 IFMA, shared with other jobs (load average 4-6),
// Go 1.26. The figures below are the medians of 200 calls on one locked OS
// thread reported at ~23:50 UTC by rns.BenchKernels(13, 200) (since moved
// to rns/rnsbench). They were cross-checked at ~23:58 UTC with this
// package's benchmark,
//
//	go test ./sim/system -run XXX -bench CPUCalibration -benchtime 2000x -cpu 1 -count 2
//
// which gave figures within 15% of them (e.g. NTT 8.7-9.6 us / 13.7-14.5
// us, MODMUL 1.22-1.24 us / 2.57-2.98 us, BConv 4->8 36-39 us / 110 us for
// 49- / 60-bit primes; the spread is the machine's load). The 49-bit table
// is the IFMA path (primes below 2^50), the 60-bit table the AVX-512 /
// pure-Go path for larger primes. BConv was timed from 4 limbs to 8 (32
// limb pairs, including the 4 input scalings); the per-pair figure is that
// time / 32. ModSub is taken equal to ModAdd (same kernel shape).
var (
	cpuCalibLogN = 13

	cpuNs49 = map[arch.Kernel]float64{
		arch.NTT: 7947, arch.INTT: 7100, arch.ModMul: 1162, arch.ModMAC: 1482,
		arch.ModAdd: 962, arch.ModSub: 962, arch.Automorph: 942, arch.BConv: 31737.0 / 32,
	}
	cpuNs60 = map[arch.Kernel]float64{
		arch.NTT: 12729, arch.INTT: 15418, arch.ModMul: 2504, arch.ModMAC: 2884,
		arch.ModAdd: 1011, arch.ModSub: 1011, arch.Automorph: 891, arch.BConv: 102012.0 / 32,
	}
)

// CPUCorePowerW is the power charged per busy CPU core: the paper's CPU
// baseline, an AMD Ryzen Threadripper 9970X (Rosemary §Baselines), has a
// 350 W TDP over 32 cores (AMD product specifications; recalled, not
// re-checked here), i.e. 10.9 W per core. Our CPU figures are single-thread
// measurements on this machine's EPYC, so this is an attribution, not a
// measurement.
const CPUCorePowerW = 350.0 / 32

// cpuModel turns kernel counts into CPU time from the calibration table,
// scaled from N = 2^13 by N log N (NTT/INTT) or N (the others).
type cpuModel struct {
	ns    map[arch.Kernel]float64
	cores int
}

func newCPUModel(params string, cores int) (cpuModel, error) {
	p, err := fhe.Lookup(params)
	if err != nil {
		return cpuModel{}, fmt.Errorf("system: cpu model: %w", err)
	}
	if cores < 1 {
		return cpuModel{}, fmt.Errorf("system: cpu model: %d cores", cores)
	}
	maxBits := 0
	for _, b := range append(append([]int(nil), p.LogQ...), p.LogP...) {
		maxBits = max(maxBits, b)
	}
	m := cpuModel{ns: cpuNs60, cores: cores}
	if maxBits < 50 {
		m.ns = cpuNs49
	}
	return m, nil
}

// limbNs is one kernel over one limb of degree n, in nanoseconds.
func (m cpuModel) limbNs(k arch.Kernel, n int) (float64, error) {
	if n < 2 || n&(n-1) != 0 {
		return 0, fmt.Errorf("system: cpu model: N=%d is not a power of two", n)
	}
	if k.IsMemory() {
		return 0, nil
	}
	base, ok := m.ns[k]
	if !ok {
		return 0, fmt.Errorf("system: cpu model: no calibration for %v", k)
	}
	n0 := 1 << cpuCalibLogN
	lg := bits.TrailingZeros(uint(n))
	f := float64(n) / float64(n0)
	if k == arch.NTT || k == arch.INTT {
		f *= float64(lg) / float64(cpuCalibLogN)
	}
	return base * f, nil
}

// seconds is the CPU time of count limb-kernels of each kind, spread over
// the model's cores (perfect scaling assumed).
func (m cpuModel) seconds(kernels map[arch.Kernel]int64, n int, times int64) (float64, error) {
	s := 0.0
	for k, c := range kernels {
		ns, err := m.limbNs(k, n)
		if err != nil {
			return 0, err
		}
		s += ns * float64(c) * float64(times)
	}
	return s / 1e9 / float64(m.cores), nil
}
