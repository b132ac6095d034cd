package lower_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// ringOf returns a ring of nQ+nP NTT primes of 30 bits for N = 2^logN.
func ringOf(t testing.TB, logN, nQ, nP int) lower.Ring {
	t.Helper()
	ps, err := rns.NTTPrimesBelow(30, logN, nQ+nP)
	if err != nil {
		t.Fatal(err)
	}
	return lower.Ring{LogN: logN, Q: ps[:nQ], P: ps[nQ:]}
}

// addProgram is the smallest program with a body: two input ciphertexts
// of limbs limbs and their HAdd, returned.
func addProgram(t testing.TB, ring lower.Ring, limbs int) *lower.StreamProgram {
	t.Helper()
	body, err := lower.Op(ir.OpHAdd, &lower.Context{Scheme: fhe.CKKS, Ring: ring, Level: limbs - 1})
	if err != nil {
		t.Fatal(err)
	}
	return &lower.StreamProgram{Scheme: fhe.CKKS, Ring: ring, Nodes: []lower.StreamNode{
		{Node: 0, Kind: lower.StreamInput, Name: "a", Count: 1, Polys: 2, Limbs: limbs},
		{Node: 1, Kind: lower.StreamInput, Name: "b", Count: 1, Polys: 2, Limbs: limbs},
		{Node: 2, Kind: lower.StreamOp, Count: 1, Polys: 2, Limbs: limbs, Args: []int{0, 1}, Body: body, Out: true},
	}}
}

// sumProgram sums count stored ciphertexts of two limbs.
func sumProgram(t testing.TB, ring lower.Ring, count int64) *lower.StreamProgram {
	t.Helper()
	body, err := lower.Op(ir.OpHAdd, &lower.Context{Scheme: fhe.CKKS, Ring: ring, Level: 1})
	if err != nil {
		t.Fatal(err)
	}
	return &lower.StreamProgram{Scheme: fhe.CKKS, Ring: ring, Nodes: []lower.StreamNode{
		{Node: 0, Kind: lower.StreamStored, Name: "a", Count: count, Polys: 2, Limbs: 2},
		{Node: 1, Kind: lower.StreamSum, Count: 1, Polys: 2, Limbs: 2, Args: []int{0}, Body: body, Out: true},
	}}
}

func isaBasis() isa.Basis { return isa.Basis{From: []uint8{0}, To: []uint8{1}} }

// pirProgram is the device segment of an expanded-query PIR of rows ×
// cols on a ring of bgv-13's shape (three 49-bit primes of Q, one of P):
// expansions, a multiply-accumulate sum and key-switching bodies.
func pirProgram(t testing.TB, rows, cols int64) *lower.StreamProgram {
	t.Helper()
	p, err := workload.ExpandedPIR{Name: "pir", Params: "bgv-13", Rows: rows, Cols: cols}.Program()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := arch.Preset("rosemary")
	plan, err := compiler.Compile(p, a, compiler.Options{Opt: "full"})
	if err != nil {
		t.Fatal(err)
	}
	plan, seg := plan.AllOnDevice()
	ps, err := rns.NTTPrimesBelow(49, 13, 4)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := plan.StreamSegment(seg, lower.Ring{LogN: 13, Q: ps[:3], P: ps[3:]}, fhe.BGV, 65537)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// clone deep-copies a program through its encoding.
func clone(t testing.TB, sp *lower.StreamProgram) *lower.StreamProgram {
	t.Helper()
	b, err := json.Marshal(sp)
	if err != nil {
		t.Fatal(err)
	}
	var c lower.StreamProgram
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

func find(sp *lower.StreamProgram, ok func(*lower.StreamNode) bool) *lower.StreamNode {
	for i := range sp.Nodes {
		if ok(&sp.Nodes[i]) {
			return &sp.Nodes[i]
		}
	}
	return nil
}

func wantRejected(t *testing.T, sp *lower.StreamProgram, sentinel error, substr string) {
	t.Helper()
	err := sp.Validate()
	if err == nil {
		t.Fatalf("validated; want an error (%s)", substr)
	}
	if !errors.Is(err, lower.ErrStreamProgram) {
		t.Fatalf("error %v does not wrap ErrStreamProgram", err)
	}
	if sentinel != nil && !errors.Is(err, sentinel) {
		t.Fatalf("error %v does not wrap %v", err, sentinel)
	}
	if !strings.Contains(err.Error(), substr) {
		t.Fatalf("error %q does not say %q", err, substr)
	}
	// The wire decoder refuses it too.
	b, _ := json.Marshal(sp)
	var back lower.StreamProgram
	if back.UnmarshalBinary(b) == nil {
		t.Fatal("UnmarshalBinary accepted a program Validate rejects")
	}
}

// Issue 23 item 4: a 1-prime Q and an input node of 2 limbs validated
// (limbs were bounded by len(Q)+len(P) for every node), and the device
// indexed Q by limb checking the inputs of the first RunStream: "index out
// of range [1] with length 1", the daemon down. Values hold limbs of Q.
func TestStreamValidateLimbsBeyondQ(t *testing.T) {
	ring := ringOf(t, 11, 1, 1)
	sp := &lower.StreamProgram{Scheme: fhe.CKKS, Ring: ring, Nodes: []lower.StreamNode{
		{Node: 0, Kind: lower.StreamInput, Name: "x", Count: 1, Polys: 2, Limbs: 2, Out: true},
	}}
	wantRejected(t, sp, nil, "polys × 2 limbs")
	sp.Nodes[0].Limbs = 1
	if err := sp.Validate(); err != nil {
		t.Fatalf("the same program at one limb: %v", err)
	}
	// Every kind: stored, op, sum and expansion values are limbs of Q.
	pir := pirProgram(t, 4, 8)
	if err := pir.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []lower.StreamKind{lower.StreamInput, lower.StreamOp, lower.StreamSum, lower.StreamExpand} {
		c := clone(t, pir)
		sn := find(c, func(sn *lower.StreamNode) bool { return sn.Kind == kind })
		if sn == nil {
			t.Fatalf("no %s node in the PIR program", kind)
		}
		sn.Limbs = len(c.Ring.Q) + 1
		wantRejected(t, c, nil, "limbs")
	}
}

// A node's instance count bounds the slice a run allocates for a held or
// returned node before computing it: 2^40 instances (an allocation bomb of
// 24 TiB of slice headers) and anything beyond MaxStreamCount are refused,
// held nodes beyond MaxStreamHeld too, while a streamed node of as many
// instances as a real scan has validates.
func TestStreamValidateCounts(t *testing.T) {
	ring := ringOf(t, 11, 2, 1)
	for _, tc := range []struct {
		count     int64
		out, held bool
		ok        bool
	}{
		{count: 1 << 40, out: true},
		{count: 1 << 40},
		{count: lower.MaxStreamCount + 1},
		{count: 0},
		{count: -1},
		{count: lower.MaxStreamHeld + 1, out: true},
		{count: lower.MaxStreamHeld + 1, held: true},
		{count: lower.MaxStreamHeld, out: true, ok: true},
		{count: 62_500_000, ok: true}, // vecdist's stored vectors
		{count: lower.MaxStreamCount, ok: true},
	} {
		sp := sumProgram(t, ring, tc.count)
		sp.Nodes[0].Out, sp.Nodes[0].Cache = tc.out, tc.held
		err := sp.Validate()
		switch {
		case tc.ok && err != nil:
			t.Errorf("count %d (out %v, held %v): %v", tc.count, tc.out, tc.held, err)
		case !tc.ok && err == nil:
			t.Errorf("count %d (out %v, held %v) validated", tc.count, tc.out, tc.held)
		case !tc.ok && !errors.Is(err, lower.ErrStreamLimit):
			t.Errorf("count %d: %v does not wrap ErrStreamLimit", tc.count, err)
		}
	}
	pir := pirProgram(t, 4, 8)
	for _, products := range []int64{0, -8, lower.MaxStreamCount * 2} {
		c := clone(t, pir)
		find(c, func(sn *lower.StreamNode) bool { return sn.MAC != nil }).Products = products
		wantRejected(t, c, lower.ErrStreamLimit, "products")
	}
}

// The ring: distinct NTT-friendly primes below 2^62 for a degree the
// interpreter runs, a bounded number of them, a plaintext modulus below
// them for BGV. Before, NewStream built (and cached for good) an NTT table
// for whatever a client named.
func TestStreamValidateRing(t *testing.T) {
	base := ringOf(t, 11, 2, 1)
	big, err := rns.NTTPrimesBelow(62, 11, 1)
	if err != nil {
		t.Fatal(err)
	}
	many, err := rns.NTTPrimesBelow(40, 11, lower.MaxStreamPrimes+1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(sp *lower.StreamProgram)
		err    error
		substr string
	}{
		{"composite 1 mod 2N", func(sp *lower.StreamProgram) { sp.Ring.P[0] = 4097 * 12289 }, lower.ErrStreamRing, "not prime"},
		{"not NTT-friendly", func(sp *lower.StreamProgram) { sp.Ring.Q[1] = 1000003 }, lower.ErrStreamRing, "not 1 mod 2N"},
		{"even", func(sp *lower.StreamProgram) { sp.Ring.Q[0] = 1 << 20 }, lower.ErrStreamRing, "not 1 mod 2N"},
		{"too wide", func(sp *lower.StreamProgram) { sp.Ring.P[0] = 1<<62 + 1 }, lower.ErrStreamRing, "not in [3, 2^62)"},
		{"zero", func(sp *lower.StreamProgram) { sp.Ring.P[0] = 0 }, lower.ErrStreamRing, "not in [3, 2^62)"},
		{"repeated", func(sp *lower.StreamProgram) { sp.Ring.P[0] = sp.Ring.Q[0] }, lower.ErrStreamRing, "repeats"},
		{"no P", func(sp *lower.StreamProgram) { sp.Ring.P = nil }, lower.ErrStreamRing, "0 primes"},
		{"logN 3", func(sp *lower.StreamProgram) { sp.Ring.LogN = 3 }, lower.ErrStreamRing, "logN 3"},
		{"logN 18", func(sp *lower.StreamProgram) { sp.Ring.LogN = 18 }, lower.ErrStreamRing, "logN 18"},
		{"too many primes", func(sp *lower.StreamProgram) { sp.Ring.Q, sp.Ring.P = many[:len(many)-1], many[len(many)-1:] }, lower.ErrStreamLimit, "primes, at most"},
		{"CKKS with T", func(sp *lower.StreamProgram) { sp.T = 65537 }, lower.ErrStreamRing, "CKKS"},
		{"BGV without T", func(sp *lower.StreamProgram) { sp.Scheme = fhe.BGV }, lower.ErrStreamRing, "plaintext modulus 0"},
		{"BGV T above q", func(sp *lower.StreamProgram) { sp.Scheme, sp.T = fhe.BGV, 1<<40 }, lower.ErrStreamRing, "plaintext modulus"},
		{"scheme", func(sp *lower.StreamProgram) { sp.Scheme = "tfhe" }, nil, "scheme"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := addProgram(t, ringOf(t, 11, 2, 1), 2) // mutate a ring of its own
			tc.mutate(sp)
			wantRejected(t, sp, tc.err, tc.substr)
		})
	}
	// A 62-bit prime, the widest the kernels take, is a prime of a ring.
	ok := addProgram(t, lower.Ring{LogN: 11, Q: base.Q, P: big}, 2)
	if err := ok.Validate(); err != nil {
		t.Fatalf("a 62-bit P: %v", err)
	}
	// A body names only primes of the ring: NTT tables are built for the
	// ring's primes and no others.
	sp := addProgram(t, base, 2)
	sp.Nodes[2].Body.Program.Config.Moduli[0] = big[0]
	wantRejected(t, sp, lower.ErrStreamRing, "not a prime of the ring")
}

// Shapes that validated and then panicked in the engine (NewStream or a
// worker goroutine, so the daemon), and the body bounds.
func TestStreamValidateStructure(t *testing.T) {
	ring := ringOf(t, 11, 2, 1)
	pir := pirProgram(t, 4, 8)
	kind := func(k lower.StreamKind) func(*lower.StreamNode) bool {
		return func(sn *lower.StreamNode) bool { return sn.Kind == k }
	}
	mac := func(sn *lower.StreamNode) bool { return sn.MAC != nil }
	expand := kind(lower.StreamExpand)
	for _, tc := range []struct {
		name   string
		pir    bool
		mutate func(t *testing.T, sp *lower.StreamProgram)
		err    error
		substr string
	}{
		// Validate itself indexed Args[0] to word its error: a panic in
		// the decoder.
		{"sum without arguments", false, func(t *testing.T, sp *lower.StreamProgram) {
			sp.Nodes = append(sp.Nodes, lower.StreamNode{Kind: lower.StreamSum, Count: 1, Polys: 2, Limbs: 2, Body: sp.Nodes[2].Body})
		}, nil, "folds one argument, not 0"},
		// NewStream read the bodies of every node: a nil program on a
		// source was a nil dereference.
		{"body on an input", false, func(t *testing.T, sp *lower.StreamProgram) {
			sp.Nodes[0].Body = &lower.Program{}
		}, nil, "a body on a node that runs none"},
		{"steps on an op", false, func(t *testing.T, sp *lower.StreamProgram) {
			sp.Nodes[2].Steps = []*lower.Program{nil}
		}, nil, "expansion steps on a node"},
		{"products on an op", false, func(t *testing.T, sp *lower.StreamProgram) {
			sp.Nodes[2].Products = 4
		}, nil, "multiply-accumulate on a node"},
		{"body on a multiply-accumulate", true, func(t *testing.T, sp *lower.StreamProgram) {
			find(sp, mac).Body = find(sp, kind(lower.StreamOp)).Body
		}, nil, "a body on a node"},
		// A worker's operand array has four entries: a fifth argument
		// panicked in a worker goroutine.
		{"five arguments", false, func(t *testing.T, sp *lower.StreamProgram) {
			sp.Nodes[2].Args = []int{0, 1, 0, 1, 0}
		}, lower.ErrStreamLimit, "5 arguments"},
		{"argument not earlier", false, func(t *testing.T, sp *lower.StreamProgram) {
			sp.Nodes[2].Args = []int{0, 2}
		}, nil, "not an earlier node"},
		{"memo", false, func(t *testing.T, sp *lower.StreamProgram) {
			sp.Nodes[0].Memo = lower.MaxStreamMemo + 1
		}, lower.ErrStreamLimit, "memo"},
		{"compact ciphertext", false, func(t *testing.T, sp *lower.StreamProgram) {
			sp.Nodes[0].Compact = true
		}, nil, "compact plaintext of 2 polys"},
		{"body slots", false, func(t *testing.T, sp *lower.StreamProgram) {
			sp.Nodes[2].Body.Program.Config.EDRAMSlots = lower.MaxStreamSlots
		}, lower.ErrStreamLimit, "slots"},
		{"expansion step slots", true, func(t *testing.T, sp *lower.StreamProgram) {
			find(sp, expand).Steps[0].Program.Config.SRAMSlots = lower.MaxStreamSlots + 1
		}, lower.ErrStreamLimit, "slots"},
		{"body Galois elements", false, func(t *testing.T, sp *lower.StreamProgram) {
			c := &sp.Nodes[2].Body.Program.Config
			for g := range lower.MaxStreamGalois + 1 {
				c.Galois = append(c.Galois, uint64(2*g+1))
			}
		}, lower.ErrStreamLimit, "Galois elements"},
		{"body bases", false, func(t *testing.T, sp *lower.StreamProgram) {
			c := &sp.Nodes[2].Body.Program.Config
			for range lower.MaxStreamBases + 1 {
				c.Bases = append(c.Bases, isaBasis())
			}
		}, lower.ErrStreamLimit, "bases"},
		{"body logN", false, func(t *testing.T, sp *lower.StreamProgram) {
			sp.Ring.LogN = 12
			sp.Ring.Q, sp.Ring.P = ringOf(t, 12, 2, 1).Q, ringOf(t, 12, 2, 1).P
		}, nil, "body for logN 11"},
		{"body object limbs beyond Q", false, func(t *testing.T, sp *lower.StreamProgram) {
			sp.Nodes[2].Body.Inputs[0].Limbs = 3
		}, nil, "body value object"},
		{"body objects share an ID", false, func(t *testing.T, sp *lower.StreamProgram) {
			sp.Nodes[2].Body.Inputs[1].ID = sp.Nodes[2].Body.Inputs[0].ID
		}, nil, "body value object"},
		{"body Galois element", false, func(t *testing.T, sp *lower.StreamProgram) {
			sp.Nodes[2].Body.GaloisElement = 2
		}, nil, "Galois element 2"},
		{"key object beyond Q+P", true, func(t *testing.T, sp *lower.StreamProgram) {
			find(sp, expand).Steps[0].Keys[0].Limbs = len(sp.Ring.Q) + len(sp.Ring.P) + 1
		}, nil, "body key object"},
		{"negative leaf prefix", true, func(t *testing.T, sp *lower.StreamProgram) {
			find(sp, expand).Expand.PrefixBits = -1
		}, nil, "leaf prefix"},
		{"leaf prefix beyond its bits", true, func(t *testing.T, sp *lower.StreamProgram) {
			e := find(sp, expand).Expand
			e.Prefix = 1 << e.PrefixBits
		}, nil, "leaf prefix"},
		{"expansion step of the wrong shape", true, func(t *testing.T, sp *lower.StreamProgram) {
			find(sp, expand).Steps[0].Inputs[1].Polys = 2
		}, nil, "does not expand"},
		{"lanes", true, func(t *testing.T, sp *lower.StreamProgram) {
			m := find(sp, mac).MAC
			m.Lanes = lower.MaxStreamLanes + 1
		}, nil, "lanes"},
		{"multiply-accumulate output shares an input's ID", true, func(t *testing.T, sp *lower.StreamProgram) {
			m := find(sp, mac).MAC
			m.Output.ID = m.Inputs[0].ID
		}, nil, "writes"},
		{"multiply-accumulate modulus outside the ring", true, func(t *testing.T, sp *lower.StreamProgram) {
			big, _ := rns.NTTPrimesBelow(60, 13, 1)
			find(sp, mac).MAC.Next[0].Config.Moduli[0] = big[0]
		}, lower.ErrStreamRing, "not a prime of the ring"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := addProgram(t, ring, 2)
			if tc.pir {
				sp = clone(t, pir)
			}
			if err := sp.Validate(); err != nil {
				t.Fatalf("before the change: %v", err)
			}
			tc.mutate(t, sp)
			wantRejected(t, sp, tc.err, tc.substr)
		})
	}
}

// A body's slots are bounded in number and in bytes (slots × N × 8): at
// N = 2^17 a slot is 1 MiB, so 3,000 slots (within the count) are refused
// for their 2.9 GiB, and accepted at N = 2^11 (23 MiB).
func TestStreamValidateSlotBytes(t *testing.T) {
	for _, tc := range []struct {
		logN int
		ok   bool
	}{{17, false}, {11, true}} {
		sp := addProgram(t, ringOf(t, tc.logN, 2, 1), 2)
		sp.Nodes[2].Body.Program.Config.SRAMSlots = 3000
		err := sp.Validate()
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, lower.ErrStreamLimit)) {
			t.Errorf("3,000 slots at logN %d: %v", tc.logN, err)
		}
	}
}

// The bounds sit above what the compiler emits: the device segments of
// the workloads that stream (the full-scale VCaLL PIR and vecdist over
// Deep1B, hevec) validate on rings of their presets' shapes.
func TestStreamValidateRealWorkloads(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles full-scale workloads")
	}
	for _, w := range []string{"pir", "vecdist", "hevec"} {
		p, err := workload.Program(w)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := fhe.Lookup(p.Nodes[0].Params)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := arch.Preset("rosemary")
		plan, err := compiler.Compile(p, a, compiler.Options{Opt: "full"})
		if err != nil {
			t.Fatal(err)
		}
		ring := presetRing(t, pr)
		var tt uint64
		if pr.Scheme == fhe.BGV {
			tt = pr.T
		}
		streamed := 0
		for i, s := range plan.Segments {
			if !s.OnSSD() || !plan.Computes(i) {
				continue
			}
			sp, err := plan.StreamSegment(i, ring, pr.Scheme, tt)
			if err != nil {
				t.Fatalf("%s segment %d: %v", w, i, err)
			}
			if err := sp.Validate(); err != nil {
				t.Fatalf("%s segment %d: %v", w, i, err)
			}
			streamed++
		}
		if streamed == 0 {
			t.Fatalf("%s: no device segment streams", w)
		}
	}
}

// presetRing is a ring of pr's shape: NTT primes of its sizes.
func presetRing(t testing.TB, pr fhe.Preset) lower.Ring {
	t.Helper()
	used := map[uint64]bool{}
	prime := func(bits int) uint64 {
		ps, err := rns.NTTPrimesBelow(bits, pr.LogN, 64)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range ps {
			if !used[q] {
				used[q] = true
				return q
			}
		}
		t.Fatalf("no %d-bit prime left", bits)
		return 0
	}
	r := lower.Ring{LogN: pr.LogN}
	for _, b := range pr.LogQ {
		r.Q = append(r.Q, prime(b))
	}
	for _, b := range pr.LogP {
		r.P = append(r.P, prime(b))
	}
	return r
}
