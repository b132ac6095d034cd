package lower

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/compiler/isa"
)

// lweScan lowers one instance of ir.OpLWEScan: N columns of the scan D·q
// into the accumulator. Input object 1 is the query limb (N words), input
// object 2 the matrix block (N/4 limbs, limb g holding columns 4g…4g+3 of
// the N rows, row r's four bytes in word r), the output object the
// accumulator, read and written back: instances add up. Each block limb is
// one LWEMAC against words 4g…4g+3 of the query.
func (l *lowering) lweScan() (inputs []Object, out Object, err error) {
	n := l.cfg.N()
	groups := n / 4
	if groups > isa.MaxLWEGroups {
		return nil, Object{}, fmt.Errorf("lower: an LWE scan block of %d columns has more than the %d word groups LWEMAC names", n, isa.MaxLWEGroups)
	}
	if groups > 1<<isa.LimbBits {
		return nil, Object{}, fmt.Errorf("lower: %d limbs per matrix block exceed an object address", groups)
	}
	q, acc, d := l.alloc(), l.alloc(), l.alloc()
	l.emit(isa.Instr{Op: isa.OpLD, A: isa.Obj(isa.SpaceDRAM, objIn0, 0), Out: q})
	l.emit(isa.Instr{Op: isa.OpLD, A: isa.Obj(isa.SpaceDRAM, objOut, 0), Out: acc})
	for g := 0; g < groups; g++ {
		l.emit(isa.Instr{Op: isa.OpLD, A: isa.Obj(isa.SpaceDRAM, objIn1, g), Out: d})
		l.emit(isa.Instr{Op: isa.OpLWEMAC, A: d, B: isa.Words(q.Space(), q.Index(), g), Out: acc})
	}
	l.emit(isa.Instr{Op: isa.OpST, A: acc, Out: isa.Obj(isa.SpaceDRAM, objOut, 0)})
	inputs = []Object{{Role: "query", Space: isa.SpaceDRAM, ID: objIn0, Polys: 1, Limbs: 1},
		{Role: "matrix", Space: isa.SpaceDRAM, ID: objIn1, Polys: 1, Limbs: groups}}
	return inputs, Object{Role: "out", Space: isa.SpaceDRAM, ID: objOut, Polys: 1, Limbs: 1}, nil
}
