package workload

import (
	"fmt"
	"math/bits"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// LWEPIR is the answer of the hint-free LWE PIR (package fhe/lwepir) over
// one database, as the operations it runs:
//
//   - the first dimension, D·q modulo 2^32 (ir.OpLWEScan) over the byte
//     matrix stored in blocks of N rows × N columns, N the hint ring's
//     degree (the database's rows padded to N, its columns to a multiple
//     of N);
//   - the ring stage, H·s on the BGV encryption of the secret, exactly as
//     lwepir's Server.EvaluateHint runs it for the shape's Layout: B1 − 1
//     rotations by one (the baby steps), per output and giant step the B1
//     products with stored diagonals and their sum, Horner's rule over the
//     giant steps (a rotation by B1 and an addition each), the
//     rotate-and-sum by R, 2R, …, N/2 and the rescale.
//
// Preset is the fhe preset of the hint ring (Params' HintLogN, primes and
// plaintext modulus); empty, the first preset that is. The scan names the
// database (ir.Node.LWE), so the plan's device segment is its answer
// program (compiler.Plan.StreamSegment). lwepir stores each diagonal's two limbs as 64-bit
// words; the simulator counts them at its datapath's word width, as every
// RNS limb.
type LWEPIR struct {
	Name   string
	Preset string
	Params lwepir.Params
	Shape  lwepir.Shape
}

// checkPreset returns the preset if it is the hint ring of the
// parameters: same degree, plaintext modulus and prime count, each prime
// of its bit size (Lattigo picks primes next to 2^b on either side).
// Without a preset it looks for one.
func (w LWEPIR) checkPreset() (fhe.Preset, error) {
	if w.Preset == "" {
		for _, pr := range fhe.Presets() {
			if _, err := (LWEPIR{Preset: pr.Name, Params: w.Params}).checkPreset(); err == nil {
				return pr, nil
			}
		}
		return fhe.Preset{}, fmt.Errorf("workload: no preset is the hint ring of the LWE parameters")
	}
	pr, err := fhe.Lookup(w.Preset)
	if err != nil {
		return pr, err
	}
	logN, q, p, t, err := w.Params.HintRing()
	if err != nil {
		return pr, err
	}
	same := pr.Scheme == fhe.BGV && pr.LogN == logN && pr.T == t && len(pr.LogQ) == len(q) && len(pr.LogP) == len(p)
	near := func(x uint64, b int) bool { l := bits.Len64(x); return l == b || l == b+1 }
	for i := 0; same && i < len(q); i++ {
		same = near(q[i], pr.LogQ[i])
	}
	for i := 0; same && i < len(p); i++ {
		same = near(p[i], pr.LogP[i])
	}
	if !same {
		return pr, fmt.Errorf("workload: preset %s is not the hint ring of the LWE parameters (N=2^%d, T=%d)", w.Preset, logN, t)
	}
	return pr, nil
}

// Program builds the answer program.
func (w LWEPIR) Program() (*ir.Program, error) {
	pr, err := w.checkPreset()
	if err != nil {
		return nil, err
	}
	if err := w.Shape.Validate(w.Params); err != nil {
		return nil, err
	}
	n := 1 << pr.LogN
	if w.Shape.Rows > n {
		return nil, fmt.Errorf("workload: %d rows exceed one scan block of %d", w.Shape.Rows, n)
	}
	blocks := int64((w.Shape.Cols + n - 1) / n)
	b := ir.NewBuilder(w.Name, pr.Name)
	b.Segment(ir.Linear)
	q := b.SetRole(b.LWEQuery("query", blocks), ir.RoleQuery)
	d := b.SetRole(b.StoredLWEMatrix("database", pr.LogN, blocks), ir.RoleDatabase)
	var scan int
	if name := w.Params.Name(); name != "" {
		scan = b.LWEScanOf(q, d, ir.LWESpec{Params: name, Rows: w.Shape.Rows, Cols: w.Shape.Cols, RecordSize: w.Shape.RecordSize})
	} else { // unnamed parameters (an experiment): a cost model, no device program
		scan = b.LWEScan(q, d)
	}
	b.Output("column", scan)

	top := pr.Levels()
	l := w.Shape.Layout(w.Params)
	baby := make([]int, l.B1)
	baby[0] = b.SetRole(b.Input("secret", top), ir.RoleQuery)
	for j := 1; j < l.B1; j++ {
		baby[j] = b.HRot(baby[j-1], 1)
	}
	for o := 0; o < l.Outputs; o++ {
		acc := -1
		for g := l.B2 - 1; g >= 0; g-- {
			// The device stores the B1 diagonals of a giant step as one
			// object (lower.LWEDiagonals); lwepir's diagonal index is
			// (o·B2 + g)·B1 + j.
			diags := b.Stored(fmt.Sprintf("diagonals/%d", o*l.B2+g), top, int64(l.B1), true)
			sum := -1
			for j := 0; j < l.B1; j++ {
				p := b.PMultAt(baby[j], diags, int64(j))
				if sum < 0 {
					sum = p
				} else {
					sum = b.HAdd(sum, p)
				}
			}
			if acc < 0 {
				acc = sum
			} else {
				acc = b.HAdd(b.HRot(acc, l.B1), sum)
			}
		}
		for k := l.R; k < l.N; k *= 2 {
			acc = b.HAdd(acc, b.HRot(acc, k))
		}
		b.Output(fmt.Sprintf("hint/%d", o), b.Rescale(acc))
	}
	return b.Build()
}

// LWEPIRDatabase is the program answering the database of records of
// recordSize bytes under parameters p, in the shape lwepir.NewShape gives.
func LWEPIRDatabase(name, preset string, p lwepir.Params, records, recordSize int) (*ir.Program, error) {
	shape, err := lwepir.NewShape(p, records, recordSize)
	if err != nil {
		return nil, err
	}
	return LWEPIR{Name: name, Preset: preset, Params: p, Shape: shape}.Program()
}

func init() {
	register(Workload{
		Name:        "pir-lwe",
		Description: "hint-free LWE PIR (fhe/lwepir, the default scheme): 4 GiB of 256-byte records, the bench pir database",
		Source: "ours, not in the Rosemary paper: fhe/lwepir.Default (SimplePIR first dimension N=2048, q=2^32, 8-bit entries; " +
			"BGV N=2^13 hint ring) over `rosemary bench pir`'s default 4 GiB of 256-byte records, shape and layout from lwepir.NewShape",
		Full: func() (*ir.Program, error) {
			return LWEPIRDatabase("pir-lwe", "lwepir-hint", lwepir.Default(), 1<<24, 256)
		},
		Small: func() (*ir.Program, error) {
			return LWEPIRDatabase("pir-lwe-small", "insecure-lwepir-hint-test", lwepir.Test(), 4096, 64)
		},
	})
}
