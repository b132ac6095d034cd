package edge

import (
	"fmt"
	"testing"

	"github.com/rosemary-fhe/rosemary/fhe/rns"
	"github.com/tuneinsight/lattigo/v6/ring"
)

// Primes exercised: SEAL-Embedded's 27- and 30-bit primes and two NTT-friendly
// primes near 2^60 and 2^61 (q < 2^62 is the supported range).
var nttTestPrimes = []uint64{134012929, 1053818881, 1062535169, 1152921504606584833, 2305843009211596801}

func randPoly(p *PRNG, n int, q uint64) []uint64 {
	a := make([]uint64, n)
	p.SampleUniform(a, q)
	return a
}

// Brute force: slot j of the forward NTT is a(ψ^(2·brev(j)+1)).
func TestNTTBruteForce(t *testing.T) {
	prng := NewPRNG(fixedSeed())
	for _, n := range []int{2, 4, 8, 16, 32, 64} {
		q := uint64(1053818881)
		tab, err := NewTableNTT(n, q)
		if err != nil {
			t.Fatal(err)
		}
		fly, _ := NewFlyNTT(n, q)
		a := randPoly(prng, n, q)
		m := &tab.mod
		want := make([]uint64, n)
		for j := 0; j < n; j++ {
			x := rns.ModExp(tab.psi, 2*brev(uint64(j), tab.logN)+1, m.Q)
			acc, pw := uint64(0), uint64(1)
			for _, c := range a {
				acc = (acc + m.BRed(c, pw)) % q
				pw = m.BRed(pw, x)
			}
			want[j] = acc
		}
		for name, ntt := range map[string]NTT{"table": tab, "fly": fly} {
			b := append([]uint64(nil), a...)
			ntt.Forward(b)
			for j := range b {
				if b[j] != want[j] {
					t.Fatalf("%s n=%d slot %d: got %d want %d", name, n, j, b[j], want[j])
				}
			}
			ntt.Inverse(b)
			for j := range b {
				if b[j] != a[j] {
					t.Fatalf("%s n=%d: inverse mismatch at %d", name, n, j)
				}
			}
		}
	}
}

// Bit-identical to Lattigo v6's ring NTT/INTT (same ψ, same order).
func TestNTTMatchesLattigo(t *testing.T) {
	prng := NewPRNG(fixedSeed())
	for _, n := range []int{1024, 4096, 16384} {
		for _, q := range nttTestPrimes {
			if (q-1)%uint64(2*n) != 0 {
				continue
			}
			t.Run(fmt.Sprintf("N=%d/q=%d", n, q), func(t *testing.T) {
				r, err := ring.NewRing(n, []uint64{q})
				if err != nil {
					t.Fatal(err)
				}
				tab, err := NewTableNTT(n, q)
				if err != nil {
					t.Fatal(err)
				}
				fly, err := NewFlyNTT(n, q)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := tab.Psi(), r.SubRings[0].RootsForward[n/2]; ring.MForm(got, q, r.SubRings[0].BRedConstant) != want {
					t.Fatalf("ψ differs from Lattigo's")
				}
				a := randPoly(prng, n, q)
				lp := r.NewPoly()
				copy(lp.Coeffs[0], a)
				r.NTT(lp, lp)
				for name, ntt := range map[string]NTT{"table": tab, "fly": fly} {
					b := append([]uint64(nil), a...)
					ntt.Forward(b)
					for j := range b {
						if b[j] != lp.Coeffs[0][j] {
							t.Fatalf("%s forward slot %d: got %d, lattigo %d", name, j, b[j], lp.Coeffs[0][j])
						}
					}
					// Inverse of Lattigo's output must match Lattigo's INTT.
					c := append([]uint64(nil), lp.Coeffs[0]...)
					ntt.Inverse(c)
					li := r.NewPoly()
					r.INTT(lp, li)
					for j := range c {
						if c[j] != li.Coeffs[0][j] || c[j] != a[j] {
							t.Fatalf("%s inverse coeff %d: got %d, lattigo %d, orig %d", name, j, c[j], li.Coeffs[0][j], a[j])
						}
					}
				}
			})
		}
	}
}

func TestNTTRejectsBadInput(t *testing.T) {
	if _, err := NewTableNTT(1000, 1053818881); err == nil {
		t.Error("non power of two accepted")
	}
	if _, err := NewFlyNTT(1<<16, 1062535169); err == nil {
		t.Error("q not 1 mod 2N accepted") // 1062535169-1 = 2^16·odd, not 1 mod 2^17
	}
	if _, err := NewTableNTT(16, 1053818883); err == nil {
		t.Error("composite accepted")
	}
	if _, err := NewModulus(1 << 62); err == nil {
		t.Error("q ≥ 2^62 accepted")
	}
}

func BenchmarkNTT(b *testing.B) {
	for _, n := range []int{4096, 16384} {
		q := uint64(1053818881)
		tab, _ := NewTableNTT(n, q)
		fly, _ := NewFlyNTT(n, q)
		r, _ := ring.NewRing(n, []uint64{q})
		a := randPoly(NewPRNG(fixedSeed()), n, q)
		b.Run(fmt.Sprintf("table/N=%d", n), func(b *testing.B) {
			cpuLoop(b, func() { tab.Forward(a) })
		})
		b.Run(fmt.Sprintf("fly/N=%d", n), func(b *testing.B) {
			cpuLoop(b, func() { fly.Forward(a) })
		})
		b.Run(fmt.Sprintf("fly3/N=%d", n), func(b *testing.B) {
			a2, a3 := append([]uint64(nil), a...), append([]uint64(nil), a...)
			cpuLoop(b, func() { fly.Forward3(a, a2, a3) })
		})
		b.Run(fmt.Sprintf("lattigo/N=%d", n), func(b *testing.B) {
			p := r.NewPoly()
			copy(p.Coeffs[0], a)
			cpuLoop(b, func() { r.NTT(p, p) })
		})
	}
}

// Forward3 (shared on-the-fly twiddles) equals three Forward calls, for odd
// and even log N, with nil polynomials skipped.
func TestForward3(t *testing.T) {
	prng := NewPRNG(fixedSeed())
	for _, n := range []int{2, 4, 8, 32, 512, 1024, 2048} {
		q := uint64(1053818881)
		fly, _ := NewFlyNTT(n, q)
		tab, _ := NewTableNTT(n, q)
		a, b, c := randPoly(prng, n, q), randPoly(prng, n, q), randPoly(prng, n, q)
		for name, ntt := range map[string]NTT{"fly": fly, "table": tab} {
			x, y, z := append([]uint64(nil), a...), append([]uint64(nil), b...), append([]uint64(nil), c...)
			ntt.Forward3(x, nil, z)
			ntt.Forward3(nil, y, nil)
			for _, pr := range [][2][]uint64{{a, x}, {b, y}, {c, z}} {
				want := append([]uint64(nil), pr[0]...)
				tab.Forward(want)
				for j := range want {
					if pr[1][j] != want[j] {
						t.Fatalf("%s N=%d: Forward3 differs at %d", name, n, j)
					}
				}
			}
		}
	}
}

// The edge NTTs give the same results as the verified core's rns NTT.
func TestNTTMatchesRNS(t *testing.T) {
	prng := NewPRNG(fixedSeed())
	for _, n := range []int{1024, 4096} {
		for _, q := range []uint64{1053818881, 1062535169, 1152921504606584833} {
			rt, err := rns.NewNTTTable(n, q)
			if err != nil {
				t.Fatal(err)
			}
			tab, _ := NewTableNTT(n, q)
			fly, _ := NewFlyNTT(n, q)
			a := randPoly(prng, n, q)
			want := make([]uint64, n)
			rt.Forward(a, want)
			for name, ntt := range map[string]NTT{"table": tab, "fly": fly} {
				b := append([]uint64(nil), a...)
				ntt.Forward(b)
				for j := range b {
					if b[j] != want[j] {
						t.Fatalf("%s N=%d q=%d: differs from rns at %d", name, n, q, j)
					}
				}
			}
		}
	}
}
