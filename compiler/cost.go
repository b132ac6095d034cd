package compiler

import (
	"fmt"
	"math"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// CostModel estimates D_i(Host) and D_i(SSD) for each node and T_comm for
// each edge, after the paper's cost formula: arithmetic on the device's
// datapath + ciphertext buffer/scratchpad memory traffic + key-switching-key
// access. Following the paper's caveat, a node's operands are assumed to be
// produced on the same device as the node itself (no transfer inside D_i);
// cross-device data pays T_comm on the edge instead.
type CostModel struct {
	Arch *arch.Arch
	Prof *lower.Profiler
	// HotKeys are the evaluation keys CLCAO keeps in the eDRAM scratchpad;
	// the others stream from LPDDR for every use.
	HotKeys map[keyRef]bool
	// HostKeysOnChip: the program's keys fit the host accelerator's on-chip
	// memory (a SHARP-class design keeps them there), so its key reads cost
	// no off-chip traffic.
	HostKeysOnChip bool
	// Resident marks node results CLCAO keeps in SRAM/eDRAM: their
	// producers and consumers on the SSD skip the LPDDR round trip. Without
	// CLCAO a value is on chip only if all its instances fit the buffer.
	Resident map[int]bool
	// HostStreamed marks counted values the host accelerator produces and
	// consumes instance by instance (Streamable, users assumed on the
	// host): they stay on chip there.
	HostStreamed map[int]bool

	users   [][]int     // readers of each node of usersOf
	usersOf *ir.Program // the program users describes

	// The ring degree of the preset last sized: a program uses one or two
	// presets, and the cost model sizes values several times per node.
	lastParams string
	lastLogN   int
}

// logN is the ring degree (log2) of preset params.
func (cm *CostModel) logN(params string) (int, error) {
	if cm.lastLogN > 0 && params == cm.lastParams {
		return cm.lastLogN, nil
	}
	pr, err := fhe.Lookup(params)
	if err != nil {
		return 0, err
	}
	cm.lastParams, cm.lastLogN = params, pr.LogN
	return pr.LogN, nil
}

// readers returns how many nodes read v's result (at least 1).
func (cm *CostModel) readers(p *ir.Program, v int) int {
	if cm.usersOf != p || len(cm.users) != len(p.Nodes) {
		cm.users, cm.usersOf = p.Users(), p
	}
	return max(1, len(cm.users[v]))
}

// onChip reports whether v's result is held in on-chip memory on the
// device (ssd) or the host accelerator.
func (cm *CostModel) onChip(p *ir.Program, v ir.Node, ssd bool) bool {
	if v.Op == ir.OpStored {
		return false
	}
	if ssd && cm.Resident[v.ID] {
		return true
	}
	if !ssd && cm.HostStreamed[v.ID] {
		return true
	}
	b, err := cm.ValueBytes(p, v)
	if err != nil {
		return false
	}
	if ssd {
		return b <= cm.Arch.SRAM.CapacityBytes
	}
	return b <= cm.Arch.Host.OnChipBytes
}

// NodeCost is a node's estimated execution time on each device (seconds,
// for all Count instances).
type NodeCost struct {
	Host float64 `json:"host_s"`
	SSD  float64 `json:"ssd_s"`
}

// WordBits is the word size of ciphertexts in transit and in device memory:
// the Rosemary engine's.
func (cm *CostModel) WordBits() int { return cm.Arch.Engine.WordBits }

// ValueBytes is the size of all Count instances of n's result.
func (cm *CostModel) ValueBytes(p *ir.Program, n ir.Node) (int64, error) {
	logN, err := cm.logN(n.Params)
	if err != nil {
		return 0, err
	}
	return ir.InstanceBytes(n, logN, cm.WordBits()) * n.Count, nil
}

// CommSeconds is T_comm for moving v's result across the host–SSD link.
func (cm *CostModel) CommSeconds(p *ir.Program, v ir.Node) (float64, error) {
	b, err := cm.ValueBytes(p, v)
	if err != nil {
		return 0, err
	}
	return cm.Arch.Link.TransferSeconds(b), nil
}

// nandGBps is the aggregate flash read bandwidth (all channels).
func (cm *CostModel) nandGBps() float64 {
	return float64(cm.Arch.NAND.Channels) * cm.Arch.NAND.ChannelGBps()
}

// Cost returns D_i on both devices for node n (all its instances).
//
// Per instance it charges the datapath cycles of the lowered operation,
// the key-switching-key reads, the write of the result and the reads of
// operands produced instance by instance. An operand with fewer instances
// than the node (a broadcast query, a reused selection vector) is read once
// per operand instance: the engine tiles the loop so a reused operand
// instance stays on chip while it is used. Sum reads each input instance
// once and keeps its running accumulator on chip.
func (cm *CostModel) Cost(p *ir.Program, n ir.Node) (NodeCost, error) {
	switch n.Op {
	case ir.OpInput, ir.OpStored, ir.OpOutput, ir.OpLevelDown:
		return NodeCost{}, nil
	case ir.OpBoot:
		return NodeCost{}, fmt.Errorf("compiler: node %d: Boot must be expanded before costing", n.ID)
	}
	first := p.Nodes[n.Args[0]]
	prof, inst, err := cm.Prof.NodeWork(p, n)
	if err != nil {
		return NodeCost{}, err
	}
	instances := float64(inst)
	var c NodeCost
	for _, ssd := range []bool{false, true} {
		t, err := cm.deviceSeconds(n, prof, ssd)
		if err != nil {
			return NodeCost{}, err
		}
		total := t * instances
		limbBytes := float64(prof.N) * float64(cm.WordBits()) / 8
		outInstances := instances
		if n.Op == ir.OpLWEScan {
			// One accumulator, written once (it stays on chip between blocks).
			outInstances = float64(n.Count)
		}
		if n.Op == ir.OpSum {
			outInstances = float64(n.Count)
			// Every input instance is read once (the first of each group
			// seeds the accumulator).
			total += float64(first.Count) * cm.trafficSeconds(p, first, float64(prof.InputLimbs[0])*limbBytes, ssd)
		} else {
			for i, limbs := range prof.InputLimbs {
				if i >= len(n.Args) {
					break
				}
				arg := p.Nodes[n.Args[i]]
				reads := instances
				if arg.Count < n.Count {
					reads = float64(arg.Count)
				}
				t := reads * cm.trafficSeconds(p, arg, float64(limbs)*limbBytes, ssd)
				if ssd && arg.Op == ir.OpStored && !n.Window {
					// Readers of one stored object on the SSD share its
					// flash stream tile by tile (a batch of queries reads
					// the database once): each pays its share.
					t /= float64(cm.readers(p, arg.ID))
				}
				total += t
			}
		}
		total += outInstances * cm.trafficSeconds(p, n, float64(prof.OutputLimbs)*limbBytes, ssd)
		if math.IsNaN(total) || math.IsInf(total, 0) {
			return NodeCost{}, fmt.Errorf("compiler: node %d: cost is not finite", n.ID)
		}
		if ssd {
			c.SSD = total
		} else {
			c.Host = total
		}
	}
	return c, nil
}

// deviceSeconds is one instance's datapath time plus key-switching-key
// access on the SSD engine or the host accelerator (operand and result
// traffic is added by Cost).
func (cm *CostModel) deviceSeconds(n ir.Node, prof lower.Profile, ssd bool) (float64, error) {
	a := cm.Arch
	dp := a.Host.Datapath()
	if ssd {
		dp = a.Engine.Datapath()
	}
	var cycles int64
	for k, c := range prof.Kernels {
		if k.IsMemory() {
			continue
		}
		cy, err := dp.Cycles(arch.Op{Kernel: k, N: prof.N, Count: int(c)})
		if err != nil {
			return 0, err
		}
		cycles += cy
	}
	limbBytes := float64(prof.N) * float64(cm.WordBits()) / 8
	keyBytes := float64(prof.KeyLimbs) * limbBytes
	gb := func(bytes, gbps float64) float64 { return bytes / (gbps * 1e9) }
	var ksk float64
	switch {
	case keyBytes == 0:
	case !ssd && cm.HostKeysOnChip:
	case !ssd:
		ksk = gb(keyBytes, a.Host.HBMGBps)
	case cm.hot(n) && a.EDRAM.CapacityBytes > 0:
		// Half of each key is regenerated by the PRNG (paper §FHE Engine).
		ksk = gb(keyBytes/2, float64(a.EDRAM.Banks)*a.EDRAM.BankGBps)
	default:
		ksk = gb(keyBytes/2, a.DRAM.GBps)
	}
	return dp.Seconds(cycles) + ksk, nil
}

// hot reports whether n's evaluation key is eDRAM-resident.
func (cm *CostModel) hot(n ir.Node) bool {
	switch n.Op {
	case ir.OpRelinearize:
		return cm.HotKeys[keyRef{kind: relinKey}]
	case ir.OpConjugate:
		return cm.HotKeys[keyRef{kind: conjKey}]
	case ir.OpHRot:
		for k := range cm.HotKeys {
			if k.kind == rotKey && cm.slotsMod(n, n.Rotation) == k.rot {
				return true
			}
		}
	}
	return false
}

func (cm *CostModel) slotsMod(n ir.Node, r int) int {
	ring, _, err := cm.Prof.Ring(n.Params)
	if err != nil {
		return r
	}
	s := 1 << (ring.LogN - 1)
	return ((r % s) + s) % s
}

// trafficSeconds is the time to move bytes of value v through the memory
// that holds it: flash for stored objects on the SSD, the on-chip buffer
// (SRAM; free on the host, whose on-chip traffic the pipeline hides) or
// off-chip memory (LPDDR on the SSD, HBM on the host).
func (cm *CostModel) trafficSeconds(p *ir.Program, v ir.Node, bytes float64, ssd bool) float64 {
	a := cm.Arch
	gbps := 0.0
	switch {
	case ssd && v.Op == ir.OpStored:
		gbps = cm.nandGBps()
	case cm.onChip(p, v, ssd) && ssd:
		gbps = a.SRAM.GBps
	case cm.onChip(p, v, ssd):
		return 0
	case ssd:
		gbps = a.DRAM.GBps
	default:
		gbps = a.Host.HBMGBps
	}
	return bytes / (gbps * 1e9)
}
