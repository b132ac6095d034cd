package system

import (
	"fmt"
	"math/bits"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// The CPU baseline's calibration, the time of one kernel over one RNS limb
// of 2^cpuCalibLogN coefficients with Rosemary's own rns package measured
// single-threaded, lives with its source in arch (baselines/cpu.json): a
// table for primes below 2^50 (the IFMA path) and one for wider primes.
var (
	cpuBaseline  = mustCPUBaseline()
	cpuCalibLogN = cpuBaseline.CalibLogN
	cpuNs49      = mustCPUKernels(49)
	cpuNs60      = mustCPUKernels(60)

	// CPUCorePowerW is the power charged per busy CPU core: the paper's CPU
	// baseline's TDP over its cores (see arch's CPU baseline for the source);
	// an attribution, not a measurement.
	CPUCorePowerW = cpuBaseline.CorePowerW
)

// mustCPUBaseline loads the embedded baseline; it is part of the binary,
// so failing to load it is a build defect.
func mustCPUBaseline() *arch.CPUBaseline {
	b, err := arch.CPU()
	if err != nil {
		panic(err)
	}
	return b
}

func mustCPUKernels(maxBits int) map[arch.Kernel]float64 {
	m, err := cpuBaseline.Kernels(maxBits)
	if err != nil {
		panic(err)
	}
	return m
}

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
