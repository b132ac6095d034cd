package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// genSource serves any validated stream program: every input and stored
// instance, and every key a body names, of the shapes the program gives
// them, with pseudo-random residues below their primes (compact
// plaintexts below t). Instances are generated on demand, so a node of
// many instances costs nothing until read.
type genSource struct {
	sp     *lower.StreamProgram
	n      int
	moduli []uint64 // Q then P
	keys   map[string]lower.Object
}

func newGenSource(sp *lower.StreamProgram) *genSource {
	g := &genSource{sp: sp, n: 1 << sp.Ring.LogN, moduli: append(append([]uint64(nil), sp.Ring.Q...), sp.Ring.P...), keys: map[string]lower.Object{}}
	for _, sn := range sp.Nodes {
		bodies := append([]*lower.Program{sn.Body}, sn.Steps...)
		for _, b := range bodies {
			if b != nil && len(b.Keys) == 1 {
				g.keys[b.KeyName()] = b.Keys[0]
			}
		}
	}
	return g
}

// limbs generates polys × perPoly limbs; limb l of a poly is mod
// moduli[l] (or below small, if not 0).
func (g *genSource) limbs(seed uint64, polys, perPoly int, small uint64) engine.Limbs {
	v := make(engine.Limbs, polys*perPoly)
	x := seed*0x9e3779b97f4a7c15 + 1
	for p := 0; p < polys; p++ {
		for l := 0; l < perPoly; l++ {
			m := g.moduli[l]
			if small != 0 {
				m = small
			}
			limb := make([]uint64, g.n)
			for i := range limb {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				limb[i] = x % m
			}
			v[p*perPoly+l] = limb
		}
	}
	return v
}

func (g *genSource) instance(i int, k int64) (engine.Limbs, error) {
	sn := &g.sp.Nodes[i]
	if k < 0 || k >= sn.Count {
		return nil, fmt.Errorf("instance %d of %d", k, sn.Count)
	}
	var small uint64
	if sn.Compact {
		small = 1 << 16
		if g.sp.T != 0 {
			small = g.sp.T
		}
	}
	return g.limbs(uint64(i)<<40^uint64(k), sn.Polys, sn.Limbs, small), nil
}

func (g *genSource) Input(i int, k int64) (engine.Limbs, error) { return g.instance(i, k) }

func (g *genSource) Key(name string) (engine.Limbs, error) {
	o, ok := g.keys[name]
	if !ok {
		return nil, fmt.Errorf("no key %s", name)
	}
	return g.limbs(uint64(len(name)), o.Polys, o.Limbs, 0), nil
}

func (g *genSource) Stored(_ context.Context, i int) (engine.StoredReader, error) {
	return genReader{g, i}, nil
}

type genReader struct {
	g *genSource
	i int
}

func (r genReader) Instance(k int64) (engine.Limbs, error) { return r.g.instance(r.i, k) }
func (genReader) Close() error                             { return nil }

// fuzzSeeds are small real stream programs: the PIR device segment (query
// expansion, a multiply-accumulate over compact plaintexts, key-switching
// bodies), vecdist's (plaintext products, rotations, sums) and the HEVEC
// scan over encrypted stored vectors (ciphertext products relinearized) on the
// insecure test rings (N = 2^11), and the smallest programs with a body on
// N = 2^5.
func fuzzSeeds(t testing.TB) [][]byte {
	t.Helper()
	var seeds [][]byte
	add := func(sp *lower.StreamProgram) {
		if err := sp.Validate(); err != nil {
			t.Fatal(err)
		}
		b, err := sp.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	a, _ := arch.Preset("rosemary")
	for _, w := range []struct {
		spec   string
		prog   func() (*ir.Program, error)
		preset string
	}{
		{"pir", workload.ExpandedPIR{Name: "pir", Params: "insecure-test-bgv", Rows: 2, Cols: 4}.Program, "insecure-test-bgv"},
		{"vecdist:small", func() (*ir.Program, error) { return workload.Program("vecdist:small") }, "insecure-test"},
		// Encrypted stored vectors: stored ciphertexts, HMult+Relinearize.
		{"hevec-encrypted", workload.HEVECShape{Name: "hevec-enc", Params: "insecure-test", Vectors: 300, Dim: 8, Pack: 4, Encrypted: true}.Program, "insecure-test"},
	} {
		p, err := w.prog()
		if err != nil {
			t.Fatal(err)
		}
		plan, err := compiler.Compile(p, a, compiler.Options{Opt: "full"})
		if err != nil {
			t.Fatal(err)
		}
		plan, seg := plan.AllOnDevice()
		pr, err := fhe.Lookup(w.preset)
		if err != nil {
			t.Fatal(err)
		}
		ring := lower.Ring{LogN: pr.LogN}
		ps, err := rns.NTTPrimesBelow(40, pr.LogN, len(pr.LogQ)+len(pr.LogP))
		if err != nil {
			t.Fatal(err)
		}
		ring.Q, ring.P = ps[:len(pr.LogQ)], ps[len(pr.LogQ):]
		var tt uint64
		if pr.Scheme == fhe.BGV {
			tt = pr.T
		}
		sp, err := plan.StreamSegment(seg, ring, pr.Scheme, tt)
		if err != nil {
			t.Fatalf("%s: %v", w.spec, err)
		}
		add(sp)
	}
	ps, err := rns.NTTPrimesBelow(30, 5, 3)
	if err != nil {
		t.Fatal(err)
	}
	ring := lower.Ring{LogN: 5, Q: ps[:2], P: ps[2:]}
	hadd, err := lower.Op(ir.OpHAdd, &lower.Context{Scheme: fhe.CKKS, Ring: ring, Level: 1})
	if err != nil {
		t.Fatal(err)
	}
	add(&lower.StreamProgram{Scheme: fhe.CKKS, Ring: ring, Nodes: []lower.StreamNode{
		{Node: 0, Kind: lower.StreamInput, Name: "a", Count: 2, Polys: 2, Limbs: 2},
		{Node: 1, Kind: lower.StreamStored, Name: "b", Count: 4, Polys: 2, Limbs: 2},
		{Node: 2, Kind: lower.StreamOp, Count: 4, Polys: 2, Limbs: 2, Args: []int{0, 1}, Body: hadd, Memo: 1},
		{Node: 3, Kind: lower.StreamSum, Count: 2, Polys: 2, Limbs: 2, Args: []int{2}, Body: hadd, Out: true},
	}})
	rot, err := lower.Op(ir.OpHRot, &lower.Context{Scheme: fhe.CKKS, Ring: ring, Level: 1, Rotation: 1})
	if err != nil {
		t.Fatal(err)
	}
	add(&lower.StreamProgram{Scheme: fhe.CKKS, Ring: ring, Nodes: []lower.StreamNode{
		{Node: 0, Kind: lower.StreamInput, Name: "a", Count: 1, Polys: 2, Limbs: 2},
		{Node: 1, Kind: lower.StreamOp, Count: 2, Polys: 2, Limbs: 2, Args: []int{0}, Body: rot, Cache: true, Out: true},
	}})
	return seeds
}

// runStream is what a device does with a client's bytes: decode and
// validate, prepare, run over a source of the shapes the program names
// under a memory limit and a deadline. It fails the test on any outcome
// but an error or well-shaped outputs (a panic fails it too).
func runStream(t *testing.T, data []byte) {
	var sp lower.StreamProgram
	if sp.UnmarshalBinary(data) != nil {
		return
	}
	s, err := engine.NewStream(&sp)
	if err != nil {
		t.Fatalf("a validated program does not prepare: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	out, _, err := s.Run(ctx, newGenSource(&sp), engine.StreamOptions{Workers: 2, MaxBytes: 32 << 20})
	if err != nil {
		return
	}
	n := 1 << sp.Ring.LogN
	for i, sn := range sp.Nodes {
		if !sn.Out {
			continue
		}
		vs, ok := out[i]
		if !ok || int64(len(vs)) != sn.Count {
			t.Fatalf("out node %d: %d instances, want %d", i, len(vs), sn.Count)
		}
		for k, v := range vs {
			if len(v) != sn.Polys*sn.Limbs {
				t.Fatalf("out node %d instance %d: %d limbs, want %d×%d", i, k, len(v), sn.Polys, sn.Limbs)
			}
			for _, l := range v {
				if len(l) != n {
					t.Fatalf("out node %d instance %d: a limb of %d coefficients", i, k, len(l))
				}
			}
		}
	}
}

// The seeds run (and give outputs of their shapes) over generated
// operands.
func TestStreamRunSeeds(t *testing.T) {
	for i, b := range fuzzSeeds(t) {
		var sp lower.StreamProgram
		if err := sp.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		s, err := engine.NewStream(&sp)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Run(context.Background(), newGenSource(&sp), engine.StreamOptions{Workers: 2, MaxBytes: 64 << 20}); err != nil {
			t.Fatalf("seed %d: %v", i, err)
		}
		runStream(t, b)
	}
}

// FuzzStreamRun goes past decoding: any bytes a client sends as a stream
// program either fail to decode or validate, or run to an error or to
// outputs of the program's shapes — never a panic (a panic in a worker
// goroutine is the daemon down) nor an allocation outside the run's
// memory limit.
func FuzzStreamRun(f *testing.F) {
	for _, b := range fuzzSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) { runStream(t, data) })
}
