package workload

import (
	"fmt"
	"math"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/fhe"
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
