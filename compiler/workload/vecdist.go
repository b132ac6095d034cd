package workload

import (
	"fmt"
	"math/bits"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// VecDistShape is an encrypted vector-distance scan with score summation
// (HEVEC-style, CKKS): the query is replicated across the slots, each
// stored plaintext packs Slots/Dim database vectors; PMult + Rescale, then
// log2(Dim) rotate-and-add steps leave each vector's inner product (from
// which the distance follows, ‖q−x‖² = ‖q‖² − 2⟨q,x⟩ + ‖x‖²) in its first
// slot. Scores of Groups consecutive plaintexts are then summed (the
// vectorised score summation of the paper's CLCAO example).
type VecDistShape struct {
	Name       string
	Params     string
	Plaintexts int64 // stored plaintexts (database blocks)
	Dim        int   // vector dimension, padded to a power of two
	Groups     int64 // score sums returned
}

// Program builds the scan.
func (s VecDistShape) Program() (*ir.Program, error) {
	p, err := fhe.Lookup(s.Params)
	if err != nil {
		return nil, err
	}
	if s.Groups < 1 || s.Plaintexts%s.Groups != 0 || s.Dim < 1 {
		return nil, fmt.Errorf("workload: vecdist: %d plaintexts must split into %d groups", s.Plaintexts, s.Groups)
	}
	if p.Levels() < 1 {
		return nil, fmt.Errorf("workload: vecdist needs one level to rescale")
	}
	top := p.Levels()
	b := ir.NewBuilder(s.Name, s.Params)
	// A scan over stored data: one linear segment (ir.Node.Segment).
	b.Segment(ir.Linear)
	q := b.SetRole(b.Input("query", top), ir.RoleQuery)
	db := b.SetRole(b.Stored("vectors", top, s.Plaintexts, true), ir.RoleDatabase)
	x := b.Rescale(b.PMult(q, db))
	steps := bits.Len(uint(s.Dim - 1))
	for i := 0; i < steps; i++ {
		x = b.HAdd(x, b.HRot(x, 1<<i))
	}
	b.Output("scores", b.Sum(x, s.Groups))
	return b.Build()
}

// deep1BPlaintexts is Deep1B (10^9 vectors of 96 dimensions, padded to
// 128) packed 16 vectors per N=4096 CKKS plaintext (2048 slots).
const deep1BPlaintexts = 1_000_000_000 / 16

func init() {
	register(Workload{
		Name:        "vecdist",
		Description: "encrypted vector distances + score summation on CKKS (Deep1B-shaped, 96-d)",
		Source:      "Rosemary §Workloads: HEVEC, N=4096, logQP=109, Deep1B; score summation from §CLCAO",
		Full: func() (*ir.Program, error) {
			return VecDistShape{Name: "vecdist-deep1b", Params: "hevec", Plaintexts: deep1BPlaintexts, Dim: 96, Groups: 1000}.Program()
		},
		Small: func() (*ir.Program, error) {
			return VecDistShape{Name: "vecdist-small", Params: "insecure-test", Plaintexts: 8, Dim: 4, Groups: 2}.Program()
		},
	})
}
