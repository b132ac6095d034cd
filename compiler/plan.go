package compiler

import (
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/tdap"
)

// Device is the side of the host–SSD cut a node runs on. It is the
// min-cut's own type, named here so that a Plan's readers need not import
// the partitioner; in JSON it reads "host" or "ssd".
type Device = tdap.Device

// The two sides of a Plan.
const (
	Host = tdap.Host
	SSD  = tdap.SSD
)

// Plan is the compiler's output: where every node runs, the segments that
// become host work or device mPrograms, the transfers at the cuts, and the
// estimates behind them. All figures in a Plan are estimates of the cost
// model (not measurements).
type Plan struct {
	Workload  string        `json:"workload"`
	Arch      string        `json:"arch"`
	Opt       OptLevel      `json:"opt"`
	Program   *ir.Program   `json:"program"`
	Placement []Device      `json:"placement"` // per node
	Costs     []NodeCost    `json:"costs"`
	Segments  []PlanSegment `json:"segments"`
	Transfers []Transfer    `json:"transfers"`

	CutBytes      int64   `json:"cut_bytes"`       // bytes crossing host↔SSD under this plan
	HostOnlyBytes int64   `json:"host_only_bytes"` // bytes crossing if everything ran on the host (HA)
	MProgramBytes int64   `json:"mprogram_bytes"`  // encoded size of all device mPrograms
	EstLatency    float64 `json:"est_latency_s"`   // Σ D_i(x_i) + Σ T_comm over cut edges

	SpilledBytes       int64 `json:"spilled_bytes"`        // device intermediates spilled to LPDDR
	SpilledBytesBefore int64 `json:"spilled_bytes_before"` // same, before CLCAO scheduling (full only)
	KeysOnChip         bool  `json:"keys_on_chip"`
	HotRotations       []int `json:"hot_rotations,omitempty"`
	RotationsRewritten int   `json:"rotations_rewritten"`

	// CLCAO's decisions, for the simulator to follow rather than re-derive:
	// the evaluation keys kept in eDRAM ("rlk", "conj", "rot<r>" with r
	// normalised modulo the slots), the counted values streamed one
	// instance at a time into their consumers, and whether the host
	// accelerator holds all keys on chip.
	HotKeys        []string `json:"hot_keys,omitempty"`
	Streamed       []int    `json:"streamed,omitempty"`
	HostKeysOnChip bool     `json:"host_keys_on_chip"`
}

// PlanSegment is a maximal run of same-device nodes in execution order.
type PlanSegment struct {
	Device       Device  `json:"device"`
	Nodes        []int   `json:"nodes"`
	ProgramBytes int64   `json:"mprogram_bytes,omitempty"`
	EstSeconds   float64 `json:"est_s"`
}

// Transfer is a value crossing the link.
type Transfer struct {
	Node  int    `json:"node"` // producer
	To    Device `json:"to"`   // destination side
	Bytes int64  `json:"bytes"`
}

// Summary is the headline of a plan, as `rosemary compile --json` prints it.
type Summary struct {
	Workload      string   `json:"workload"`
	Arch          string   `json:"arch"`
	Opt           OptLevel `json:"opt"`
	Nodes         int      `json:"nodes"`
	HostNodes     int      `json:"host_nodes"`
	SSDNodes      int      `json:"ssd_nodes"`
	Segments      int      `json:"segments"`
	Transfers     int      `json:"transfers"`
	CutBytes      int64    `json:"cut_bytes"`
	HostOnlyBytes int64    `json:"host_only_bytes"`
	MProgramBytes int64    `json:"mprogram_bytes"`
	EstLatency    float64  `json:"est_latency_s"`
	SpilledBytes  int64    `json:"spilled_bytes"`
	SpilledBefore int64    `json:"spilled_bytes_before"`
	KeysOnChip    bool     `json:"keys_on_chip"`
	Rewritten     int      `json:"rotations_rewritten"`
}

// Summary returns the plan's headline figures.
func (p *Plan) Summary() Summary {
	s := Summary{Workload: p.Workload, Arch: p.Arch, Opt: p.Opt, Nodes: len(p.Placement), Segments: len(p.Segments),
		Transfers: len(p.Transfers), CutBytes: p.CutBytes, HostOnlyBytes: p.HostOnlyBytes, MProgramBytes: p.MProgramBytes,
		EstLatency: p.EstLatency, SpilledBytes: p.SpilledBytes, SpilledBefore: p.SpilledBytesBefore,
		KeysOnChip: p.KeysOnChip, Rewritten: p.RotationsRewritten}
	for _, d := range p.Placement {
		if d == SSD {
			s.SSDNodes++
		} else {
			s.HostNodes++
		}
	}
	return s
}

// OnSSD reports whether the segment runs on the SSD (is a device segment).
func (s PlanSegment) OnSSD() bool { return s.Device == SSD }

// Computes reports whether segment seg runs an operation (not only
// sources and sinks: Input, Stored, Output).
func (p *Plan) Computes(seg int) bool {
	for _, v := range p.Segments[seg].Nodes {
		switch p.Program.Nodes[v].Op {
		case ir.OpInput, ir.OpStored, ir.OpOutput:
		default:
			return true
		}
	}
	return false
}
