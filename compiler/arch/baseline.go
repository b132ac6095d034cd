package arch

import (
	"embed"
	"errors"
	"fmt"
	"sort"
)

// The CPU baseline's kernel timings are a measurement, not a hardware
// description, so they live beside the presets rather than in one.
//
//go:embed baselines/cpu.json
var baselineFS embed.FS

// CPUBaseline is the CPU system's calibration: the time of one kernel over
// one RNS limb of 2^CalibLogN coefficients, single-threaded, per prime
// width, with the power charged per busy core. Source says where every
// figure comes from.
type CPUBaseline struct {
	Name        string           `json:"name"`
	Description string           `json:"description"`
	CalibLogN   int              `json:"calib_log_n"`
	Tables      []CPUKernelTable `json:"tables"`
	CorePowerW  float64          `json:"core_power_w"`
	Source      string           `json:"source"`
}

// CPUKernelTable holds the per-limb kernel times, in nanoseconds, for
// parameter sets whose largest prime has at most MaxPrimeBits bits.
type CPUKernelTable struct {
	MaxPrimeBits int                `json:"max_prime_bits"`
	Ns           map[string]float64 `json:"ns"`
	Source       string             `json:"source"`
}

// CPU loads the embedded CPU baseline.
func CPU() (*CPUBaseline, error) {
	data, err := baselineFS.ReadFile("baselines/cpu.json")
	if err != nil {
		return nil, fmt.Errorf("arch: cpu baseline: %w", err)
	}
	var b CPUBaseline
	if err := decodeStrict(data, &b); err != nil {
		return nil, fmt.Errorf("arch: cpu baseline: %w", err)
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	sort.Slice(b.Tables, func(i, j int) bool { return b.Tables[i].MaxPrimeBits < b.Tables[j].MaxPrimeBits })
	return &b, nil
}

// Validate checks that every compute kernel has a positive time in every
// table and that the sources are given.
func (b *CPUBaseline) Validate() error {
	if b.CalibLogN < 1 || b.CalibLogN > 20 {
		return fmt.Errorf("arch: cpu baseline: calib_log_n %d outside 1..20", b.CalibLogN)
	}
	if len(b.Tables) == 0 || b.Source == "" || !(b.CorePowerW > 0) {
		return errors.New("arch: cpu baseline: needs tables, a positive core_power_w and a source")
	}
	for _, t := range b.Tables {
		if t.MaxPrimeBits < 1 || t.MaxPrimeBits > 64 || t.Source == "" {
			return fmt.Errorf("arch: cpu baseline: table of %d-bit primes: bad width or no source", t.MaxPrimeBits)
		}
		for name, ns := range t.Ns {
			k, err := ParseKernel(name)
			if err != nil || k.IsMemory() {
				return fmt.Errorf("arch: cpu baseline: table of %d-bit primes: %q is not a compute kernel", t.MaxPrimeBits, name)
			}
			if !(ns > 0) {
				return fmt.Errorf("arch: cpu baseline: table of %d-bit primes: %s time %g", t.MaxPrimeBits, name, ns)
			}
		}
		for _, k := range Kernels() {
			if _, ok := t.Ns[k.String()]; !ok && !k.IsMemory() {
				return fmt.Errorf("arch: cpu baseline: table of %d-bit primes has no %s", t.MaxPrimeBits, k)
			}
		}
	}
	return nil
}

// Kernels returns the table for parameters whose largest prime has maxBits
// bits (the narrowest table that covers it) keyed by kernel.
func (b *CPUBaseline) Kernels(maxBits int) (map[Kernel]float64, error) {
	for _, t := range b.Tables {
		if maxBits <= t.MaxPrimeBits {
			m := make(map[Kernel]float64, len(t.Ns))
			for name, ns := range t.Ns {
				k, err := ParseKernel(name)
				if err != nil {
					return nil, err
				}
				m[k] = ns
			}
			return m, nil
		}
	}
	return nil, fmt.Errorf("arch: cpu baseline: no table for %d-bit primes", maxBits)
}
