package rns

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/tuneinsight/lattigo/v6/ring"
)

// testPrimes returns count NTT-friendly primes of the given bit size for N.
func testPrimes(t testing.TB, logN, bitSize, count int) []uint64 {
	t.Helper()
	g := ring.NewNTTFriendlyPrimesGenerator(uint64(bitSize), uint64(2<<logN))
	ps, err := g.NextAlternatingPrimes(count)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func randLimb(t testing.TB, n int, bound uint64) []uint64 {
	t.Helper()
	buf := make([]byte, 8*n)
	if _, err := rand.Read(buf); err != nil {
		t.Fatal(err)
	}
	v := make([]uint64, n)
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(buf[8*i:]) % bound
	}
	return v
}

// bothPaths runs f with the fast paths on (where the CPU has them) and off.
func bothPaths(t *testing.T, f func(t *testing.T)) {
	for _, pure := range []bool{false, true} {
		name := "fast"
		if pure {
			name = "purego"
		}
		t.Run(name, func(t *testing.T) {
			SetPureGo(pure)
			defer SetPureGo(false)
			f(t)
		})
	}
}

func TestModulusMatchesLattigo(t *testing.T) {
	for _, q := range testPrimes(t, 12, 50, 2) {
		m, err := NewModulus(q)
		if err != nil {
			t.Fatal(err)
		}
		if m.MRedConst != ring.GenMRedConstant(q) {
			t.Fatalf("MRed constant differs for %d", q)
		}
		br := ring.GenBRedConstant(q)
		if m.BRedConst != br {
			t.Fatalf("BRed constant differs for %d", q)
		}
		for _, x := range randLimb(t, 1000, q) {
			if m.MForm(x) != ring.MForm(x, q, br) {
				t.Fatal("MForm differs")
			}
			y := x ^ 0x1234567
			y %= q
			if m.MRed(x, y) != ring.MRed(x, y, q, m.MRedConst) || m.BRed(x, y) != ring.BRed(x, y, q, br) {
				t.Fatal("MRed/BRed differ")
			}
		}
	}
}

func TestNTTBitExactWithLattigo(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		for _, cfg := range []struct{ logN, bits int }{{4, 30}, {10, 30}, {12, 50}, {13, 40}, {14, 60}, {16, 49}} {
			t.Run(fmt.Sprintf("logN=%d/q%d", cfg.logN, cfg.bits), func(t *testing.T) {
				N := 1 << cfg.logN
				qs := testPrimes(t, cfg.logN, cfg.bits, 1)
				r, err := ring.NewRing(N, qs)
				if err != nil {
					t.Fatal(err)
				}
				tab, err := NewNTTTable(N, qs[0])
				if err != nil {
					t.Fatal(err)
				}
				s := r.SubRings[0]
				if tab.Psi != ring.ModExp(s.PrimitiveRoot, (qs[0]-1)/uint64(2*N), qs[0]) {
					t.Fatal("psi differs from Lattigo's")
				}
				for k := range tab.RootsMont {
					if tab.RootsMont[k] != s.RootsForward[k] || tab.RootsInvMont[k] != s.RootsBackward[k] {
						t.Fatalf("twiddle %d differs", k)
					}
				}
				a := randLimb(t, N, qs[0])
				want := make([]uint64, N)
				s.NTT(a, want)
				got := make([]uint64, N)
				tab.Forward(a, got)
				assertEqual(t, "NTT", got, want)

				wantInv := make([]uint64, N)
				s.INTT(a, wantInv)
				tab.Backward(a, got)
				assertEqual(t, "INTT", got, wantInv)

				// Lazy variants: in [0, 2q) and congruent.
				tab.ForwardLazy(a, got)
				checkLazy(t, "NTTLazy", got, want, qs[0])
				tab.BackwardLazy(a, got)
				checkLazy(t, "INTTLazy", got, wantInv, qs[0])

				// In place and round trip.
				c := append([]uint64(nil), a...)
				tab.Forward(c, c)
				tab.Backward(c, c)
				assertEqual(t, "roundtrip", c, a)
			})
		}
	})
}

func assertEqual(t *testing.T, what string, got, want []uint64) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: coefficient %d = %d, want %d", what, i, got[i], want[i])
		}
	}
}

func checkLazy(t *testing.T, what string, got, want []uint64, q uint64) {
	t.Helper()
	for i := range want {
		if got[i] >= 2*q || got[i]%q != want[i] {
			t.Fatalf("%s: coefficient %d = %d, want %d mod %d in [0,2q)", what, i, got[i], want[i], q)
		}
	}
}

func TestElementwiseMatchLattigo(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		for _, bitsQ := range []int{30, 49, 60} {
			N := 1 << 11
			qs := testPrimes(t, 11, bitsQ, 1)
			q := qs[0]
			r, _ := ring.NewRing(N, qs)
			s := r.SubRings[0]
			m, _ := NewModulus(q)
			a, b := randLimb(t, N, q), randLimb(t, N, q)
			want, got := make([]uint64, N), make([]uint64, N)

			s.Add(a, b, want)
			Add(a, b, got, q)
			assertEqual(t, "Add", got, want)
			s.Sub(a, b, want)
			Sub(a, b, got, q)
			assertEqual(t, "Sub", got, want)
			s.Neg(a, want)
			Neg(a, got, q)
			assertEqual(t, "Neg", got, want)
			s.MulCoeffsMontgomery(a, b, want)
			MulMont(a, b, got, &m)
			assertEqual(t, "MulMont", got, want)
			s.MulCoeffsBarrett(a, b, want)
			MulBarrett(a, b, got, &m)
			assertEqual(t, "MulBarrett", got, want)
			acc := randLimb(t, N, q)
			copy(want, acc)
			copy(got, acc)
			s.MulCoeffsMontgomeryThenAdd(a, b, want)
			MACMont(a, b, got, &m)
			assertEqual(t, "MACMont", got, want)
			s.MulScalarMontgomery(a, m.MForm(12345), want)
			MulScalar(a, 12345, got, &m)
			assertEqual(t, "MulScalar", got, want)
			s.MulScalarMontgomery(a, b[7], want)
			MulScalarMont(a, b[7], got, &m)
			assertEqual(t, "MulScalarMont", got, want)
			s.AddScalar(a, b[3], want)
			AddScalar(a, b[3], got, q)
			assertEqual(t, "AddScalar", got, want)
			s.SubScalar(a, b[3], want)
			SubScalar(a, b[3], got, q)
			assertEqual(t, "SubScalar", got, want)
			big := randLimb(t, N, ^uint64(0))
			s.Reduce(big, want)
			Reduce(big, got, &m)
			assertEqual(t, "Reduce", got, want)
		}
	})
}

func TestAutomorphismMatchesLattigo(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		N := 1 << 12
		qs := testPrimes(t, 12, 50, 1)
		r, _ := ring.NewRing(N, qs)
		a := r.NewPoly()
		copy(a.Coeffs[0], randLimb(t, N, qs[0]))
		for _, k := range []int{1, 2, 7, -3, N/2 - 1} {
			gal := GaloisElementForRotation(N, k)
			want := r.NewPoly()
			r.AutomorphismNTT(a, gal, want)
			idx, err := AutomorphismNTTIndex(N, gal)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]uint64, N)
			Permute(a.Coeffs[0], got, idx)
			assertEqual(t, fmt.Sprintf("automorphism %d", k), got, want.Coeffs[0])
		}
		// Conjugation.
		want := r.NewPoly()
		r.AutomorphismNTT(a, uint64(2*N-1), want)
		idx, _ := AutomorphismNTTIndex(N, uint64(2*N-1))
		got := make([]uint64, N)
		Permute(a.Coeffs[0], got, idx)
		assertEqual(t, "conjugate", got, want.Coeffs[0])
	})
}

func TestBConvMatchesLattigoModUp(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		for _, shape := range []struct{ k, m, bits int }{{1, 3, 50}, {3, 4, 49}, {5, 9, 60}, {12, 20, 36}} {
			N := 1 << 10
			all := testPrimes(t, 10, shape.bits, shape.k+shape.m)
			Q, P := all[:shape.k], all[shape.k:]
			rQ, _ := ring.NewRing(N, Q)
			rP, _ := ring.NewRing(N, P)
			in := rQ.NewPoly()
			for i := range Q {
				copy(in.Coeffs[i], randLimb(t, N, Q[i]))
			}
			want := rP.NewPoly()
			ring.ModUpExact(in.Coeffs, want.Coeffs, rQ, rP, ring.GenModUpConstants(Q, P))

			bc := newTestBConv(t, Q, P)
			out := make([][]uint64, len(P))
			for j := range out {
				out[j] = make([]uint64, N)
			}
			bc.Convert(in.Coeffs, out, nil)
			for j := range P {
				for c := 0; c < N; c++ {
					if out[j][c] != want.Coeffs[j][c]%P[j] {
						t.Fatalf("k=%d: limb %d coeff %d = %d, want %d (mod %d)", shape.k, j, c, out[j][c], want.Coeffs[j][c]%P[j], P[j])
					}
				}
			}
		}
	})
}

func TestPrimitiveRootMatchesLattigo(t *testing.T) {
	for _, q := range append(testPrimes(t, 16, 61, 3), testPrimes(t, 12, 30, 3)...) {
		g, err := PrimitiveRoot(q)
		if err != nil {
			t.Fatal(err)
		}
		lg, _, err := ring.PrimitiveRoot(q, nil)
		if err != nil {
			t.Fatal(err)
		}
		if g != lg {
			t.Fatalf("primitive root of %d: %d, Lattigo %d", q, g, lg)
		}
	}
	if _, err := NewNTTTable(1024, 97); err == nil {
		t.Fatal("accepted a modulus that is not 1 mod 2N")
	}
	if _, err := NewNTTTable(1000, 12289); err == nil {
		t.Fatal("accepted a degree that is not a power of two")
	}
}

// newTestBConv is the base conversion from the primes Q to the primes P.
// The primes come from testPrimes or nttPrimes, so NewModulus cannot refuse
// them.
func newTestBConv(tb testing.TB, Q, P []uint64) *BConv {
	tb.Helper()
	from, to := make([]Modulus, len(Q)), make([]Modulus, len(P))
	for i := range Q {
		from[i], _ = NewModulus(Q[i])
	}
	for j := range P {
		to[j], _ = NewModulus(P[j])
	}
	bc, err := NewBConv(from, to)
	if err != nil {
		tb.Fatal(err)
	}
	return bc
}

// TestMACMontSumMatchesLattigo checks the grouped dot product against
// Lattigo's MulCoeffsMontgomeryThenAdd applied term by term (MACMont's Go
// form on a length that is not whole blocks of 8), on both paths,
// for term counts around the group sizes and moduli below and above 2^60
// (a "60-bit" Lattigo chain alternates around 2^60).
func TestMACMontSumMatchesLattigo(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		const logN = 10
		N := 1 << logN
		for _, bitsQ := range []int{30, 49, 60, 61} {
			for _, q := range testPrimes(t, logN, bitsQ, 2) {
				r, err := ring.NewRing(N, []uint64{q})
				if err != nil {
					t.Fatal(err)
				}
				s := r.SubRings[0]
				m, _ := NewModulus(q)
				for _, terms := range []int{1, 6, 7, 8, 9, 15, 16, 64} {
					for _, n := range []int{N, 13} {
						as, bs := make([][]uint64, terms), make([][]uint64, terms)
						for k := range as {
							as[k], bs[k] = randLimb(t, n, q), randLimb(t, n, q)
						}
						// the largest inputs: every lane at its bound
						for i := range as[0][:min(n, 4)] {
							for k := range as {
								as[k][i], bs[k][i] = q-1, q-1
							}
						}
						acc := randLimb(t, n, q)
						want := append([]uint64(nil), acc...)
						for k := range as {
							if n%8 == 0 {
								s.MulCoeffsMontgomeryThenAdd(as[k], bs[k], want)
							} else { // Lattigo's kernels take whole blocks of 8
								macMontGo(as[k], bs[k], want, &m)
							}
						}
						MACMontSum(as, bs, acc, &m)
						assertEqual(t, fmt.Sprintf("MACMontSum q=%d terms=%d n=%d", q, terms, n), acc, want)
					}
				}
			}
		}
	})
}
