package engine

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/tuneinsight/lattigo/v6/ring"

	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// centeredLiftRef is the lift as its definition reads: x − q when
// x ≥ ⌊q/2⌋, reduced into p, negated as a residue.
func centeredLiftRef(x []uint64, q uint64, p *rns.Modulus) []uint64 {
	out := make([]uint64, len(x))
	for c, v := range x {
		if v >= q>>1 {
			r := p.Reduce(q - v)
			if r != 0 {
				r = p.Q - r
			}
			out[c] = r
		} else {
			out[c] = p.Reduce(v)
		}
	}
	return out
}

// TestCenteredLiftMatchesDefinition: the branch-free lift gives the
// definition's residues, on random limbs and the edges (0, ⌊q/2⌋ − 1,
// ⌊q/2⌋, q − 1), from moduli below and above each target.
func TestCenteredLiftMatchesDefinition(t *testing.T) {
	var mods []rns.Modulus
	for _, bits := range []uint64{50, 60, 61} {
		g := ring.NewNTTFriendlyPrimesGenerator(bits, 1<<14)
		ps, err := g.NextAlternatingPrimes(2)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			m, err := rns.NewModulus(p)
			if err != nil {
				t.Fatal(err)
			}
			mods = append(mods, m)
		}
	}
	const n = 1 << 10
	buf := make([]byte, 8*n)
	for from := range mods {
		q := mods[from].Q
		x := make([]uint64, n)
		if _, err := rand.Read(buf); err != nil {
			t.Fatal(err)
		}
		for i := range x {
			x[i] = binary.LittleEndian.Uint64(buf[8*i:]) % q
		}
		copy(x, []uint64{0, q>>1 - 1, q >> 1, q - 1, 1, q>>1 + 1})
		var to []uint8
		out := make([][]uint64, 0, len(mods))
		for j := range mods {
			to = append(to, uint8(j))
			out = append(out, make([]uint64, n))
		}
		centeredLift(x, q, out, to, mods)
		for j := range mods {
			want := centeredLiftRef(x, q, &mods[j])
			for c := range want {
				if out[j][c] != want[c] {
					t.Fatalf("%s: coefficient %d (x = %d): %d, want %d", fmt.Sprintf("q=%d → p=%d", q, mods[j].Q), c, x[c], out[j][c], want[c])
				}
			}
		}
	}
}
