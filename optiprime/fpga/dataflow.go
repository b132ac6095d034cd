package fpga

import (
	"fmt"
	"math"
)

// Traffic is HBM bytes by cause.
type Traffic struct {
	Inputs     float64 `json:"inputs"`      // input ciphertexts read (again per output tile for OptiFlow)
	SpillWrite float64 `json:"spill_write"` // baby-step ciphertexts written to HBM (split: evicted; OptiFlow: reload)
	SpillRead  float64 `json:"spill_read"`  // ... and read back
	Plaintexts float64 `json:"plaintexts"`  // weight plaintexts, once per product
	Keys       float64 `json:"keys"`        // Galois keys
	Outputs    float64 `json:"outputs"`     // output ciphertexts written
}

// Total is all HBM bytes.
func (t Traffic) Total() float64 {
	return t.Inputs + t.SpillWrite + t.SpillRead + t.Plaintexts + t.Keys + t.Outputs
}

func (t *Traffic) scale(k float64) {
	t.Inputs *= k
	t.SpillWrite *= k
	t.SpillRead *= k
	t.Plaintexts *= k
	t.Keys *= k
	t.Outputs *= k
}

// Dataflow names.
const (
	BSGSSplit = "bsgs-split"
	OptiFlow  = "optiflow"
)

// Result is one dataflow on one layer (all its tiles, one repetition).
type Result struct {
	Dataflow      string  `json:"dataflow"`
	HBM           Traffic `json:"hbm"`
	HBMBytes      float64 `json:"hbm_bytes"`
	Work          Work    `json:"work"`
	Automorphisms float64 `json:"automorphisms"` // including recomputed baby steps
	ComputeS      float64 `json:"compute_s"`     // busiest cluster
	MemoryS       float64 `json:"memory_s"`      // HBM bytes / bandwidth
	LatencyS      float64 `json:"latency_s"`     // max of the two (perfect overlap)
	Bound         string  `json:"bound"`         // "compute" or "memory"
	// OpsPerByte is the arithmetic intensity: element operations of all
	// clusters per HBM byte (the paper profiles 0.6 Ops/Byte, §IV-A).
	OpsPerByte float64 `json:"ops_per_byte"`
	// Working set: the baby-step ciphertexts a tile materializes and how
	// many stay resident (BSGS split), or the partial sums and the output
	// tiles they need (OptiFlow).
	WorkingSetCts int    `json:"working_set_cts"`
	ResidentCts   int    `json:"resident_cts"`
	OutputTiles   int    `json:"output_tiles"`
	KeyPolicy     string `json:"key_policy,omitempty"`  // OptiFlow: how the baby-step keys are held
	BabyPolicy    string `json:"baby_policy,omitempty"` // OptiFlow: BabyRecompute or BabyReload
}

type sizes struct{ ct, pt, key, hoist float64 }

func sizesOf(w Workload, c Config) sizes {
	N, L, K, D := float64(w.N), float64(w.L), float64(w.K), float64(w.Dnum)
	return sizes{
		ct:    2 * L * N * 8,
		pt:    L * N * c.PlaintextBytesPerCoeff,
		key:   D * 2 * (L + K) * N * 8,
		hoist: D * (L + K) * N * 8,
	}
}

func finish(r *Result, c Config, tiles float64) {
	r.HBM.scale(tiles)
	r.Work.ModAdds *= tiles
	r.Work.ModMuls *= tiles
	r.Work.AutMoves *= tiles
	r.Work.Butterflies *= tiles
	r.Automorphisms *= tiles
	r.HBMBytes = r.HBM.Total()
	r.ComputeS = r.Work.Seconds(c)
	if r.HBMBytes > 0 {
		r.OpsPerByte = (r.Work.Butterflies + r.Work.ModMuls + r.Work.AutMoves + r.Work.ModAdds) / r.HBMBytes
	}
	r.MemoryS = r.HBMBytes / c.HBMBytesPerSec
	r.LatencyS = max(r.ComputeS, r.MemoryS)
	r.Bound = "compute"
	if r.MemoryS > r.ComputeS {
		r.Bound = "memory"
	}
}

// RunBSGSSplit evaluates the computation-efficient order of Plan.schedule:
// per tile, the B·Ni baby-step ciphertexts are materialized, then each of
// the G groups makes C/B passes over them. The scratchpad keeps two
// accumulators, a double-buffered plaintext, one Galois key and the
// hoisting buffer; the rest holds baby-step ciphertexts. Those that do not
// fit are spilled: the Ni inputs first (already in HBM, no write), then
// computed ones (written once); every product that reads a spilled
// ciphertext reads it from HBM (uniform passes: the fraction spilled/(B·Ni)
// of the tile's products).
func RunBSGSSplit(w Workload, c Config) (Result, error) {
	if err := c.Validate(); err != nil {
		return Result{}, err
	}
	s := sizesOf(w, c)
	oc := costs(w)
	reserve := 2*s.ct + 2*s.pt + s.key + s.hoist
	if float64(c.ScratchpadBytes) < reserve {
		return Result{}, fmt.Errorf("fpga: scratchpad %d B below the BSGS split's %.0f B working buffers", c.ScratchpadBytes, reserve)
	}
	capCts := int(math.Floor((float64(c.ScratchpadBytes) - reserve) / s.ct))
	tiles := float64(w.Tiles)
	sb := w.B * w.Ni
	res := min(sb, capCts)
	spilled := sb - res
	cp := float64(w.CPMults) / tiles
	post := float64(w.PostAuts) / tiles
	r := Result{Dataflow: BSGSSplit, WorkingSetCts: sb, ResidentCts: res, OutputTiles: 1}
	r.HBM = Traffic{
		Inputs:     float64(w.Ni) * s.ct,
		SpillWrite: float64(max(0, spilled-w.Ni)) * s.ct,
		SpillRead:  cp * float64(spilled) / float64(sb) * s.ct,
		Plaintexts: cp * s.pt,
		Keys:       (float64(w.B-1) + post) * s.key,
		Outputs:    float64(w.G) * s.ct,
	}
	if w.B > 1 {
		r.Work.add(oc.hoist, float64(w.Ni))
	}
	r.Work.add(oc.rotate, float64((w.B-1)*w.Ni))
	r.Work.add(oc.cpmult, cp)
	r.Work.add(oc.full(), post)
	r.Automorphisms = float64((w.B-1)*w.Ni) + post
	finish(&r, c, tiles)
	return r, nil
}

// RunOptiFlow evaluates the reuse-centric output-stationary order: per
// tile, for one input at a time, its B−1 baby steps are computed (hoisted)
// and multiplied into all G·C/B partial sums, which stay on chip; then the
// post-processing automorphisms run on the partial sums and the G outputs
// are written. The scratchpad keeps one input, its hoisting buffer, one
// baby-step ciphertext, a double-buffered plaintext and the Galois keys
// (see the key policies below); the rest holds partial sums. When they do
// not fit, the outputs are split into ⌈G·C/B / capacity⌉ output tiles.
//
// Each output tile after the first needs every input's baby steps again.
// The paper recomputes them, "because hoisted automorphisms cost less than
// a single HBM access" (§IV-C); that is a property of its accelerator, so
// the model applies the paper's criterion to the configured one instead of
// assuming it: a later tile either recomputes the baby steps (re-reading
// the inputs) or reads back the ones the first tile wrote to HBM, whichever
// the configuration makes faster.
//
// The accelerator's compiler schedules for latency, so among the feasible
// schedules (three key policies × recompute or reload) the one of least
// modeled latency is chosen, ties going to fewer HBM bytes. (Fewest bytes
// alone would keep the paper layer's 8 keys resident, 8 × 1.5 MB, leave
// room for 27 of its 32 partial sums, and recompute 56 rotations in a
// compute-bound layer: 0.88× the split.)
func RunOptiFlow(w Workload, c Config) (Result, error) {
	if err := c.Validate(); err != nil {
		return Result{}, err
	}
	var best Result
	found := false
	for _, pol := range []keyPolicy{keysResident, keysStreamed, inputsResident} {
		for _, reload := range []bool{false, true} {
			r, ok := optiFlow(w, c, pol, reload)
			if ok && (!found || better(r, best)) {
				best, found = r, true
			}
		}
	}
	if !found {
		s := sizesOf(w, c)
		return Result{}, fmt.Errorf("fpga: scratchpad %d B cannot hold OptiFlow's buffers (%.0f B) and one partial sum",
			c.ScratchpadBytes, 2*s.ct+s.hoist+2*s.pt+2*s.key)
	}
	return best, nil
}

// better orders schedules: less latency, then fewer HBM bytes.
func better(a, b Result) bool {
	if a.LatencyS != b.LatencyS {
		return a.LatencyS < b.LatencyS
	}
	return a.HBMBytes < b.HBMBytes
}

// Key policies: the B−1 baby-step keys resident (read once per tile);
// streamed per input (and per output tile that computes baby steps)
// through one key buffer; or all Ni inputs of the tile held with their
// hoisting buffers so the baby steps run key-major (each key read once per
// output tile that computes baby steps).
type keyPolicy int

const (
	keysResident keyPolicy = iota
	keysStreamed
	inputsResident
)

var keyPolicyNames = [...]string{"keys-resident", "keys-streamed", "inputs-resident"}

// Baby-step policies for output tiles after the first (BabyPolicy).
const (
	BabyRecompute = "recompute" // re-read the inputs, hoist and rotate again
	BabyReload    = "reload"    // first tile writes its B−1 rotations per input; later tiles read them
)

func optiFlow(w Workload, c Config, pol keyPolicy, reload bool) (Result, bool) {
	s := sizesOf(w, c)
	oc := costs(w)
	var reserve float64
	switch pol {
	case keysResident: // input, hoisting buffer, baby, B−1 baby keys + 1 post key
		reserve = 2*s.ct + s.hoist + 2*s.pt + float64(w.B)*s.key
	case keysStreamed: // one baby key buffer and one post key
		reserve = 2*s.ct + s.hoist + 2*s.pt + 2*s.key
	case inputsResident: // every input with its hoisting buffer
		reserve = float64(w.Ni)*(s.ct+s.hoist) + s.ct + 2*s.pt + 2*s.key
	}
	if float64(c.ScratchpadBytes) < reserve+s.ct {
		return Result{}, false
	}
	capCts := int(math.Floor((float64(c.ScratchpadBytes) - reserve) / s.ct))
	tiles := float64(w.Tiles)
	acc := w.G * w.AccPerGroup
	to := (acc + capCts - 1) / capCts
	if reload && (to == 1 || w.B == 1) {
		return Result{}, false // nothing to reload: the same schedule as recompute
	}
	cp := float64(w.CPMults) / tiles
	post := float64(w.PostAuts) / tiles
	// Output tiles that compute baby steps: all of them, or the first.
	computing := to
	if reload {
		computing = 1
	}
	babyKeys := float64(w.B - 1)
	switch pol {
	case keysStreamed:
		babyKeys *= float64(w.Ni * computing)
	case inputsResident:
		babyKeys *= float64(computing)
	}
	r := Result{Dataflow: OptiFlow, KeyPolicy: keyPolicyNames[pol], BabyPolicy: BabyRecompute,
		WorkingSetCts: acc, ResidentCts: min(acc, capCts), OutputTiles: to}
	r.HBM = Traffic{
		Inputs:     float64(w.Ni*to) * s.ct, // every output tile reads the inputs (the 0th baby step)
		Plaintexts: cp * s.pt,
		Keys:       (babyKeys + post) * s.key,
		Outputs:    float64(w.G) * s.ct,
	}
	if reload {
		r.BabyPolicy = BabyReload
		rot := float64((w.B - 1) * w.Ni)
		r.HBM.SpillWrite = rot * s.ct
		r.HBM.SpillRead = float64(to-1) * rot * s.ct
	}
	if w.B > 1 {
		r.Work.add(oc.hoist, float64(w.Ni*computing))
	}
	r.Work.add(oc.rotate, float64((w.B-1)*w.Ni*computing))
	r.Work.add(oc.cpmult, cp)
	r.Work.add(oc.full(), post)
	r.Automorphisms = float64((w.B-1)*w.Ni*computing) + post
	finish(&r, c, tiles)
	return r, true
}

// ComputeEfficient returns the workload re-split with the baby-step count
// (a power of two dividing C) that minimizes the BSGS split's modeled
// compute time — the paper's "computation-efficient BSGS baby-step
// selection" — ties going to fewer baby steps. Non-BSGS workloads are
// returned unchanged.
func ComputeEfficient(w Workload, c Config) (Workload, error) {
	if !w.BSGS {
		return w, nil
	}
	best, bestT := w, math.Inf(1)
	big := c
	big.ScratchpadBytes = math.MaxInt64 / 2 // compute time does not depend on the scratchpad
	for b := 1; b <= w.C; b *= 2 {
		v, err := w.WithBaby(b)
		if err != nil {
			return w, err
		}
		r, err := RunBSGSSplit(v, big)
		if err != nil {
			return w, err
		}
		if r.ComputeS < bestT {
			best, bestT = v, r.ComputeS
		}
	}
	return best, nil
}
