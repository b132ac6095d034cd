// Package scaleout projects a workload over K Rosemary SSDs behind one
// host (simulated): the database split into K shards, each SSD running the
// compiled plan of its shard (sim/system, on the shard's own program), the
// K SSDs' traffic sharing the host's upstream link behind a PCIe switch,
// and the host combining the K partial results. It answers where adding
// SSDs stops paying and why.
//
// Model, per K: every SSD runs its shard at once, so the shards take the
// simulated latency of one shard, T_shard(K); their PCIe payloads (query
// in, partial results out) cross the upstream link one after another,
// T_link = K · bytes / upstream bandwidth; the host then adds the partial
// results (PIR: K answer ciphertexts summed; vector search returns every
// score, concatenated, no addition), T_agg from the compiler's cost model
// on the host accelerator. T(K) = max(T_shard, T_link) + T_agg.
package scaleout

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/sim/system"
)

// UpstreamLanes is the width of the host's upstream port behind the PCIe
// switch (a ×16 root port, the usual switch upstream width, e.g. Broadcom
// PEX88096 or Microchip Switchtec PFX, of the SSD links' generation).
const UpstreamLanes = 16

// Workload is a workload that shards.
type Workload struct {
	Name string
	// Shard is the program of one of k shards of the full database.
	Shard func(k int) (*ir.Program, error)
	// Combine: the host adds the shards' partial results (PIR) rather than
	// concatenating them.
	Combine bool
}

// Workloads are the flash-bound workloads of Figure 16, sharded.
func Workloads() []Workload {
	return []Workload{
		{Name: "pir", Combine: true, Shard: func(k int) (*ir.Program, error) {
			full, err := workload.PIRDatabase("pir-vcall", "pir-bgv", 1<<32, 96)
			if err != nil {
				return nil, err
			}
			full.Rows = (full.Rows + int64(k) - 1) / int64(k)
			full.Name = fmt.Sprintf("pir-vcall-shard-of-%d", k)
			return full.Program()
		}},
		{Name: "hevec", Shard: func(k int) (*ir.Program, error) {
			return workload.HEVECShape{Name: fmt.Sprintf("hevec-shard-of-%d", k), Params: "hevec", Vectors: 1_000_000_000 / int64(k),
				Dim: 128, Pack: 128}.Program()
		}},
		{Name: "vecdist", Shard: func(k int) (*ir.Program, error) {
			// Deep1B (10^9 × 96, 16 vectors per plaintext), its 1000 score
			// groups split with the plaintexts (rounded up to whole groups).
			groups := max(1, 1000/int64(k))
			per := (1_000_000_000/16/int64(k) + groups - 1) / groups
			return workload.VecDistShape{Name: fmt.Sprintf("vecdist-shard-of-%d", k), Params: "hevec",
				Plaintexts: per * groups, Dim: 96, Groups: groups}.Program()
		}},
	}
}

// Point is the projection at K SSDs.
type Point struct {
	K          int     `json:"ssds"`
	ShardS     float64 `json:"shard_s"` // simulated latency of one shard on one SSD
	ShardPCIe  int64   `json:"shard_pcie_bytes"`
	LinkS      float64 `json:"host_link_s"` // all shards' payloads over the upstream link
	AggregateS float64 `json:"aggregate_s"` // the host adding partial results
	TotalS     float64 `json:"total_s"`
	Speedup    float64 `json:"speedup"`    // over one SSD
	Efficiency float64 `json:"efficiency"` // speedup / K
	Binding    string  `json:"binding"`    // "SSDs", "host link" or "aggregation"
}

// Project computes the points for every K (the first K is the baseline of
// the speedups; give 1 first).
func Project(w Workload, a *arch.Arch, ks []int, opt system.Options) ([]Point, error) {
	up := a.Link
	up.Lanes = UpstreamLanes
	var out []Point
	for _, k := range ks {
		prog, err := w.Shard(k)
		if err != nil {
			return nil, fmt.Errorf("scaleout: %s shard of %d: %w", w.Name, k, err)
		}
		plan, err := compiler.Compile(prog, a, compiler.Options{Opt: compiler.OptFull})
		if err != nil {
			return nil, fmt.Errorf("scaleout: %s: %w", w.Name, err)
		}
		r, err := system.Run(plan, a, system.Rosemary, opt)
		if err != nil {
			return nil, fmt.Errorf("scaleout: %s: %w", w.Name, err)
		}
		p := Point{K: k, ShardS: r.Report.LatencyS, ShardPCIe: r.Report.PCIeBytes}
		p.LinkS = float64(k) * up.TransferSeconds(r.Report.PCIeBytes)
		if w.Combine && k > 1 {
			if p.AggregateS, err = aggregate(plan.Program, a, k); err != nil {
				return nil, err
			}
		}
		p.TotalS = max(p.ShardS, p.LinkS) + p.AggregateS
		switch {
		case p.AggregateS > max(p.ShardS, p.LinkS):
			p.Binding = "aggregation"
		case p.LinkS > p.ShardS:
			p.Binding = "host link"
		default:
			p.Binding = "SSDs"
		}
		out = append(out, p)
	}
	for i := range out {
		out[i].Speedup = out[0].TotalS / out[i].TotalS * float64(out[0].K)
		out[i].Efficiency = out[i].Speedup / float64(out[i].K)
	}
	return out, nil
}

// aggregate is the host accelerator's time to sum k copies of the
// program's output (a Sum node over k instances, costed by the compiler's
// model).
func aggregate(p *ir.Program, a *arch.Arch, k int) (float64, error) {
	var out ir.Node
	for _, n := range p.Nodes {
		if n.Op == ir.OpOutput {
			out = n
		}
	}
	b := ir.NewBuilder("aggregate", out.Params)
	x := b.InputN("partials", out.Level, int64(k))
	b.Output("answer", b.Sum(x, 1))
	agg, err := b.Build()
	if err != nil {
		return 0, err
	}
	cm := &compiler.CostModel{Arch: a, Prof: lower.Shared()}
	var s float64
	for _, n := range agg.Nodes {
		c, err := cm.Cost(agg, n)
		if err != nil {
			return 0, err
		}
		s += c.Host
	}
	return s, nil
}
