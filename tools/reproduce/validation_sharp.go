package reproduce

import (
	"fmt"
	"math"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/sim/system"
	"github.com/rosemary-fhe/rosemary/tools/report"
)

// SHARP's published figures (Kim et al., "SHARP: A Short-Word Hierarchical
// Accelerator for Robust and Practical Fully Homomorphic Encryption", ISCA
// 2023), at N = 2^16, L = 35, dnum = 3 on 36-bit words — the accelerator
// our host model (the rosemary preset's "host") describes.
var sharpFigures = []struct {
	name, quote string
	seconds     float64
	build       func() (*ir.Program, error)
}{
	{"sharp-boot", "SHARP: bootstrapping in 3.12 ms (0.00312 s)", 3.12e-3, workload.SHARPBootstrapping},
	{"resnet20-sharp", "SHARP: ResNet-20 inference in 99 ms (0.099 s)", 99e-3, workload.SHARPResNet20},
}

// hbmShare is what an HA run reads from HBM by kind: evaluation keys (one
// load per key switch unless all keys fit on chip) and public plaintexts
// (DFT diagonals, weights, masks), sized as the simulator sizes every
// value: in the SSD engine's 32-bit words (SHARP's are 36 bits).
type hbmShare struct{ keys, plaintexts int64 }

func hostReads(pl *compiler.Plan, a *arch.Arch) (hbmShare, error) {
	var s hbmShare
	prof := lower.Shared()
	p := pl.Program
	for _, n := range p.Nodes {
		switch {
		case n.Op == ir.OpStored && n.Public:
			b, err := p.Bytes(n, a.Engine.WordBits)
			if err != nil {
				return s, err
			}
			s.plaintexts += b * n.Count
		case n.Op == ir.OpInput || n.Op == ir.OpStored || n.Op == ir.OpOutput || n.Op == ir.OpLevelDown:
		default:
			pr, inst, err := prof.NodeWork(p, n)
			if err != nil {
				return s, err
			}
			if !pl.HostKeysOnChip {
				s.keys += pr.KeyLimbs * int64(pr.N) * int64(a.Engine.WordBits) / 8 * inst
			}
		}
	}
	return s, nil
}

// sharpRows simulates SHARP's two reported programs on our host model (the
// HA system: everything on the host accelerator) and adds them beside
// SHARP's figures.
func sharpRows(r *Runner, a *arch.Arch, t *report.Table) ([]GeoMean, []float64, error) {
	var gs []GeoMean
	var ours []float64
	for _, f := range sharpFigures {
		w := Workload{Name: f.name, Batch: 1, Build: f.build}
		rep, err := r.Sim(w, a, "full", system.HA)
		if err != nil {
			return nil, nil, err
		}
		pl, err := r.Plan(w, a, "full")
		if err != nil {
			return nil, nil, err
		}
		hr, err := hostReads(pl, a)
		if err != nil {
			return nil, nil, err
		}
		bind, busy := bottleneck(rep)
		q := ratio(rep.LatencyS, f.seconds)
		why := ""
		if differs(rep.LatencyS, f.seconds) {
			why = fmt.Sprintf("%s-bound (%.0f%% busy): %s over HBM, of which %s evaluation keys (loaded once per key switch: %d distinct keys "+
				"do not fit half of the %s on chip) and %s public plaintexts (DFT diagonals, weights), each read from HBM at every use. "+
				"SHARP applies ARK's algorithmic reuse — minimum key switching (one key reused across the rotations of a linear transform) "+
				"and on-the-fly limb extension of plaintexts and keys generated on chip — which our model of a SHARP-class host does not; "+
				"host compute alone is %.3g ms. Values are sized in 32-bit words, as everywhere in the simulator; SHARP's 36-bit words would add 12.5%% to the HBM bytes",
				bind, 100*busy, report.Bytes(rep.HostMem), report.Bytes(hr.keys), len(programKeys(pl.Program, 1<<15)), report.Bytes(a.Host.OnChipBytes),
				report.Bytes(hr.plaintexts), 1e3*rep.LatencyS*rep.Utilization.Host)
		}
		if err := t.Add("SHARP host (HA)", f.name, rep.LatencyS, f.seconds, q, float64(rep.NANDBytes), math.NaN(),
			math.NaN(), fmt.Sprintf("%s %.0f%% busy", bind, 100*busy), why); err != nil {
			return nil, nil, err
		}
		gs = append(gs, GeoMean{Figure: "VAL", Name: f.name + " on the host model (s)", Ours: rep.LatencyS, Paper: f.seconds,
			Ratio: q, Quote: f.quote, OursFrom: "simulated", Why: why})
		ours = append(ours, rep.LatencyS)
	}
	return gs, ours, nil
}

// programKeys is the set of distinct evaluation keys a program's key
// switches use, named as a Plan names them (compiler.KeyName).
func programKeys(p *ir.Program, slots int) map[string]bool {
	keys := map[string]bool{}
	for _, n := range p.Nodes {
		if k := compiler.KeyName(n, slots); k != "" {
			keys[k] = true
		}
	}
	return keys
}
