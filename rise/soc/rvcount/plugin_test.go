package rvcount

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// A hand-written riscv64 program with a known instruction count between
// its marks: the plugin counts it exactly. Between mark 1's ecall and mark
// 2's ecall run 1000 addi, then li a0 and ecall (a7 still holds the marker
// number) → 1002; between marks 2 and 3 li t1, a 10-iteration loop of 3
// instructions, li a0 and ecall → 33.
func TestPluginCountsExactly(t *testing.T) {
	qemu, err1 := exec.LookPath("qemu-riscv64")
	cc, err2 := exec.LookPath("cc")
	as, err3 := exec.LookPath("riscv64-linux-gnu-as")
	ld, err4 := exec.LookPath("riscv64-linux-gnu-ld")
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		t.Skip("needs qemu-riscv64, cc and riscv64-linux-gnu binutils")
	}
	dir := t.TempDir()
	src := `.globl _start
_start:
	li a7, ` + strconv.Itoa(MarkSyscall) + `
	li a0, 0
	ecall
	li a0, 1
	ecall
	.rept 1000
	addi t0, t0, 1
	.endr
	li a0, 2
	ecall
	li t1, 10
1:	addi t0, t0, 1
	addi t1, t1, -1
	bnez t1, 1b
	li a0, 3
	ecall
	li a7, 93
	li a0, 0
	ecall
`
	s, o, bin := filepath.Join(dir, "p.s"), filepath.Join(dir, "p.o"), filepath.Join(dir, "p")
	if err := os.WriteFile(s, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(as, "-march=rv64g", "-o", o, s).CombinedOutput(); err != nil {
		t.Fatalf("as: %v\n%s", err, out)
	}
	if out, err := exec.Command(ld, "-o", bin, o).CombinedOutput(); err != nil {
		t.Fatalf("ld: %v\n%s", err, out)
	}
	ctx := context.Background()
	q, err := NewQemu(ctx, Tools{Qemu: qemu, CC: cc}, dir)
	if err != nil {
		t.Fatal(err)
	}
	l, _, err := q.Run(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	ph, err := l.Phases()
	if err != nil {
		t.Fatal(err)
	}
	if ph[1] != 2 || ph[2] != 1002 || ph[3] != 33 {
		t.Fatalf("phases %v, want 1:2 2:1002 3:33", ph)
	}
	// The whole program: 3 + 2 + 1002 + 33 + 3 (exit) = 1043 instructions.
	if l.Total != 1043 {
		t.Fatalf("total %d, want 1043", l.Total)
	}
}
