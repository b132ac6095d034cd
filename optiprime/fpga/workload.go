package fpga

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/linear"
)

// Workload is one layer's HE work as the accelerator sees it, taken from
// a optiprime/linear Plan.
type Workload struct {
	Protocol string `json:"protocol"`
	N        int    `json:"n"`
	L        int    `json:"limbs"`         // ciphertext limbs the server computes at (max level + 1)
	K        int    `json:"special_limbs"` // key-switching special primes
	Dnum     int    `json:"dnum"`          // RNS gadget digits of a Galois key
	Tiles    int    `json:"tiles"`         // spatial tiles (each its own Ni inputs and G outputs)
	Ni       int    `json:"inputs_per_tile"`
	G        int    `json:"groups_per_tile"` // output ciphertexts per tile
	C        int    `json:"c"`               // channel block (1 for Cheetah)
	B        int    `json:"baby"`            // baby steps (1 without BSGS)
	BSGS     bool   `json:"bsgs"`
	// AccPerGroup is the number of partial sums one output group needs
	// before its post-processing automorphisms: C/B giant-step sums (BSGS),
	// C channel products before the merge tree (OptiEncode), 1 (Cheetah).
	AccPerGroup int `json:"acc_per_group"`
	// Counts for the whole layer (all tiles).
	CPMults  int64 `json:"cpmults"`
	BabyAuts int64 `json:"baby_automorphisms"` // hoisted, on inputs
	PostAuts int64 `json:"post_automorphisms"` // giant steps / merge tree, on partial sums
	Inputs   int64 `json:"input_cts"`
	Outputs  int64 `json:"output_cts"`
	planBaby int
}

// Automorphisms is the layer's total.
func (w Workload) Automorphisms() int64 { return w.BabyAuts + w.PostAuts }

// PlanBaby is the baby-step count the plan chose (0 without BSGS).
func (w Workload) PlanBaby() int { return w.planBaby }

// FromPlan extracts the workload of a planned layer. It needs parameters
// with a special modulus (N ≥ 8192 presets): the base-two gadget of the
// N = 4096 preset is not visible through the plan.
func FromPlan(pl *linear.Plan) (Workload, error) {
	if pl == nil {
		return Workload{}, fmt.Errorf("fpga: nil plan")
	}
	rp := pl.Params.RLWE()
	K := rp.PCount()
	if K == 0 {
		return Workload{}, fmt.Errorf("fpga: parameters %s have no special modulus; the key-switching model needs one", pl.Params.Name())
	}
	L := pl.Params.MaxLevel() + 1
	w := Workload{
		Protocol: pl.Proto.String(),
		N:        pl.Params.N(), L: L, K: K,
		Dnum:    rp.BaseRNSDecompositionVectorSize(L-1, K-1),
		Tiles:   pl.Tiles(),
		Ni:      pl.Inputs(),
		G:       pl.Groups(),
		C:       1,
		B:       1,
		BSGS:    pl.BSGS,
		CPMults: pl.Counters.CPMults,
		Inputs:  pl.Counters.InputCts,
		Outputs: pl.Counters.OutputCts,
	}
	switch {
	case pl.Proto == linear.Cheetah:
		w.AccPerGroup = 1
	case pl.BSGS:
		w.C, w.B, w.planBaby = pl.C(), pl.Baby, pl.Baby
		w.AccPerGroup = w.C / w.B
	default:
		w.C = pl.C()
		w.AccPerGroup = w.C
	}
	if w.Tiles < 1 || w.Ni < 1 || w.G < 1 || w.B < 1 || w.AccPerGroup < 1 {
		return Workload{}, fmt.Errorf("fpga: degenerate plan structure %+v", w)
	}
	// The plan's schedule applies B−1 hoisted baby-step automorphisms to
	// every input of every tile; the rest act on partial sums.
	w.BabyAuts = int64(w.Tiles) * int64(w.B-1) * int64(w.Ni)
	w.PostAuts = pl.Counters.Automorphisms - w.BabyAuts
	if w.PostAuts < 0 {
		return Workload{}, fmt.Errorf("fpga: plan has %d automorphisms, fewer than its %d baby steps", pl.Counters.Automorphisms, w.BabyAuts)
	}
	if w.Inputs != int64(w.Tiles)*int64(w.Ni) {
		return Workload{}, fmt.Errorf("fpga: plan reads %d input ciphertexts, structure says %d×%d", w.Inputs, w.Tiles, w.Ni)
	}
	return w, nil
}

// WithBaby returns the workload of the same BSGS layer with b baby steps
// (a power of two dividing C): baby steps T·(b−1)·Ni, giant steps
// T·G·(C/b−1), the same products. Only BSGS workloads can be re-split.
func (w Workload) WithBaby(b int) (Workload, error) {
	if !w.BSGS {
		return w, fmt.Errorf("fpga: %s layer has no BSGS split", w.Protocol)
	}
	if b < 1 || b > w.C || w.C%b != 0 || b&(b-1) != 0 {
		return w, fmt.Errorf("fpga: baby steps %d not a power of two dividing C=%d", b, w.C)
	}
	w.B = b
	w.AccPerGroup = w.C / b
	w.BabyAuts = int64(w.Tiles) * int64(b-1) * int64(w.Ni)
	w.PostAuts = int64(w.Tiles) * int64(w.G) * int64(w.C/b-1)
	return w, nil
}
