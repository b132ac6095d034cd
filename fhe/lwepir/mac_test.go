package lwepir

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// randBelow returns n words uniform below q (rejection sampling).
func randBelow(t testing.TB, n int, q uint64) []uint64 {
	out := make([]uint64, n)
	buf := make([]byte, 8)
	mask := uint64(1)<<(64-uint(leadingZeros(q))) - 1
	for i := range out {
		for {
			if _, err := rand.Read(buf); err != nil {
				t.Fatal(err)
			}
			if v := binary.LittleEndian.Uint64(buf) & mask; v < q {
				out[i] = v
				break
			}
		}
	}
	return out
}

func leadingZeros(q uint64) int {
	n := 0
	for q>>63 == 0 {
		q <<= 1
		n++
	}
	return n
}

// dotMont equals rns.MACMontSum word for word, at the ring stage's primes,
// for term counts below, at and across the group size.
func TestDotMontEqualsRNS(t *testing.T) {
	bp, err := Default().hintParams()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range bp.Q() {
		m, _ := rns.NewModulus(q)
		for _, terms := range []int{1, 7, 8, 9, 32, 64} {
			const n = 96
			ds, bs := make([][]uint64, terms), make([][]uint64, terms)
			for j := range ds {
				ds[j], bs[j] = randBelow(t, n, q), randBelow(t, n, q)
			}
			// Extreme words too: q−1 everywhere in the first term.
			for i := range ds[0] {
				ds[0][i], bs[0][i] = q-1, q-1
			}
			acc := randBelow(t, n, q)
			want := append([]uint64(nil), acc...)
			rns.MACMontSum(ds, bs, want, &m)
			dotMont(ds, bs, acc, make([]uint64, n), make([]uint64, n), &m)
			for i := range acc {
				if acc[i] != want[i] {
					t.Fatalf("q %d, %d terms, slot %d: %d, want %d", q, terms, i, acc[i], want[i])
				}
			}
		}
	}
}

// BenchmarkDotMont compares dotMont with rns.MACMontSum per product: 32
// terms (the 1 GiB layout's B1) of blocks of 512 and 64 slots.
func BenchmarkDotMont(b *testing.B) {
	bp, _ := Default().hintParams()
	q := bp.Q()[0]
	m, _ := rns.NewModulus(q)
	for _, n := range []int{512, 64} {
		const terms = 32
		ds, bs := make([][]uint64, terms), make([][]uint64, terms)
		for j := range ds {
			ds[j], bs[j] = randBelow(b, n, q), randBelow(b, n, q)
		}
		acc, hi, lo := randBelow(b, n, q), make([]uint64, n), make([]uint64, n)
		b.Run(fmt.Sprintf("rns/%d", n), func(b *testing.B) {
			for b.Loop() {
				rns.MACMontSum(ds, bs, acc, &m)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*terms*n), "ns/MAC")
		})
		b.Run(fmt.Sprintf("dot/%d", n), func(b *testing.B) {
			for b.Loop() {
				dotMont(ds, bs, acc, hi, lo, &m)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*terms*n), "ns/MAC")
		})
	}
}

// mod32 is the centred residue modulo 2^32 for coefficients at, around and
// far from prime/2, 0 and prime−1.
func TestMod32(t *testing.T) {
	nc, err := newNegacyclic(Default())
	if err != nil {
		t.Fatal(err)
	}
	p := nc.prime
	for _, x := range []uint64{0, 1, 2, 1<<32 - 1, 1 << 32, p/2 - 1, p / 2, p/2 + 1, p/2 + 2, p - 2, p - 1, p - 1<<32, p - 1<<32 - 1} {
		var want uint32
		if x > p/2 {
			want = uint32(-int64(p - x))
		} else {
			want = uint32(x)
		}
		if got := nc.mod32(x); got != want {
			t.Fatalf("mod32(%d) = %d, want %d", x, got, want)
		}
	}
}
