package workload

import (
	"fmt"
	"math/bits"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// EngorgioShape is an encrypted vector query on Engorgio's column layout
// (Bian et al., "Engorgio: An Arbitrary-Precision Unbounded-Size Hybrid
// Encrypted Database via Quantized Fully Homomorphic Encryption", USENIX
// Security 2025, and its artifact): one ciphertext per column, each
// holding up to N/2 records, one record per slot.
//
//   - Distance: the query is one ciphertext per distance column (its value
//     in every slot); Σ_c (x_c − q_c)², one Rescale — no rotation, every
//     slot is a record.
//   - Top-k: a bitonic network over the Slots padded records (rotations by
//     ±2^i only): blocks of TopK sorted in alternating directions, then
//     log2(Slots/TopK) rounds of a half-cleaner between block pairs (the
//     lower block keeps the TopK smallest) and a bitonic merge of the
//     survivors. Each compare-and-swap stage compares every slot with its
//     partner i XOR δ through a Chebyshev approximation of the step
//     function (Step, degree 247 for top-k in Engorgio) and selects with
//     it: new = d + sel·(partner − d), sel = s or 1 − s by the slot's
//     direction (masks are public plaintexts per stage).
//   - Sync: the payload columns (Sync of them) follow the same swaps with
//     the same selection bits, so the k nearest records' columns end in
//     the first TopK slots.
//   - Bootstrapping: after every stage, a ciphertext with fewer than
//     BootBelow levels left is bootstrapped (Engorgio: remaining depth
//     < 23); the selection bits too before they reach the payload columns
//     (one bootstrapping instead of one per payload column: our choice).
//
// The k nearest distances end, ascending, in slots 0 … TopK−1 of "topk";
// the synced columns in the same slots of "sync".
type EngorgioShape struct {
	Name    string
	Params  string
	Records int64 // padded to a power of two: the network's width
	Dims    int   // distance columns
	Sync    int   // payload columns carried along
	TopK    int
	Step    Chebyshev
	// DBLevel is the level the columns are stored at.
	DBLevel   int
	Boot      *ir.BootSpec
	BootBelow int
	// MaxStages stops the network early (0: all stages), for tests that
	// run a prefix for real on small parameters.
	MaxStages int
}

// CASStage is one compare-and-swap stage of the network: every slot i is
// compared with i XOR Dist and keeps the minimum unless Desc(i).
type CASStage struct {
	Dist int
	// DescBlock: slot i keeps the maximum when bit DescBlock of i is set
	// (0: never, every pair ascending).
	DescBlock int
}

// KeepMin reports whether slot i keeps the smaller value of its pair.
func (s CASStage) KeepMin(i int) bool {
	desc := s.DescBlock != 0 && i&s.DescBlock != 0
	return (i&s.Dist == 0) != desc
}

// Network returns the top-k network's stages for slots records: bitonic
// sort of blocks of k (alternating directions), then per round a
// half-cleaner at δ = k·2^r and a merge of the survivors at k/2 … 1,
// alternating by 2δ-blocks except in the last round.
func Network(slots, k int) []CASStage {
	var st []CASStage
	for b := 2; b <= k; b *= 2 {
		// Blocks of b sorted ascending and descending in turn (bit b of
		// the slot index), so pairs of them are bitonic for the next size.
		desc := b
		if b == slots {
			desc = 0
		}
		for d := b / 2; d >= 1; d /= 2 {
			st = append(st, CASStage{Dist: d, DescBlock: desc})
		}
	}
	for delta := k; delta < slots; delta *= 2 {
		st = append(st, CASStage{Dist: delta})
		desc := 2 * delta
		if 2*delta >= slots {
			desc = 0
		}
		for d := k / 2; d >= 1; d /= 2 {
			st = append(st, CASStage{Dist: d, DescBlock: desc})
		}
	}
	return st
}

// Width is the network's width: Records padded to a power of two.
func (s EngorgioShape) Width() int { return 1 << bits.Len64(uint64(s.Records-1)) }

// Stages is the network Program emits.
func (s EngorgioShape) Stages() []CASStage {
	st := Network(s.Width(), s.TopK)
	if s.MaxStages > 0 && s.MaxStages < len(st) {
		st = st[:s.MaxStages]
	}
	return st
}

// StageMaskName names stage j's mask of the given kind: "up" (slots whose
// partner is above), "dn" (below), "min" and "max" (slots keeping the
// smaller / larger value).
func StageMaskName(j int, kind string) string { return fmt.Sprintf("stage/%d/%s", j, kind) }

// StageMask returns the mask's slot values for a ciphertext of slots
// slots (0 beyond the network's width).
func (s EngorgioShape) StageMask(st CASStage, kind string, slots int) ([]float64, error) {
	w := s.Width()
	out := make([]float64, slots)
	for i := 0; i < w; i++ {
		up := i&st.Dist == 0
		var on bool
		switch kind {
		case "up":
			on = up
		case "dn":
			on = !up
		case "min":
			on = st.KeepMin(i)
		case "max":
			on = !st.KeepMin(i)
		default:
			return nil, fmt.Errorf("workload: engorgio: unknown mask kind %q", kind)
		}
		if on {
			out[i] = 1
		}
	}
	return out, nil
}

func (s EngorgioShape) check() (fhe.Preset, error) {
	p, err := fhe.Lookup(s.Params)
	if err != nil {
		return p, fmt.Errorf("workload: engorgio: %w", err)
	}
	slots := 1 << (p.LogN - 1)
	switch {
	case p.Scheme != fhe.CKKS:
		return p, fmt.Errorf("workload: engorgio: preset %s is %s, want CKKS", p.Name, p.Scheme)
	case s.Records < 2 || s.Width() > slots:
		return p, fmt.Errorf("workload: engorgio: %d records outside [2, %d slots]", s.Records, slots)
	case s.Dims < 1 || s.Sync < 0:
		return p, fmt.Errorf("workload: engorgio: %d distance and %d payload columns", s.Dims, s.Sync)
	case s.TopK < 1 || bits.OnesCount(uint(s.TopK)) != 1 || s.TopK > s.Width():
		return p, fmt.Errorf("workload: engorgio: top-%d must be a power of two ≤ %d", s.TopK, s.Width())
	case s.Step.Degree() < 1:
		return p, fmt.Errorf("workload: engorgio: no step polynomial")
	case s.DBLevel < 1 || s.DBLevel > p.Levels():
		return p, fmt.Errorf("workload: engorgio: database level %d outside [1, %d]", s.DBLevel, p.Levels())
	case s.Boot != nil && s.Boot.OutputLevel < s.StageLevels():
		return p, fmt.Errorf("workload: engorgio: bootstrapping leaves %d levels, a stage needs %d", s.Boot.OutputLevel, s.StageLevels())
	}
	return p, nil
}

// StageLevels is the levels one stage takes from the distance ciphertext:
// the masked partner, the step polynomial, the masked selection, the swap.
func (s EngorgioShape) StageLevels() int { return 1 + s.Step.Depth() + 2 }

// Program builds the query.
func (s EngorgioShape) Program() (*ir.Program, error) {
	if _, err := s.check(); err != nil {
		return nil, err
	}
	g, err := newGen(s.Name, s.Params, s.Boot)
	if err != nil {
		return nil, err
	}
	dims := int64(s.Dims)
	// Distance in storage, the network on the host (Rosemary's Figure 3).
	endLinear := g.segment(ir.Linear)
	cols := g.stored("columns/distance", s.DBLevel, dims, false)
	diff := g.sub(cols, g.input("query", dims))
	sq := g.node(ir.OpRelinearize, dims, diff.level, 1, g.node(ir.OpHMult, dims, diff.level, 2, diff.id, diff.id))
	d := g.rescale(g.sum(val{sq, diff.level, dims}, 1))
	endLinear()

	defer g.segment(ir.NonLinear)()
	var sync *val
	if s.Sync > 0 {
		c := g.stored("columns/payload", s.DBLevel, int64(s.Sync), false)
		sync = &c
	}
	mask := func(j int, kind string, level int) val {
		return val{g.b.Constant(StageMaskName(j, kind), level, 1), level, 1}
	}
	// partner aligns every slot's partner value with it (masked rotations
	// by ±δ).
	partner := func(x val, j int, st CASStage) val {
		up := g.pmulN(g.rot(x, st.Dist), mask(j, "up", x.level), x.count)
		dn := g.pmulN(g.rot(x, -st.Dist), mask(j, "dn", x.level), x.count)
		return g.add(up, dn)
	}
	for j, st := range s.Stages() {
		d = g.need(d, s.StageLevels())
		p := partner(d, j, st)
		sgn := g.chebyshev(g.sub(d, p), s.Step)
		keepMin := g.pmulN(sgn, mask(j, "min", sgn.level), 1)
		keepMax := g.pmulN(g.sub(g.one(), sgn), mask(j, "max", sgn.level), 1)
		sel := g.add(keepMin, keepMax)
		d = g.add(d, g.mul(sel, g.sub(p, d)))
		if sync != nil {
			// The selection bits sit as low as the distances; bootstrapped
			// once (when below BootBelow), they spare the payload columns
			// a bootstrapping each per stage.
			if s.Boot != nil {
				sel = g.need(sel, s.BootBelow)
			}
			c := g.need(*sync, 2)
			c = g.add(c, g.mulN(sel, g.sub(partner(c, j, st), c), c.count))
			sync = &c
		}
		// Engorgio bootstraps after a stage that leaves fewer than
		// BootBelow levels.
		if s.Boot != nil {
			d = g.need(d, s.BootBelow)
			if sync != nil {
				c := g.need(*sync, s.BootBelow)
				sync = &c
			}
		}
	}
	g.output("topk", d)
	if sync != nil {
		g.output("sync", *sync)
	}
	return g.build()
}

// engorgioBoot is the bootstrapping of the engorgio preset (N=2^17, 43
// levels): full slots, CoeffsToSlots and SlotsToCoeffs in 4 and 3 levels,
// EvalMod by a degree-30 cosine with 3 double angles (Lattigo v6's default
// bootstrapping.ParametersLiteral shape; Engorgio's OpenFHE bootstrapping
// is not specified further); 43 − (4 + 8 + 3) = 28 levels remain.
var engorgioBoot = ir.BootSpec{OutputLevel: 28, CtSLevels: 4, StCLevels: 3, EvalModDegree: 30, DoubleAngle: 3, LogSlots: 16}

// EngorgioVQ is a paper-scale vector query: top-k (4 for VQ1, 16 for VQ2)
// of records by squared distance over Dims columns, then sync of the
// payload columns (9 for VQ1, 5 for VQ2), on the engorgio preset (N=2^17,
// 65,536 slots) with a degree-247 step (Engorgio's top-k comparison) and
// bootstrapping below 23 levels. The number of distance columns is not in
// the sources we have: 8 is our choice. The columns are stored at the
// level bootstrapping leaves (28), as a database that is kept usable.
func EngorgioVQ(name string, topK, sync int, records int64) EngorgioShape {
	boot := engorgioBoot
	return EngorgioShape{Name: name, Params: "engorgio", Records: records, Dims: 8, Sync: sync, TopK: topK,
		Step: StepChebyshev(247), DBLevel: boot.OutputLevel, Boot: &boot, BootBelow: 23}
}

// EngorgioSmall is the form tests run for real: 2048 records on
// insecure-test-deep (N=2^12, 20 levels, no bootstrapping), 2 distance and
// 2 payload columns, a degree-7 step, the first two stages of the network.
func EngorgioSmall(name string, topK int) EngorgioShape {
	return EngorgioShape{Name: name, Params: "insecure-test-deep", Records: 2048, Dims: 2, Sync: 2, TopK: topK,
		Step: StepChebyshev(7), DBLevel: 20, MaxStages: 2}
}

func init() {
	for _, v := range []struct {
		name, label string
		topK, sync  int
		records     int64
	}{
		{"vecsearch-vq1-s", "VQ1_S", 4, 9, 10_000},
		{"vecsearch-vq1-l", "VQ1_L", 4, 9, 65_536},
		{"vecsearch-vq2-s", "VQ2_S", 16, 5, 10_000},
		{"vecsearch-vq2-l", "VQ2_L", 16, 5, 65_536},
	} {
		v := v
		register(Workload{
			Name: v.name,
			Description: fmt.Sprintf("Engorgio %s: squared distances over %d records in Engorgio's column layout, bitonic top-%d with a degree-247 step and bootstrapping, sync of %d payload columns (CKKS N=2^17, L=43)",
				v.label, v.records, v.topK, v.sync),
			Source: "Rosemary §Workloads: Engorgio [10] VQ1/VQ2 on 10K entries; layout from Bian et al. USENIX Security 2025 and its artifact: " +
				"one ciphertext per column (N/2 = 65,536 records), Chebyshev step of degree 247 for top-k, bitonic network with rotations by ±2^i, " +
				"bootstrapping after a stage leaving < 23 levels, VQ1 = distance → top-4 → sync of 9 columns, VQ2 = top-16 → sync of 5; " +
				"ours: L = all 65,536 slots (the paper: VQ_L fills more slots), 8 distance columns, Lattigo's default bootstrapping shape",
			Full: func() (*ir.Program, error) {
				return EngorgioVQ(v.name, v.topK, v.sync, v.records).Program()
			},
			Small: func() (*ir.Program, error) {
				return EngorgioSmall(v.name+"-small", v.topK).Program()
			},
		})
	}
}
