//go:build amd64 && !purego

package matvec

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// supported reports whether the CPU (and the OS, which must save the wide
// registers; x/sys/cpu checks it) runs kernel k.
func supported(k kernel) bool {
	switch k {
	case kernelAVX2:
		return cpu.X86.HasAVX2
	case kernelVNNI:
		return cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI
	}
	return k == kernelGo
}

// asmQuery is one query's part of an assembly call (the layout the .s files
// read: 24 bytes): where its four sums per row block are added, its first
// digit plane at the call's first column, and the distance in bytes between
// its planes.
type asmQuery struct {
	acc   *uint32
	plane unsafe.Pointer
	step  int
}

// vnniMulAdd adds to qs[b].acc[i], for i < rows (a multiple of 4), row i of
// the matrix at tile (stride bytes a row) times query b over width columns
// (a multiple of 64, > 0), from four planes of 8-bit digits.
//
//go:noescape
func vnniMulAdd(qs *asmQuery, nq int, tile *byte, stride, rows, width int)

// vnniMulAddRows adds to acc[i], for i < rows (> 0), row i of the matrix
// at tile (stride bytes a row) times one query over width columns (a
// multiple of 64, > 0), from four planes of 8-bit digits step bytes apart
// starting at plane: a single query's kernel, reading the rows in order.
//
//go:noescape
func vnniMulAddRows(acc *uint32, plane unsafe.Pointer, step int, tile *byte, stride, rows, width int)

// avx2MulAdd is vnniMulAdd from two planes of 16-bit digits (width a
// multiple of 32, > 0).
//
//go:noescape
func avx2MulAdd(qs *asmQuery, nq int, tile *byte, stride, rows, width int)

// avx2MulAddRows is vnniMulAddRows from two planes of 16-bit digits, step
// bytes apart.
//
//go:noescape
func avx2MulAddRows(acc *uint32, plane unsafe.Pointer, step int, tile *byte, stride, rows, width int)

// mulAddAsm runs kernel k (every query laid out for it) over the rows and
// columns the assembly covers (rows in fours, columns in 64s) and leaves the
// rest to the Go tail.
func mulAddAsm(k kernel, accs [][]uint32, tile []byte, qs []*Query, off int) {
	rows := len(accs[0])
	cols := len(tile) / rows
	rows4, width := rows&^(RowBlock-1), cols&^63
	if len(qs) == 1 && width >= rowKernelWidth {
		// One query over long rows: every row in order, the columns past
		// the last 64 left to the Go tail.
		q := qs[0]
		if k == kernelVNNI {
			vnniMulAddRows(&accs[0][0], unsafe.Pointer(&q.planes8[off]), q.n, &tile[0], cols, rows, width)
		} else {
			avx2MulAddRows(&accs[0][0], unsafe.Pointer(&q.planes16[off]), 2*q.n, &tile[0], cols, rows, width)
		}
		mulAddTail(accs, tile, qs, off, rows, width)
		return
	}
	if rows4 > 0 && width > 0 {
		// The argument list lives on the stack up to the device's largest
		// batch (64 queries, 1.5 KiB): allocated per call, it was 1% of a
		// batch of 64's device time and part of its garbage. (A single
		// query over an LWE tile's rows takes the row kernel above.)
		var buf [64]asmQuery
		args := buf[:0]
		if len(qs) > len(buf) {
			args = make([]asmQuery, 0, len(qs))
		}
		args = args[:len(qs)]
		colStep, rowStep := blocks(len(qs), width, rows4)
		for r0 := 0; r0 < rows4; r0 += rowStep {
			nr := min(rowStep, rows4-r0)
			for c0 := 0; c0 < width; c0 += colStep {
				w := min(colStep, width-c0)
				for b, q := range qs {
					args[b].acc = &accs[b][r0]
					switch k {
					case kernelVNNI:
						args[b].plane, args[b].step = unsafe.Pointer(&q.planes8[off+c0]), q.n
					default:
						args[b].plane, args[b].step = unsafe.Pointer(&q.planes16[off+c0]), 2*q.n
					}
				}
				t := &tile[r0*cols+c0]
				if k == kernelVNNI {
					vnniMulAdd(&args[0], len(args), t, cols, nr, w)
				} else {
					avx2MulAdd(&args[0], len(args), t, cols, nr, w)
				}
			}
		}
	}
	mulAddTail(accs, tile, qs, off, rows4, width)
}

// rowKernelWidth is the narrowest row a single query reads row by row:
// each row ends in a reduction across lanes, which rows of 256 bytes (a
// matrix of 8192 × 256 in cache) pay for with a fifth of their rate; an
// LWE tile's rows are 2048.
const rowKernelWidth = 1024

// planeBudget is how many bytes of digit planes a call keeps hot: the
// column blocks of a batch are narrowed so that every query's planes for
// one block (4 bytes a column) stay in a core's L2 while the rows pass.
// Measured on the streamed benchmark (Zen 5, 1 MiB L2) at 2048–8192
// columns and batches of 16 and 64: 256 KiB is within 15% of the best
// everywhere, where 1 MiB and more lose half at 8192 columns.
const planeBudget = 256 << 10

// blocks is how an assembly call splits the matrix for nq queries: colStep
// columns (a multiple of 64) by rowStep rows (a multiple of 4). One query's
// planes fit the budget whole, so the matrix is one call; a large batch's do
// not, and each block of rows is swept in column blocks whose planes do,
// every matrix byte still read from memory once.
func blocks(nq, width, rows int) (colStep, rowStep int) {
	colStep = max(planeBudget/(4*nq)&^63, 512)
	if colStep >= width {
		return width, rows
	}
	return colStep, min(rows, 64)
}

// vnniRoof and avx2Roof run n iterations of twelve independent multiply-adds
// on registers (roof_amd64.s); the result shows every one ran.
//
//go:noescape
func vnniRoof(n int) uint32

//go:noescape
func avx2Roof(n int) uint32

// roofLoop is kernel k's register-only loop and the query-bytes one
// iteration covers (Roof).
func roofLoop(k kernel) (func(int) uint32, float64) {
	switch k {
	case kernelVNNI:
		return vnniRoof, 12 * 64 / 4
	case kernelAVX2:
		return avx2Roof, 12 * 16 / 2
	}
	return nil, 0
}
