package lower

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// LWESpec makes a stream program the answer of the hint-free LWE PIR
// (package fhe/lwepir) over one database: the scan D·q over the stored
// tiles and the evaluation of the stored hint diagonals on the encrypted
// secret. Its nodes are fixed (LWEProgram builds them) and the device runs
// them natively rather than as mProgram bodies: the scan is one 32-bit
// multiply-add per stored byte, which the ISA's modular lanes would only slow.
// It is the spec an IR LWE scan names (ir.Node.LWE), from which
// compiler.Plan.StreamSegment builds the program.
type LWESpec = ir.LWESpec

// Nodes of an LWE answer program (their node numbers and indices, fixed:
// the IR nodes of the plan that emits the program model its cost).
const (
	LWEQuery     = 0 // input: the query vector, two 32-bit entries per word
	LWESecret    = 1 // input: the BGV encryption of the LWE secret
	LWETiles     = 2 // stored: one object per tile of Rows × N bytes
	LWEDiagonals = 3 // stored: one object per giant step (b1 diagonals)
	LWEColumn    = 4 // output: D·q, two 32-bit entries per word
	LWEHint      = 5 // output: H·s, one ciphertext per hint ciphertext
)

// LWEKey names the key of a column rotation by r in an LWE answer run
// (api.KeyBinding.Key): the Galois keys of the client's ring secret, each
// a blob object holding the key's encoding.
func LWEKey(r int) string { return lweKeyPrefix + strconv.Itoa(r) }

const lweKeyPrefix = "rot"

// ParseLWEKey is the inverse of LWEKey: a rotation ≥ 1 in its one decimal
// form ("rot05" or "rot+5" name none).
func ParseLWEKey(name string) (int, bool) {
	digits, ok := strings.CutPrefix(name, lweKeyPrefix)
	r, err := strconv.Atoi(digits)
	if !ok || err != nil || r < 1 || strconv.Itoa(r) != digits {
		return 0, false
	}
	return r, true
}

// LWEProgram is the stream program answering queries of the database of the
// given shape.
func LWEProgram(name string, p lwepir.Params, shape lwepir.Shape) (*StreamProgram, error) {
	if err := shape.Validate(p); err != nil {
		return nil, err
	}
	pname := p.Name()
	if pname == "" {
		return nil, fmt.Errorf("lower: LWE parameters without a name")
	}
	logN, q, pp, t, err := p.HintRing()
	if err != nil {
		return nil, err
	}
	n := int64(1) << logN
	words := func(entries int) int64 { return (int64(entries)/2 + n - 1) / n }
	l := shape.Layout(p)
	outs := int64(l.Outputs)
	return &StreamProgram{
		Workload: name,
		Scheme:   fhe.BGV,
		T:        t,
		Ring:     Ring{LogN: logN, Q: q, P: pp},
		LWE:      &LWESpec{Params: pname, Rows: shape.Rows, Cols: shape.Cols, RecordSize: shape.RecordSize},
		Nodes: []StreamNode{
			{Node: LWEQuery, Kind: StreamInput, Name: "query", Count: words(shape.Cols), Polys: 1, Limbs: 1},
			{Node: LWESecret, Kind: StreamInput, Name: "secret", Count: 1, Polys: 2, Limbs: len(q)},
			{Node: LWETiles, Kind: StreamStored, Name: "tiles", Count: int64(shape.Tiles(p)), Polys: 1, Limbs: 1},
			{Node: LWEDiagonals, Kind: StreamStored, Name: "diagonals", Count: outs * int64(l.B2), Polys: 1, Limbs: len(q)},
			{Node: LWEColumn, Kind: StreamOp, Name: "column", Count: words(shape.Rows), Polys: 1, Limbs: 1, Args: []int{LWEQuery, LWETiles}, Out: true},
			{Node: LWEHint, Kind: StreamOp, Name: "hint", Count: outs, Polys: 2, Limbs: 1, Args: []int{LWESecret, LWEDiagonals}, Out: true},
		},
	}, nil
}

// validateLWE checks an LWE program: it must be exactly what LWEProgram
// builds for its spec, but for its labels (workload name, plan segment).
func (sp *StreamProgram) validateLWE() error {
	p, shape, err := sp.LWE.Shape()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStreamProgram, err)
	}
	want, err := LWEProgram(sp.Workload, p, shape)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStreamProgram, err)
	}
	want.Segment = sp.Segment
	a, _ := sp.MarshalBinary()
	b, _ := want.MarshalBinary()
	if string(a) != string(b) {
		return fmt.Errorf("%w: an LWE program must have the nodes and ring of its spec", ErrStreamProgram)
	}
	return nil
}
