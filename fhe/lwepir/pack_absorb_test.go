package lwepir

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"
)

// Every absorb depth, from none (1: each merge node on its own) to the
// whole tree, gives the same prepared sums and root a-parts, bit for bit
// (the arithmetic is exact modulo Q): full packs, a pack at a stride, and
// a last pack with 3 rows.
func TestPackAbsorbDepthsAgree(t *testing.T) {
	p := Test()
	n := p.N()
	for _, shape := range []Shape{
		{Rows: 2 * n, Cols: n, RecordSize: 8},
		{Rows: 24, Cols: n, RecordSize: 8},
		{Rows: n + 3, Cols: n, RecordSize: 8},
	} {
		pp := newPackedPIR(t, p, shape)
		var keys []*PackingKeys
		for range 3 {
			q, _, err := pp.cl.PackedQuery(1)
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, q.Keys)
		}
		var seed [SeedSize]byte // any: both sides below use the same
		var want []*Prepared
		var wantA [][]uint64
		for _, absorb := range []int{1, 2, 3, 4, p.LogN} {
			pk, err := newPacker(context.Background(), p, shape, seed, pp.h, absorb)
			if err != nil {
				t.Fatal(err)
			}
			got, err := pk.Prepare(context.Background(), keys, 2, nil)
			if err != nil {
				t.Fatal(err)
			}
			if want == nil {
				want, wantA = got, pk.aRoot
				continue
			}
			for k := range pk.aRoot {
				if !slices.Equal(pk.aRoot[k], wantA[k]) {
					t.Fatalf("%d rows, absorb %d: pack %d's a-part differs", shape.Rows, absorb, k)
				}
			}
			for i := range got {
				if fmt.Sprint(got[i].c) != fmt.Sprint(want[i].c) {
					t.Fatalf("%d rows, absorb %d: query %d's sums differ", shape.Rows, absorb, i)
				}
			}
		}
	}
}

// BenchmarkPackAbsorb times one query's Prepare at the default parameters,
// 2048 rows, for each absorb depth.
func BenchmarkPackAbsorb(b *testing.B) {
	for _, v := range []PackVersion{PackV1, PackV2, PackV3} {
		p, err := Default().WithPacking(v)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("v%d", v), func(b *testing.B) { benchPackAbsorb(b, p) })
	}
}

func benchPackAbsorb(b *testing.B, p Params) {
	shape := Shape{Rows: 2048, Cols: p.N(), RecordSize: 256}
	h := make([]uint32, shape.Rows*p.N())
	for i := range h {
		h[i] = uint32(i) * 2654435761
	}
	var seed [SeedSize]byte
	cl, err := NewPackedClient(p, shape, seed)
	if err != nil {
		b.Fatal(err)
	}
	q, _, err := cl.PackedQuery(0)
	if err != nil {
		b.Fatal(err)
	}
	depths := []int{1, 2, 3, 4, 5, 6, 7}
	if p.Pack().TwoKeys {
		depths = []int{0} // no tree
	}
	for _, absorb := range depths {
		t0 := time.Now()
		pk, err := newPacker(context.Background(), p, shape, seed, h, absorb)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("absorb %d: precomputed in %v, %d MiB", absorb, time.Since(t0), pk.PrecomputedBytes()>>20)
		for _, batch := range []int{1, 16} {
			name := fmt.Sprintf("absorb%d", absorb)
			if batch > 1 {
				name += fmt.Sprintf("/batch%d", batch)
			}
			keys := make([]*PackingKeys, batch)
			for i := range keys {
				keys[i] = q.Keys
			}
			b.Run(name, func(b *testing.B) {
				var ru0, ru1 syscall.Rusage
				syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
				for b.Loop() {
					if _, err := pk.Prepare(context.Background(), keys, 1, nil); err != nil {
						b.Fatal(err)
					}
				}
				syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
				cpu := ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
				b.ReportMetric(float64(cpu)/1e6/float64(b.N*batch), "cpu-ms/query")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// The stored layout (nodes, their offsets and key variants) depends on the
// shape alone: two databases' packers of one shape differ only in their
// factors' values, whatever order their packs were computed in.
func TestPackLayoutIsAFunctionOfTheShape(t *testing.T) {
	p := Test()
	shape := Shape{Rows: 3*p.N() + 7, Cols: p.N(), RecordSize: 8}
	layout := func(seed byte) string {
		h := make([]uint32, shape.Rows*p.N())
		for i := range h {
			h[i] = uint32(i)*2654435761 + uint32(seed)
		}
		pk, err := NewPacker(context.Background(), p, shape, [SeedSize]byte{seed}, h)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(pk.nodes, pk.variants, pk.perPack, pk.stride, pk.packs)
	}
	if a, b := layout(1), layout(2); a != b {
		t.Fatal("two databases of one shape store different layouts")
	}
}

// A packer rebuilt from its stored factors and a-parts answers as the
// original does, and LoadPacker refuses factors of the wrong size or out
// of range.
func TestLoadPackerRoundTrip(t *testing.T) {
	for _, v := range []PackVersion{PackV2, PackV3} {
		p, err := Test().WithPacking(v)
		if err != nil {
			t.Fatal(err)
		}
		testLoadPackerRoundTrip(t, p)
	}
}

func testLoadPackerRoundTrip(t *testing.T, p Params) {
	for _, shape := range []Shape{
		{Rows: 2*p.N() + 5, Cols: p.N(), RecordSize: 5},
		{Rows: 40, Cols: p.N(), RecordSize: 8},
	} {
		pp := newPackedPIR(t, p, shape)
		var factors [][]uint64
		var aParts [][]uint32
		for k := range pp.pk.packs {
			factors = append(factors, slices.Clone(pp.pk.Factors(k)))
			aParts = append(aParts, slices.Clone(pp.pk.AParts(k)))
		}
		loaded, err := LoadPacker(p, shape, factors, aParts)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(loaded.nodes, loaded.variants) != fmt.Sprint(pp.pk.nodes, pp.pk.variants) {
			t.Fatalf("%d rows: the loaded layout differs", shape.Rows)
		}
		q, st, err := pp.cl.PackedQuery(2)
		if err != nil {
			t.Fatal(err)
		}
		pp.pk = loaded
		got, err := pp.cl.DecodePacked(st, pp.answer(t, q))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, pp.cols[2]) {
			t.Fatalf("%d rows: a loaded packer's answer does not decode", shape.Rows)
		}
		bad := slices.Clone(factors[0])
		bad[7] = loaded.pr.q
		for name, f := range map[string][][]uint64{
			"short":       append([][]uint64{factors[0][1:]}, factors[1:]...),
			"above Q":     append([][]uint64{bad}, factors[1:]...),
			"a pack less": factors[1:],
		} {
			if _, err := LoadPacker(p, shape, f, aParts[:len(f)]); err == nil {
				t.Errorf("%d rows: LoadPacker took %s factors", shape.Rows, name)
			}
		}
		badA := slices.Clone(aParts)
		badA[0] = slices.Clone(badA[0])
		badA[0][0] = 1 << 31
		if _, err := LoadPacker(p, shape, factors, badA); err == nil {
			t.Errorf("%d rows: LoadPacker took an a-part out of range", shape.Rows)
		}
	}
}

// A packer used in place from pieces — each factor polynomial cut in
// pieces that live apart, as a store's pages do — gives every query the
// same prepared sums as the packer it was stored from, at the default
// parameters (the AVX2 kernel, where there is one) and the small ones;
// LoadPackerPieces refuses pieces of the wrong count or size.
func TestLoadPackerPieces(t *testing.T) {
	for _, tc := range []struct {
		p      Params
		rows   int
		pieces []int // piece sizes in words
	}{
		{Test(), 2*Test().N() + 5, []int{Test().N(), Test().N() / 2, 4}},
		{Default(), 300, []int{512, 256}},
		{must(Test().WithPacking(PackV2)), 2*Test().N() + 5, []int{Test().N(), 4}},
		{must(Default().WithPacking(PackV2)), 300, []int{512}},
	} {
		p, n := tc.p, tc.p.N()
		shape := Shape{Rows: tc.rows, Cols: n, RecordSize: 8}
		h := make([]uint32, shape.Rows*n)
		for i := range h {
			h[i] = uint32(i)*2654435761 + 17
		}
		var seed [SeedSize]byte
		pk, err := NewPacker(context.Background(), p, shape, seed, h)
		if err != nil {
			t.Fatal(err)
		}
		cl, err := NewPackedClient(p, shape, seed)
		if err != nil {
			t.Fatal(err)
		}
		var keys []*PackingKeys
		for range 2 {
			q, _, err := cl.PackedQuery(1)
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, q.Keys)
		}
		want, err := pk.Prepare(context.Background(), keys, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		aParts := make([][]uint32, pk.Packs())
		for k := range aParts {
			aParts[k] = pk.AParts(k)
		}
		for _, pw := range tc.pieces {
			calls := 0
			factor := func(k, j int) ([][]uint64, error) {
				calls++
				poly := pk.Factors(k)[j*n : (j+1)*n]
				var out [][]uint64
				for o := 0; o < n; o += pw {
					out = append(out, slices.Clone(poly[o:o+pw])) // apart from the rest
				}
				return out, nil
			}
			loaded, err := LoadPackerPieces(p, shape, pw, factor, aParts, nil)
			if err != nil {
				t.Fatal(err)
			}
			words, err := PackerFactorWords(p, shape)
			if err != nil {
				t.Fatal(err)
			}
			total := 0
			for _, w := range words {
				total += w / n
			}
			if calls != total || loaded.Factors(0) != nil {
				t.Fatalf("pieces of %d: %d factors asked for, want %d", pw, calls, total)
			}
			got, err := loaded.Prepare(context.Background(), keys, 2, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				for k := range got[i].c {
					if !slices.Equal(got[i].c[k], want[i].c[k]) {
						t.Fatalf("N %d, pieces of %d: query %d, pack %d: the sums differ", n, pw, i, k)
					}
				}
			}
		}
		good := func(k, j int) ([][]uint64, error) {
			return [][]uint64{pk.Factors(k)[j*n : (j+1)*n]}, nil
		}
		for name, tr := range map[string]struct {
			pw int
			f  func(k, j int) ([][]uint64, error)
		}{
			"pieces of 3 words":  {3, good},
			"pieces above N":     {2 * n, good},
			"a piece too few":    {n / 2, good},
			"a piece too short":  {n, func(k, j int) ([][]uint64, error) { return [][]uint64{make([]uint64, n-1)}, nil }},
			"an error passed on": {n, func(k, j int) ([][]uint64, error) { return nil, ErrParams }},
		} {
			if _, err := LoadPackerPieces(p, shape, tr.pw, tr.f, aParts, nil); !errors.Is(err, ErrParams) {
				t.Errorf("%s: %v, want ErrParams", name, err)
			}
		}
	}
}

func must(p Params, err error) Params {
	if err != nil {
		panic(err)
	}
	return p
}
