package rns

import (
	"fmt"
	"testing"
)

// TestShoup52Barrett checks the division-free 52-bit Shoup quotient against
// the exact division on edge values and random ones, for small to 49-bit q.
func TestShoup52Barrett(t *testing.T) {
	for _, q := range []uint64{3, 17, 1053818881, largestNTTPrime(t, 40, 10), largestNTTPrime(t, 49, 10), 1<<50 - 27} {
		c := newShoup52Barrett(q)
		ws := append([]uint64{0, 1, 2, q / 2, q - 2, q - 1}, randLimb(t, 1<<15, q)...)
		for _, w := range ws {
			if got, want := c.of(w), shoup52(w, q); got != want {
				t.Fatalf("q=%d w=%d: shoup52Barrett %d, want %d", q, w, got, want)
			}
		}
	}
}

// TestLeanTableMatchesFull checks that the lean table's arrays equal the
// full table's (the entries it keeps) and that its transforms are
// bit-identical to the full table's, on the fast path and the Go fallback,
// for forward-only, backward-only and two-way tables, including a table
// retargeted from another prime.
func TestLeanTableMatchesFull(t *testing.T) {
	for _, c := range []struct{ logN, bits int }{{4, 30}, {5, 30}, {6, 30}, {10, 30}, {12, 30}, {12, 45}, {14, 49}} {
		n := 1 << c.logN
		qs := nttPrimes(t, c.bits, c.logN, 2)
		for _, q := range qs {
			full, err := NewNTTTable(n, q)
			if err != nil {
				t.Fatal(err)
			}
			both, err := NewNTTTableLean(n, q, NTTForward|NTTBackward)
			if err != nil {
				t.Fatal(err)
			}
			// Arrays: the kept entries equal the full table's.
			for k := 0; k < n; k++ {
				if both.leanRoot(k, false) != full.Roots[k] || both.leanRoot(k, true) != full.RootsInv[k] {
					t.Fatalf("N=%d q=%d: lean root %d differs", n, q, k)
				}
			}
			assertEqual(t, "roots52", both.roots52, full.roots52[:n/4])
			assertEqual(t, "rootsInv52", both.rootsInv52, full.rootsInv52[:n/4])
			for i := range 4 {
				assertEqual(t, fmt.Sprintf("fwdInner52[%d]", i), both.fwdInner52[i], full.fwdInner52[i])
				assertEqual(t, fmt.Sprintf("invInner52[%d]", i), both.invInner52[i], full.invInner52[i])
			}
			if both.invLastW != full.invLastW || both.invLastW52 != full.invLastW52 || both.nInv52 != full.nInv52 {
				t.Fatalf("N=%d q=%d: lean scalars differ", n, q)
			}
			if got, want := both.TableBytes(), 8*4*n; got != want {
				t.Fatalf("N=%d: lean two-way table holds %d bytes, want %d", n, got, want)
			}
			// A table for the other prime retargeted to q.
			other := qs[0]
			if other == q {
				other = qs[1]
			}
			re, err := NewNTTTableLean(n, other, NTTForward|NTTBackward)
			if err != nil {
				t.Fatal(err)
			}
			hdr, err := NewNTTTableLean(n, q, 0)
			if err != nil {
				t.Fatal(err)
			}
			if hdr.TableBytes() != 0 {
				t.Fatalf("header holds %d bytes", hdr.TableBytes())
			}
			if err := re.Retarget(hdr); err != nil {
				t.Fatal(err)
			}
			fwd, _ := NewNTTTableLean(n, q, NTTForward)
			bwd, _ := NewNTTTableLean(n, q, NTTBackward)
			bothPaths(t, func(t *testing.T) {
				for trial := 0; trial < 3; trial++ {
					in := randLimb(t, n, q)
					if trial == 2 {
						in = randLimb(t, n, 4*q) // lazy inputs below 4q
					}
					label := fmt.Sprintf("N=%d q=%d", n, q)
					matchesFull(t, label+" Forward", in, full, map[string]*NTTTable{"both": both, "fwd": fwd, "retargeted": re},
						(*NTTTable).Forward, (*NTTTable).ForwardLazy)
					matchesFull(t, label+" Backward", in, full, map[string]*NTTTable{"both": both, "bwd": bwd, "retargeted": re},
						(*NTTTable).Backward, (*NTTTable).BackwardLazy)
				}
			})
		}
	}
}

func TestLeanTableErrors(t *testing.T) {
	if _, err := NewNTTTableLean(1024, largestNTTPrime(t, 55, 10), NTTForward); err == nil {
		t.Error("q ≥ 2^50 accepted")
	}
	if _, err := NewNTTTableLean(1000, 1053818881, NTTForward); err == nil {
		t.Error("N not a power of two accepted")
	}
	a, _ := NewNTTTableLean(1024, 1053818881, NTTForward)
	b, _ := NewNTTTableLean(2048, 1053818881, 0)
	if err := a.Retarget(b); err == nil {
		t.Error("Retarget across degrees accepted")
	}
	full, _ := NewNTTTable(1024, 1053818881)
	if err := a.Retarget(full); err == nil {
		t.Error("Retarget from a full table accepted")
	}
	defer func() {
		if recover() == nil {
			t.Error("Backward on a forward-only lean table did not panic")
		}
	}()
	v := make([]uint64, 1024)
	a.Backward(v, v)
}

func BenchmarkLeanRetarget(b *testing.B) {
	for _, logN := range []int{12, 14} {
		n := 1 << logN
		qs := nttPrimes(b, 30, logN, 2)
		t0, _ := NewNTTTableLean(n, qs[0], NTTForward)
		h, _ := NewNTTTableLean(n, qs[1], 0)
		x := make([]uint64, n)
		b.Run(fmt.Sprintf("logN=%d/retarget-fwd", logN), func(b *testing.B) {
			for b.Loop() {
				if err := t0.Retarget(h); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("logN=%d/ntt", logN), func(b *testing.B) {
			for b.Loop() {
				t0.Forward(x, x)
			}
		})
	}
}

// matchesFull checks that every lean table of tables transforms in as the
// full table does, exactly and (within the lazy range) lazily in place.
func matchesFull(t *testing.T, what string, in []uint64, full *NTTTable, tables map[string]*NTTTable,
	transform, lazy func(tb *NTTTable, in, out []uint64)) {
	t.Helper()
	want := make([]uint64, len(in))
	transform(full, in, want)
	for name, tb := range tables {
		got := make([]uint64, len(in))
		transform(tb, in, got)
		assertEqual(t, what+" "+name, got, want)
		copy(got, in)
		lazy(tb, got, got)
		checkLazy(t, what+"Lazy "+name, got, want, full.Q)
	}
}
