package workload

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// PIRShape is a two-dimensional PIR database scan (SealPIR/SmartPIR style,
// depth 2): the database is Rows × Cols plaintexts; the client sends one
// selection ciphertext per column and one per row. Each plaintext is
// multiplied by its column's selection (PMult), each row is summed, the
// row sums are multiplied by the row selections (HMult + Relinearize) and
// summed into the answer.
type PIRShape struct {
	Name       string
	Params     string
	Rows, Cols int64
}

// PIRDatabase sizes a scan for records of recordBytes: each BGV plaintext
// packs N coefficients of log2(t) bits.
func PIRDatabase(name, params string, records, recordBytes int64) (PIRShape, error) {
	p, err := fhe.Lookup(params)
	if err != nil {
		return PIRShape{}, err
	}
	ptBytes := (int64(1) << p.LogN) * int64(math.Floor(math.Log2(float64(p.T)))) / 8
	plaintexts := (records*recordBytes + ptBytes - 1) / ptBytes
	cols := int64(math.Ceil(math.Sqrt(float64(plaintexts))))
	rows := (plaintexts + cols - 1) / cols
	return PIRShape{Name: name, Params: params, Rows: rows, Cols: cols}, nil
}

// Program builds the PIR scan.
func (s PIRShape) Program() (*ir.Program, error) {
	p, err := fhe.Lookup(s.Params)
	if err != nil {
		return nil, err
	}
	if s.Rows < 1 || s.Cols < 1 {
		return nil, fmt.Errorf("workload: PIR needs at least one row and column")
	}
	top := p.Levels()
	b := ir.NewBuilder(s.Name, s.Params)
	// A scan over stored data: one linear segment (ir.Node.Segment).
	b.Segment(ir.Linear)
	colSel := b.SetRole(b.InputN("col-selection", top, s.Cols), ir.RoleQuery)
	rowSel := b.SetRole(b.InputN("row-selection", top, s.Rows), ir.RoleQuery)
	// The database is stored compact (its coefficients mod t, one limb per
	// plaintext) and lifted to RNS/NTT form where it is multiplied.
	db := b.SetRole(b.StoredCompact("database", top, s.Rows*s.Cols), ir.RoleDatabase)
	picked := b.PMult(colSel, db) // instance r·Cols + c uses column c's selection
	rowSums := b.Sum(picked, s.Rows)
	prod := b.MulRelin(rowSums, rowSel)
	ans := b.Rescale(b.Sum(prod, 1))
	b.Output("answer", ans)
	return b.Build()
}

// Batched is the scan answering batch queries over one stored database
// (Program when batch ≤ 1): each query has its own column and row
// selections ("col-selection/<q>", "row-selection/<q>") and its own chain
// (PMult, row Sums, MulRelin, Sum, Rescale) to "answer/<q>"; all chains
// read the same Stored node, which comes first. This is our model of a
// batch (Rosemary §Comparison with Previous ISP Design gives batch sizes,
// not the batching algorithm). The nodes carry no segment hint, so the
// Bare baseline places them by its per-operation rule.
func (s PIRShape) Batched(batch int) (*ir.Program, error) {
	if batch <= 1 {
		return s.Program()
	}
	p, err := fhe.Lookup(s.Params)
	if err != nil {
		return nil, fmt.Errorf("workload: batched PIR: %w", err)
	}
	top := p.Levels()
	b := ir.NewBuilder(fmt.Sprintf("%s-b%d", s.Name, batch), s.Params)
	db := b.SetRole(b.StoredCompact("database", top, s.Rows*s.Cols), ir.RoleDatabase)
	for q := 0; q < batch; q++ {
		colSel := b.SetRole(b.InputN(fmt.Sprintf("col-selection/%d", q), top, s.Cols), ir.RoleQuery)
		rowSel := b.SetRole(b.InputN(fmt.Sprintf("row-selection/%d", q), top, s.Rows), ir.RoleQuery)
		rowSums := b.Sum(b.PMult(colSel, db), s.Rows)
		ans := b.Rescale(b.Sum(b.MulRelin(rowSums, rowSel), 1))
		b.Output(fmt.Sprintf("answer/%d", q), ans)
	}
	return b.Build()
}

func init() {
	register(Workload{
		Name:        "pir",
		Description: "PIR database scan on BGV (VCaLL: 2^32 records of 96 B)",
		Source:      "Rosemary §Workloads: SmartPIR on BGV, logQP=218, depth 2, VCaLL 2^32 × 96 B",
		Full: func() (*ir.Program, error) {
			s, err := PIRDatabase("pir-vcall", "pir-bgv", 1<<32, 96)
			if err != nil {
				return nil, err
			}
			return s.Program()
		},
		Small: func() (*ir.Program, error) {
			return PIRShape{Name: "pir-small", Params: "insecure-test-bgv", Rows: 4, Cols: 4}.Program()
		},
	})
}

// ExpandedPIR is the PIR scan with a one-ciphertext query expanded on the
// server (Angel, Chen, Laine, Setty, "PIR with Compressed Queries and
// Amortized Query Processing", IEEE S&P 2018): the query's odd
// coefficients select a column, its even coefficients a row (ir.Expand
// places the leaves), each selection is rescaled once, and the scan and
// the row product run one level lower. Rows and Cols are powers of two.
// The database plaintexts are stored compact.
type ExpandedPIR struct {
	Name       string
	Params     string
	Rows, Cols int64
}

// Program builds the expanded-query PIR scan.
func (s ExpandedPIR) Program() (*ir.Program, error) {
	p, err := fhe.Lookup(s.Params)
	if err != nil {
		return nil, err
	}
	if p.Scheme != fhe.BGV || p.Levels() < 2 {
		return nil, fmt.Errorf("workload: expanded PIR needs BGV with two levels, %s has %d", s.Params, p.Levels())
	}
	top := p.Levels()
	b := ir.NewBuilder(s.Name, s.Params)
	b.Segment(ir.Linear)
	q := b.SetRole(b.Input("query", top), ir.RoleQuery)
	colSel := b.Rescale(b.Expand(q, s.Cols, ir.ExpandSpec{Prefix: 1, PrefixBits: 1}))
	rowSel := b.Rescale(b.Expand(q, s.Rows, ir.ExpandSpec{Prefix: 0, PrefixBits: 1}))
	db := b.SetRole(b.StoredCompact("database", top-1, s.Rows*s.Cols), ir.RoleDatabase)
	rowSums := b.Sum(b.PMult(colSel, db), s.Rows) // instance r·Cols + c uses column c's selection
	ans := b.Rescale(b.Sum(b.MulRelin(rowSums, rowSel), 1))
	b.Output("answer", ans)
	return b.Build()
}

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
