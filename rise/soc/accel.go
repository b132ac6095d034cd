package soc

import (
	"fmt"
	"math/bits"
)

// AccelCosts describe the RACE/RISE accelerator and its link to the core.
type AccelCosts struct {
	ClockHz float64 `json:"clock_hz"` // shares the SoC clock (paper §VI-A: 1 GHz)
	// PipelineDepth is the BFU's latency in cycles: read, the pipelined
	// Barrett multiplier (paper §III-B), add/sub, write. An NTT stage can
	// only start once the previous stage's last results are written, so
	// every stage pays it once (assumed 9: 2 memory + 6 multiplier + 1 add).
	PipelineDepth float64 `json:"pipeline_depth"`
	// KeccakPermCycles: the Keccak unit has one round unit (paper §III-A,
	// Fig. 3) and is assumed to complete one round per cycle: 24 cycles per
	// 1088-bit output.
	KeccakPermCycles float64 `json:"keccak_perm_cycles"`
	// SamplesPerCycle of the binomial and ternary samplers (pipelined, one
	// coefficient per cycle each assumed; they share the Keccak output).
	SamplesPerCycle float64 `json:"samples_per_cycle"`
	// LinkWordsPerCycle: 64-bit words per cycle between the core's memory
	// and the accelerator's banks (one 64-bit beat per cycle assumed).
	LinkWordsPerCycle float64 `json:"link_words_per_cycle"`
	// OffloadCycles per accelerator call: CSR writes of addresses and
	// lengths, start, completion polling (≈100 cycles assumed). Encryption
	// calls the accelerator twice per limb (c0 and c1, paper §III-B),
	// decryption once per limb.
	OffloadCycles float64 `json:"offload_cycles"`
}

// DefaultAccel returns the accelerator model described at AccelCosts.
func DefaultAccel() AccelCosts {
	return AccelCosts{
		ClockHz:           1e9,
		PipelineDepth:     9,
		KeccakPermCycles:  24,
		SamplesPerCycle:   1,
		LinkWordsPerCycle: 1,
		OffloadCycles:     100,
	}
}

// Cost is a latency split by where the cycles are spent.
type Cost struct {
	CoreCycles  float64 `json:"core_cycles"`  // software on the core
	AccelCycles float64 `json:"accel_cycles"` // accelerator compute (incl. overlapped key loads)
	LinkCycles  float64 `json:"link_cycles"`  // data moved core ↔ accelerator and offload calls
	// Parts are the cycles by where they go: "core:<phase>" (an edge.Phase
	// name), "accel:<step>", "link".
	Parts map[string]float64 `json:"parts,omitempty"`
}

// addPart adds d, recording its core and accelerator cycles under name
// and its link cycles under "link".
func (c *Cost) addPart(name string, d Cost) {
	c.add(d)
	if c.Parts == nil {
		c.Parts = map[string]float64{}
	}
	if v := d.CoreCycles + d.AccelCycles; v > 0 {
		c.Parts[name] += v
	}
	if d.LinkCycles > 0 {
		c.Parts["link"] += d.LinkCycles
	}
}

// Dominant returns the part with the most cycles and its share.
func (c Cost) Dominant() (string, float64) {
	best, bv := "", -1.0
	for k, v := range c.Parts {
		if v > bv || (v == bv && k < best) {
			best, bv = k, v
		}
	}
	if t := c.Cycles(); t > 0 {
		return best, bv / t
	}
	return best, 0
}

// Cycles is the total (the phases run one after the other).
func (c Cost) Cycles() float64 { return c.CoreCycles + c.AccelCycles + c.LinkCycles }

func (c *Cost) add(d Cost) {
	c.CoreCycles += d.CoreCycles
	c.AccelCycles += d.AccelCycles
	c.LinkCycles += d.LinkCycles
}

func (a AccelCosts) validate(bfus int) error {
	if bfus < 1 || bfus&(bfus-1) != 0 {
		return fmt.Errorf("rise: BFU count %d is not a power of two ≥ 1", bfus)
	}
	if !(a.ClockHz > 0) || !(a.KeccakPermCycles > 0) || !(a.SamplesPerCycle > 0) || !(a.LinkWordsPerCycle > 0) ||
		a.PipelineDepth < 0 || a.OffloadCycles < 0 {
		return fmt.Errorf("rise: invalid accelerator costs %+v", a)
	}
	return nil
}

// nttCycles is one (i)NTT of n points on bfus BFUs: N/2·log N butterflies
// spread over the BFUs (the multi-port banks of §IV feed all of them each
// cycle), plus one pipeline drain per stage.
func (a AccelCosts) nttCycles(n, bfus int) float64 {
	logN := float64(bits.Len(uint(n)) - 1)
	return float64(n)/2*logN/float64(bfus) + logN*a.PipelineDepth
}

// pointwise is a pass of n element-wise BFU operations.
func (a AccelCosts) pointwise(n, bfus int) float64 {
	return float64(n)/float64(bfus) + a.PipelineDepth
}

// sampleCycles is the accelerator's sampling phase: the Keccak unit and
// the samplers run as a pipeline, so the slower of the two bounds it.
func (a AccelCosts) sampleCycles(s OpCounts) float64 {
	k := s.KeccakPerms * a.KeccakPermCycles
	m := (s.BinomialSamples + s.TernaryBytes) / a.SamplesPerCycle
	return max(k, m)
}

// encryptCrypto is the accelerator side of one encryption of n coefficients
// and limbs limbs. samplesFromCore: RACE receives u, e0 and e1 from the core
// (packed 8 bytes per word, once per limb, as only two bank groups exist);
// RISE produces them on the accelerator.
func (a AccelCosts) encryptCrypto(n, limbs, bfus int, samplesFromCore bool) Cost {
	N := float64(n)
	var c Cost
	for range limbs {
		in := N // m (Δm, and e0 for RISE) as one word per coefficient
		if samplesFromCore {
			in += 3 * N / 8
		}
		c.LinkCycles += in/a.LinkWordsPerCycle + 2*N/a.LinkWordsPerCycle + 2*a.OffloadCycles // in, c0/c1 out, two calls
		// Lifts of u, e1 and the reduction of m+e0, then 3 NTTs while pk0,
		// pk1 load into the idle bank group (Fig. 5), then pk0·u+c0,
		// pk1·u+c1.
		lifts := 3 * a.pointwise(n, bfus)
		ntts := 3 * a.nttCycles(n, bfus)
		pk := 2 * N / a.LinkWordsPerCycle
		c.AccelCycles += lifts + max(ntts, pk) + 2*a.pointwise(n, bfus)
	}
	return c
}

// decryptCrypto is the accelerator side of one decryption: per limb c0,
// c1 and s in, c0 + c1·s, the iNTT with its N^-1 scaling, the result out.
func (a AccelCosts) decryptCrypto(n, limbs, bfus int) Cost {
	N := float64(n)
	var c Cost
	for range limbs {
		c.LinkCycles += 3*N/a.LinkWordsPerCycle + N/a.LinkWordsPerCycle + a.OffloadCycles
		c.AccelCycles += a.pointwise(n, bfus) + a.nttCycles(n, bfus) + a.pointwise(n, bfus)
	}
	return c
}
