package system

import (
	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
)

// Where values and keys live. The simulator follows the plan's decisions
// (hot keys, streamed values, host keys on chip) and the compiler's exported
// rules (compiler.KeyName, StoredKeyBytes, ResidentCapacity, Streamable),
// so it charges what the compiler planned.

// keys decides which evaluation keys are eDRAM-resident (CLCAO's hot set,
// reported by the plan, named by compiler.KeyName), whether the host
// accelerator holds all keys on chip (the plan says) and the SSD's on-chip
// capacity for values (compiler.ResidentCapacity under CLCAO, else SRAM).
func (x *exec) keys(prof *lower.Profiler, params string) error {
	x.hotKeys = map[string]bool{}
	used := map[string]bool{}
	slots := 1
	if params != "" {
		ring, _, err := prof.Ring(params)
		if err == nil {
			slots = 1 << (ring.LogN - 1)
			x.keyHalf = compiler.StoredKeyBytes(ring, x.wordBits)
		}
	}
	for _, v := range x.nodes {
		if k := compiler.KeyName(v.ir, slots); k != "" && v.kind == kindCompute {
			used[k] = true
		}
	}
	// The host keeps keys on chip when the compiler decided so.
	x.hostKeys = x.plan.HostKeysOnChip
	x.onChipCap = x.a.SRAM.CapacityBytes
	if !x.clcao || x.a.EDRAM.CapacityBytes == 0 || x.keyHalf == 0 {
		return nil
	}
	// CLCAO's hot set, as the plan records it.
	for _, k := range x.plan.HotKeys {
		if used[k] {
			x.hotKeys[k] = true
		}
	}
	x.onChipCap = compiler.ResidentCapacity(x.a, int64(len(x.hotKeys))*x.keyHalf)
	return nil
}

// streaming marks the values CLCAO streams tile by tile: counted values on
// the SSD whose users are all on the SSD and are Sums (running
// accumulators) or same-count nodes that are themselves streamed (the
// compiler's streamability rule).
//
// INSPIRE streams only its hard-wired dataflow: a product consumed solely
// by Sums goes straight into the running accumulator (the multiply-
// accumulate a PIR engine is built around, inspireStreams); everything
// else follows the no-CLCAO rule.
func (x *exec) streaming() {
	// The host accelerator fuses producer and consumer instances of its own
	// counted values (compiler.Streamable over the host's nodes), as the
	// cost model assumes.
	if x.sys != CPU {
		onHost := func(i int) bool { return x.nodes[i].dev == onHost && x.nodes[i].kind == kindCompute }
		for i := range compiler.Streamable(x.prog, onHost) {
			if onHost(i) {
				x.nodes[i].hostFused = true
			}
		}
	}
	if x.sys == INSPIRE {
		for _, v := range x.nodes {
			v.streamed = inspireStreams(x.nodes, v)
		}
		return
	}
	if !x.clcao {
		return
	}
	for _, i := range x.plan.Streamed {
		if i >= 0 && i < len(x.nodes) && x.nodes[i].dev == onSSD {
			x.nodes[i].streamed = true
		}
	}
}

// tierOf is where v's value lives on device d (for reads there and, on its
// own device, for its writes).
func (x *exec) tierOf(v *node, d device) tier {
	if v.kind == kindStored {
		return tierNAND
	}
	if d == onSSD {
		switch {
		case v.streamed:
			return tierSRAM
		case v.bytes <= x.onChipCap:
			return tierSRAM
		}
		return tierDRAM
	}
	if x.sys == CPU || v.hostFused || v.bytes <= x.a.Host.OnChipBytes {
		return tierFree
	}
	return tierHBM
}

// slots is the slot count of v's parameters (for key names).
func (x *exec) slots(v *node) int { return v.prof.N / 2 }
