package lwepir

import (
	"math/big"
	"os"
	"strconv"
	"testing"
)

// limbModulus skips where the limb kernels do not run and returns the
// default packing modulus and its Montgomery constant.
func limbModulus(t *testing.T) (q, mred uint64) {
	t.Helper()
	if !useDot27 {
		t.Skip("no AVX2 limb kernel on this CPU or build: the Go kernel is the only one")
	}
	pr, err := Default().packRing()
	if err != nil {
		t.Fatal(err)
	}
	return pr.q, pr.mred
}

// The limb kernels give dotMontTerms' values exactly: random operands and
// operands at q − 1 (the largest sums the bound allows), every term count
// a call's grouping can leave (tails of 0, 1, 2), lengths of one vector,
// a block, and more than a block; and both agree with Σ p·k·2^-64 mod q
// computed in big integers.
func TestDot27MatchesGo(t *testing.T) {
	q, mred := limbModulus(t)
	if !dot27Fits(8, 1, q) {
		t.Fatalf("the default packing modulus %d does not fit the limb kernels", q)
	}
	qb := new(big.Int).SetUint64(q)
	rInv := new(big.Int).ModInverse(new(big.Int).Lsh(big.NewInt(1), 64), qb)
	for _, terms := range []int{1, 2, 3, 4, 5, 45, 93, dot27MaxTerms} {
		for _, n := range []int{4, 8, dotBlock, dotBlock + 12, 2048} {
			for _, extreme := range []bool{false, true} {
				ps, ks := dotOperands(t, terms, n, q, extreme)
				got, want := make([]uint64, n), make([]uint64, n)
				dotMontTerms27(got, ps, ks, q, mred)
				dotMontTermsGo(want, ps, ks, q, mred)
				for i := range n {
					if got[i] != want[i] {
						t.Fatalf("%d terms, n %d, extreme %v, slot %d: %d, want %d", terms, n, extreme, i, got[i], want[i])
					}
				}
				for _, i := range []int{0, n - 1} {
					s := new(big.Int)
					for j := range ps {
						s.Add(s, new(big.Int).Mul(new(big.Int).SetUint64(ps[j][i]), new(big.Int).SetUint64(ks[j][i])))
					}
					s.Mul(s, rInv).Mod(s, qb)
					if s.Uint64() != got[i] {
						t.Fatalf("%d terms, n %d, slot %d: %d, want Σ p·k·2^-64 mod q = %d", terms, n, i, got[i], s)
					}
				}
			}
		}
	}
	// What the kernels refuse: more terms than the bound, a modulus of 2^54
	// or more, a length not a multiple of 4.
	if dot27Fits(8, dot27MaxTerms+1, q) || dot27Fits(8, 3, 1<<54+1) || dot27Fits(6, 3, q) {
		t.Fatal("dot27Fits accepts operands the limb kernels cannot sum")
	}
}

// The four-query kernel gives each query dotMontTerms' values exactly:
// random operands and operands at q − 1, term counts from one to the
// bound, keys read at offsets into longer split keys (as Prepare reads
// them, shifted), lengths of one vector to a block.
func TestDotQ4MatchesGo(t *testing.T) {
	q, mred := limbModulus(t)
	var d dotQ4
	for _, terms := range []int{1, 2, 3, 7, 45, dot27MaxTerms} {
		for _, n := range []int{4, 12, 128, dotBlock} {
			for _, extreme := range []bool{false, true} {
				if !dotQ4Fits(n, terms, n+terms, q) {
					t.Fatalf("%d terms of %d words: refused", terms, n)
				}
				ps, _ := dotOperands(t, terms, n, q, extreme)
				// One long key a query, laid out split at a stride of qs
				// words; each term's read at its own offset.
				qs := splitLen27(n+terms) + 8
				buf := make([]uint64, 4*qs)
				var out [4][]uint64
				want := make([][]uint64, 4)
				offs := make([]int, terms)
				for tt := range offs {
					offs[tt] = (tt * 7) % (terms + 1)
				}
				for j := range 4 {
					_, long := dotOperands(t, 1, n+terms, q, extreme)
					splitKey27(buf[j*qs:], long[0])
					kt := make([][]uint64, terms)
					for tt, off := range offs {
						kt[tt] = long[0][off : off+n]
					}
					want[j] = make([]uint64, n)
					dotMontTermsGo(want[j], ps, kt, q, mred)
					out[j] = make([]uint64, n)
				}
				ks := make([][]uint64, terms)
				for tt, off := range offs {
					ks[tt] = buf[off:]
				}
				d.load(ps)
				d.sum(&out, ks, qs, q, mred)
				for j := range 4 {
					for i := range n {
						if out[j][i] != want[j][i] {
							t.Fatalf("%d terms, n %d, extreme %v, query %d, slot %d: %d, want %d", terms, n, extreme, j, i, out[j][i], want[j][i])
						}
					}
				}
			}
		}
	}
	if dotQ4Fits(8, 0, 8, q) || dotQ4Fits(dotBlock+4, 3, 8, q) || dotQ4Fits(8, 3, dot27KeyStride+1, q) || dotQ4Fits(8, dot27MaxTerms+1, 8, q) {
		t.Fatal("dotQ4Fits accepts operands the four-query kernel cannot sum")
	}
}

// BenchmarkDotMontTerms times one query's absorbed dot products at 2048
// rows (128 nodes of 45 terms over N = 2048 coefficients: 94 MB of factors
// streamed, as Prepare streams them), in Go and with the limb kernels.
func BenchmarkDotMontTerms(b *testing.B) {
	pr, err := Default().packRing()
	if err != nil {
		b.Fatal(err)
	}
	nodes, terms, n := 128, 45, 2048
	if os.Getenv("DOT27_NODES") != "" {
		nodes, _ = strconv.Atoi(os.Getenv("DOT27_NODES"))
	}
	q, mred := pr.q, pr.mred
	factors := randBelow(b, nodes*terms*n, q)
	keys := make([][]uint64, terms)
	for j := range keys {
		keys[j] = randBelow(b, n, q)
	}
	out := make([]uint64, n)
	kernels := map[string]func([]uint64, [][]uint64, [][]uint64, uint64, uint64){"go": dotMontTermsGo}
	if useDot27 {
		kernels["limbs"] = dotMontTerms27
	}
	// The read alone: the factors swept once, four sums, the ceiling the
	// kernels stream against.
	b.Run("read", func(b *testing.B) {
		var s0, s1, s2, s3 uint64
		for b.Loop() {
			f := factors[:len(factors)&^3]
			for i := 0; i < len(f); i += 4 {
				s0 += f[i]
				s1 += f[i+1]
				s2 += f[i+2]
				s3 += f[i+3]
			}
		}
		sink = s0 ^ s1 ^ s2 ^ s3
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nodes*terms*n), "ns/product")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N), "ms/query")
	})
	for _, name := range []string{"go", "limbs"} {
		f, ok := kernels[name]
		if !ok {
			continue
		}
		b.Run(name, func(b *testing.B) {
			ps := make([][]uint64, terms)
			for b.Loop() {
				for node := range nodes {
					for j := range ps {
						off := (node*terms + j) * n
						ps[j] = factors[off : off+n]
					}
					f(out, ps, keys, q, mred)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nodes*terms*n), "ns/product")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N), "ms/query")
		})
	}
}

// BenchmarkDotQ4 times a batch's products over one pack's factors (2047
// terms of 2048 coefficients, 32 MiB), block by block as Prepare runs
// them: each query with the single-query kernel, and four at a time.
func BenchmarkDotQ4(b *testing.B) {
	if !useDot27 {
		b.Skip("no AVX2 limb kernel")
	}
	pr, err := Default().packRing()
	if err != nil {
		b.Fatal(err)
	}
	q, mred := pr.q, pr.mred
	const terms, n = 2047, 2048
	queries := 16
	if v := os.Getenv("DOTQ4_QUERIES"); v != "" {
		queries, _ = strconv.Atoi(v)
	}
	blk := 128
	if v := os.Getenv("DOTQ4_BLOCK"); v != "" {
		blk, _ = strconv.Atoi(v)
	}
	factors := make([][]uint64, terms)
	for t := range factors {
		factors[t] = randBelow(b, n, q)
	}
	keys := make([][]uint64, queries)
	qs := splitLen27(n)
	split := make([]uint64, queries*qs)
	for j := range keys {
		keys[j] = randBelow(b, n, q)
		splitKey27(split[j*qs:], keys[j])
	}
	out := make([]uint64, blk)
	report := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*terms*n*queries), "ns/product")
	}
	// blocks calls f for each block of blk coefficients and run of at most
	// dot27MaxTerms terms, as Prepare cuts a pack, with the run's factors.
	ps := make([][]uint64, 0, dot27MaxTerms)
	blocks := func(f func(pos int, ps [][]uint64)) {
		for pos := 0; pos < n; pos += blk {
			for t0 := 0; t0 < terms; t0 += dot27MaxTerms {
				ps = ps[:0]
				for t := t0; t < min(t0+dot27MaxTerms, terms); t++ {
					ps = append(ps, factors[t][pos:pos+blk])
				}
				f(pos, ps)
			}
		}
	}
	ks := make([][]uint64, 0, dot27MaxTerms)
	b.Run("single", func(b *testing.B) {
		for b.Loop() {
			blocks(func(pos int, ps [][]uint64) {
				for j := range queries {
					ks = ks[:0]
					for range ps {
						ks = append(ks, keys[j][pos:pos+blk])
					}
					dotMontTerms27(out, ps, ks, q, mred)
				}
			})
		}
		report(b)
	})
	b.Run("q4", func(b *testing.B) {
		var d dotQ4
		var outs [4][]uint64
		for j := range outs {
			outs[j] = make([]uint64, blk)
		}
		for b.Loop() {
			blocks(func(pos int, ps [][]uint64) {
				d.load(ps)
				for g := 0; g < queries; g += 4 {
					ks = ks[:0]
					for range ps {
						ks = append(ks, split[g*qs+pos:])
					}
					d.sum(&outs, ks, qs, q, mred)
				}
			})
		}
		report(b)
	})
}

var sink uint64

// The IFMA kernels give dotMontTerms' values exactly for PackV3's modulus
// (below 2^52): random operands and operands at q − 1, every tail a call's
// grouping of four leaves, up to the 2047 terms of a pack in one
// reduction; and they refuse what they cannot sum.
func TestDot52MatchesGo(t *testing.T) {
	if !useDot52 {
		t.Skip("no AVX-512 IFMA on this CPU or build: the limb or Go kernels run instead")
	}
	pr, err := must(Default().WithPacking(PackV3)).packRing()
	if err != nil {
		t.Fatal(err)
	}
	q, mred := pr.q, pr.mred
	qb := new(big.Int).SetUint64(q)
	rInv := new(big.Int).ModInverse(new(big.Int).Lsh(big.NewInt(1), 64), qb)
	for _, terms := range []int{1, 2, 3, 4, 5, 7, 255, 2047} {
		for _, n := range []int{8, dotBlock, dotBlock + 24} {
			for _, extreme := range []bool{false, true} {
				ps, ks := dotOperands(t, terms, n, q, extreme)
				if !dot52Fits(n, terms, q) {
					t.Fatalf("%d terms of %d words: refused", terms, n)
				}
				got := make([]uint64, n)
				dotMontTerms52(got, ps, ks, q, mred)
				for i := range n {
					s := new(big.Int)
					for j := range ps {
						s.Add(s, new(big.Int).Mul(new(big.Int).SetUint64(ps[j][i]), new(big.Int).SetUint64(ks[j][i])))
					}
					s.Mul(s, rInv).Mod(s, qb)
					if s.Uint64() != got[i] {
						t.Fatalf("%d terms, n %d, extreme %v, slot %d: %d, want Σ p·k·2^-64 mod q = %d", terms, n, extreme, i, got[i], s)
					}
				}
			}
		}
	}
	if dot52Fits(8, 1<<12, q) || dot52Fits(8, 3, 1<<52+1) || dot52Fits(12, 3, q) {
		t.Fatal("dot52Fits accepts operands the IFMA kernels cannot sum")
	}
}

// dotOperands returns terms factor and key vectors of n words below q:
// random, or (extreme) at q − 1 and q − 2, the largest sums.
func dotOperands(t testing.TB, terms, n int, q uint64, extreme bool) (ps, ks [][]uint64) {
	ps, ks = make([][]uint64, terms), make([][]uint64, terms)
	for j := range ps {
		if extreme {
			ps[j], ks[j] = make([]uint64, n), make([]uint64, n)
			for i := range n {
				ps[j][i], ks[j][i] = q-1, q-1-uint64(i%2)
			}
		} else {
			ps[j], ks[j] = randBelow(t, n, q), randBelow(t, n, q)
		}
	}
	return ps, ks
}
