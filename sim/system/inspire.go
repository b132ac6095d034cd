package system

import (
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
)

// INSPIRE ("INSPIRE: In-Storage Private Information Retrieval via
// Protocol and Architecture Co-design", ISCA 2022, doi 10.1145/3470496.3527433)
// is the ISP-only PIR accelerator the Rosemary paper compares with (Rosemary
// §Baselines: "We use INSPIRE [44] as the baseline for ASIC-based FHE ISP
// acceleration"). What we could find of that paper here is its abstract
// ("For a 1-billion-entry database of size 288GiB, INSPIRE's protocol reduces
// the query size from 27GiB to 3.6MiB ... reduces the query time from 28.4min
// to 36s, relative to the state-of-the-art FastPIR scheme"; "a heterogeneous
// in-storage architecture, which integrates our protocol across the SSD
// hierarchy"): not its engine configuration.
//
// ASSUMPTION (stated loudly, no INSPIRE numbers used): INSPIRE is modelled as
// Rosemary's own in-storage engine and NAND/LPDDR/SRAM model with
//   - no host offload: every node except the client's Input/Output runs in
//     the SSD, whatever the plan's placement;
//   - no eDRAM scratchpad (capacity 0, its Table V row dropped from area and
//     energy): evaluation keys stream from LPDDR at every use;
//   - no CLCAO: no hot keys and no general tile streaming between
//     operations; an intermediate stays on chip only if all its instances
//     fit the SRAM (the compiler's rule without CLCAO), otherwise it goes
//     through LPDDR — except the one dataflow a PIR accelerator is built
//     around: a computed value whose every user is a Sum streams tile by
//     tile into the running accumulator (a fused multiply-accumulate over
//     the database as it leaves the flash), inspireStreams.
// The plan's program is run as given (with CLCAO's rotation rewrites, if the
// plan has any).

const inspireNote = "INSPIRE modelled by assumption (its configuration was not available here): Rosemary's engine and flash, every op in the SSD, no eDRAM, no CLCAO beyond its fused database multiply-accumulate; see sim/system/inspire.go"

// inspireArch is a without its eDRAM scratchpad.
func inspireArch(a *arch.Arch) *arch.Arch {
	b := a.Clone()
	b.Name = a.Name + "+inspire"
	b.EDRAM.CapacityBytes = 0
	comps := b.Components[:0]
	for _, c := range b.Components {
		if c.Kind != arch.KindEDRAM {
			comps = append(comps, c)
		}
	}
	b.Components = comps
	return b
}

// inspireStreams reports whether INSPIRE streams v: a computed SSD value
// whose users are all Sums (a fused multiply-accumulate).
func inspireStreams(nodes []*node, v *node) bool {
	if v.kind != kindCompute || v.dev != onSSD || len(v.users) == 0 {
		return false
	}
	for _, u := range v.users {
		if nodes[u].ir.Op != ir.OpSum {
			return false
		}
	}
	return true
}
