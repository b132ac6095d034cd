package fpga

import "fmt"

// Config is the accelerator. Sources: the paper names the platform (AMD
// Alveo U55C, §V-A) and the cluster types (§II-B) but no sizes; the HBM
// figures are AMD's (UG1393 "HBM Configuration and Use": 32 pseudo-channels
// × 14.375 GB/s = 460 GB/s, 16 GB on the U55C); the rest are
// first-principles assumptions.
type Config struct {
	ClockHz float64 `json:"clock_hz"` // 300 MHz assumed (a typical HBM FPGA kernel clock)
	// HBMBytesPerSec is the peak HBM bandwidth: 460 GB/s (AMD UG1393).
	HBMBytesPerSec float64 `json:"hbm_bytes_per_sec"`
	// ScratchpadBytes is the on-chip memory available for ciphertexts, keys
	// and plaintext buffers. The paper gives no size; the U55C's FPGA has
	// roughly 40 MB of BRAM+URAM in total (AMD's data sheet, not verified
	// here); 24 MiB is assumed usable for the scratchpad.
	ScratchpadBytes int64 `json:"scratchpad_bytes"`
	// Cluster throughputs per cycle. A 60-bit modular multiplier takes about
	// 30 DSP slices (three 64×64 products of ≈10 DSP48E2 each); ≈8,000 of the
	// U55C's ≈9,000 DSPs give ≈256 multipliers, split 128 butterflies (NTT)
	// and 128 lanes (modmul). Automorphism (a permutation network) and
	// modular addition use LUTs: 256 coefficients per cycle assumed.
	NTTButterflies int `json:"ntt_butterflies"`
	ModMulLanes    int `json:"modmul_lanes"`
	AutLanes       int `json:"aut_lanes"`
	ModAddLanes    int `json:"modadd_lanes"`
	// PlaintextBytesPerCoeff is the HBM footprint of one weight-plaintext
	// coefficient: 8 bytes per limb for evaluation-domain plaintexts (the
	// paper's memory baseline, §V-C). Set it from an OptiComp compression
	// ratio to model compressed plaintexts (decompression and NTT cost are
	// then not modeled).
	PlaintextBytesPerCoeff float64 `json:"plaintext_bytes_per_coeff"`
}

// Default returns the Config described above.
func Default() Config {
	return Config{
		ClockHz:                300e6,
		HBMBytesPerSec:         460e9,
		ScratchpadBytes:        24 << 20,
		NTTButterflies:         128,
		ModMulLanes:            128,
		AutLanes:               256,
		ModAddLanes:            256,
		PlaintextBytesPerCoeff: 8,
	}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if !(c.ClockHz > 0) || !(c.HBMBytesPerSec > 0) || c.ScratchpadBytes <= 0 ||
		c.NTTButterflies <= 0 || c.ModMulLanes <= 0 || c.AutLanes <= 0 || c.ModAddLanes <= 0 ||
		!(c.PlaintextBytesPerCoeff > 0) {
		return fmt.Errorf("fpga: invalid configuration %+v", c)
	}
	return nil
}

// withLanes returns c with every cluster's lanes multiplied by k.
func (c Config) withLanes(k int) Config {
	c.NTTButterflies *= k
	c.ModMulLanes *= k
	c.AutLanes *= k
	c.ModAddLanes *= k
	return c
}
