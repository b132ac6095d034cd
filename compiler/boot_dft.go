package compiler

import (
	"sort"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
)

// dft emits lintrans.Evaluator.EvaluateSequential
// (circuits/common/lintrans/lintrans_evaluator.go) over the matrices of one
// homomorphic DFT: per matrix one BSGS product and one Rescale.
func (e *bootEmitter) dft(ct int, b bootShape, encode bool) int {
	levels, name := b.StCLevels, "stc"
	if encode {
		levels, name = b.CtSLevels, "cts"
	}
	// dft.NewMatrixFromLiteral: the matrices act on 2·slots values when
	// the slots are sparse (RepackImagAsReal packs the imaginary parts into
	// the second half).
	dslots := 1 << b.LogSlots
	if !b.full {
		dslots <<= 1
	}
	for m, diags := range dftDiagonals(b.LogSlots, b.logN, levels, encode) {
		ct = e.rescale(e.bsgs(ct, diags, dslots, name, m))
	}
	return ct
}

// bsgs emits lintrans.Evaluator.MultiplyByDiagMatrixBSGS (after
// PreRotatedCiphertextForDiagonalMatrixMultiplication) for a matrix with
// the given non-zero diagonals: one (hoisted) rotation per distinct
// non-zero baby step, one PMult per diagonal, HAdds within each giant-step
// group, one rotation per non-zero giant step, HAdds across the groups.
// The BSGS split is Lattigo's: LogBabyStepGiantStepRatio 1 (bootstrapping/
// parameters.go), N1 from FindBestBSGSRatio, groups from BSGSIndex
// (circuits/common/lintrans/lintrans.go).
func (e *bootEmitter) bsgs(ct int, diags []int, slots int, dft string, matrix int) int {
	n1 := lower.BestBSGSRatio(diags, slots, 1)
	index, giant, baby := lower.BSGSIndex(diags, slots, n1)
	rotated := map[int]int{0: ct}
	for _, i := range baby {
		if i != 0 {
			rotated[i] = e.rot(ct, i)
		}
	}
	level := e.level(ct)
	acc := -1
	for _, j := range giant {
		inner := -1
		for _, i := range index[j] {
			t := e.op(ir.OpPMult, level, 1, rotated[i], e.diagonal(dft, matrix, j+i, level))
			if inner < 0 {
				inner = t
			} else {
				inner = e.hadd(inner, t)
			}
		}
		if j != 0 {
			inner = e.rot(inner, j)
		}
		if acc < 0 {
			acc = inner
		} else {
			acc = e.hadd(acc, inner)
		}
	}
	// Name the product so that an executor can run it as Lattigo's hoisted
	// BSGS program (lower.LinearTransform).
	e.out.Nodes[acc].Name = lower.BootLinearTransform{DFT: dft, Matrix: matrix, Slots: slots, Input: acc - ct}.String()
	return acc
}

// dftDiagonals returns, for each matrix of a homomorphic DFT over 2^logSlots
// slots factored into `depth` matrices (one per level, Lattigo's default
// Levels = [1, 1, …]), the indices of its non-zero diagonals. It follows
// dft.MatrixLiteral.computeBootstrappingDFTIndexMap (circuits/ckks/dft/
// dft.go) for Format RepackImagAsReal and BitReversed false: the logSlots
// radix-2 butterfly stages are merged ⌈remaining/(matrices left)⌉ at a time
// (front-loaded for the encoding, back-loaded for the decoding); a stage
// acting at distance r turns each diagonal d into d, d+r and d−r. When
// slots are sparse the first decoding matrix starts from the repacking
// matrix (diagonals 0 and slots) and works modulo 2·slots.
func dftDiagonals(logSlots, logN, depth int, encode bool) [][]int {
	merge := make([]int, depth)
	left := logSlots
	for i := 0; i < depth; i++ {
		d := (left + depth - i - 1) / (depth - i) // ⌈left/(depth−i)⌉
		if encode {
			merge[i] = d
		} else {
			merge[depth-1-i] = d
		}
		left -= d
	}
	// stage returns the butterfly distance of FFT stage `level`.
	stage := func(level, mod int) int {
		if encode {
			return (1 << (level - 1)) & (mod - 1)
		}
		return (1 << (logSlots - level)) & (mod - 1)
	}
	slots := 1 << logSlots
	out := make([][]int, depth)
	level := logSlots
	for i := 0; i < depth; i++ {
		var set map[int]bool
		mod, next, extra := slots, level-1, merge[i]-1
		if logSlots < logN-1 && !encode && i == 0 {
			mod = 2 * slots
			set = map[int]bool{0: true, slots: true}
			next, extra = level, merge[i]
		} else {
			r := stage(level, slots)
			set = map[int]bool{0: true, r: true, slots - r: true}
		}
		for k := 0; k < extra; k++ {
			r := stage(next, mod)
			grown := make(map[int]bool, 3*len(set))
			for d := range set {
				grown[d] = true
				grown[(d+r)&(mod-1)] = true
				grown[(d-r)&(mod-1)] = true
			}
			set = grown
			next--
		}
		out[i] = sortedKeys(set)
		level -= merge[i]
	}
	return out
}

func sortedKeys(m map[int]bool) []int {
	s := make([]int, 0, len(m))
	for k := range m {
		s = append(s, k)
	}
	sort.Ints(s)
	return s
}
