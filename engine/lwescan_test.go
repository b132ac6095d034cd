package engine

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
	"github.com/rosemary-fhe/rosemary/fhe/matvec"
	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// The lowered LWE scan (ir.OpLWEScan: LD, LWEMAC per four columns, ST), run
// block by block on the interpreter, gives bit for bit the column
// fhe/lwepir's server scans for a real query over a small database. The
// ring has N = 1024 rows; the database's 64 rows are padded with zero rows,
// whose sums must come out 0.
func TestLWEScanMatchesLWEPIR(t *testing.T) {
	p := lwepir.Test()
	shape, err := lwepir.NewShape(p, 4096, 64)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := fhe.Lookup("insecure-lwepir-hint-test")
	if err != nil {
		t.Fatal(err)
	}
	ring, _, err := lower.Shared().Ring(pr.Name)
	if err != nil {
		t.Fatal(err)
	}
	n := 1 << ring.LogN
	if shape.Rows != 64 || shape.Cols != 4096 || shape.Cols%n != 0 {
		t.Fatalf("shape %d × %d, want 64 × 4096 (whole blocks of %d columns)", shape.Rows, shape.Cols, n)
	}
	// The database: random bytes (every value 0…255 occurs), row-major tiles.
	rng := rand.New(rand.NewPCG(7, 8))
	tiles := make(lwepir.MemTiles, shape.Tiles(p))
	for k := range tiles {
		tiles[k] = make([]byte, shape.TileBytes(p))
		for i := range tiles[k] {
			tiles[k][i] = byte(rng.Uint32())
		}
	}
	at := func(r, c int) byte { return tiles[c/p.N()][r*p.N()+c%p.N()] }
	var seed [lwepir.SeedSize]byte
	sk, _, err := lwepir.GenerateKeys(p, shape)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := lwepir.NewClient(p, shape, seed, sk)
	if err != nil {
		t.Fatal(err)
	}
	query, _, err := cl.Query(1234)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := lwepir.NewServer(p, shape)
	if err != nil {
		t.Fatal(err)
	}
	want, err := srv.Scan(context.Background(), []*matvec.Query{matvec.NewQuery(query.Vector)}, tiles, nil)
	if err != nil {
		t.Fatal(err)
	}

	low, err := lower.Op(ir.OpLWEScan, &lower.Context{Scheme: fhe.BGV, Ring: ring, T: pr.T})
	if err != nil {
		t.Fatal(err)
	}
	if len(low.Inputs) != 2 || low.Inputs[1].Limbs != n/4 {
		t.Fatalf("inputs %+v, want the query limb and %d matrix limbs", low.Inputs, n/4)
	}
	mem := NewMemObjects()
	m, err := NewMachine(low.Program.Config, mem)
	if err != nil {
		t.Fatal(err)
	}
	mem.Set(isa.SpaceDRAM, low.Output.ID, [][]uint64{make([]uint64, n)})
	var st Stats
	for b := 0; b < shape.Cols/n; b++ {
		q := make([]uint64, n)
		for i := range q {
			q[i] = uint64(query.Vector[b*n+i])
		}
		block := make([][]uint64, n/4)
		for g := range block {
			block[g] = make([]uint64, n)
			for r := 0; r < shape.Rows; r++ {
				for j := 0; j < 4; j++ {
					block[g][r] |= uint64(at(r, b*n+4*g+j)) << (8 * j)
				}
			}
		}
		mem.Set(isa.SpaceDRAM, low.Inputs[0].ID, [][]uint64{q})
		mem.Set(isa.SpaceDRAM, low.Inputs[1].ID, block)
		s, err := m.Run(low.Program)
		if err != nil {
			t.Fatal(err)
		}
		st.Add(s)
	}
	got := mem.Get(isa.SpaceDRAM, low.Output.ID)[0]
	for r := range n {
		w := uint64(0)
		if r < shape.Rows {
			w = uint64(want[0][r])
		}
		if got[r] != w {
			t.Fatalf("row %d: interpreter %d, lwepir %d", r, got[r], w)
		}
	}
	// One LWEMAC per four columns of N rows: every matrix byte once.
	if macs := st.ByOp[isa.OpLWEMAC]; macs != int64(shape.Cols/4) {
		t.Errorf("%d LWEMACs, want %d", macs, shape.Cols/4)
	}
}

// LWEMAC on hand-picked words: bytes (1, 2, 3, 255) of each word times
// the words (10, 20, 30, 2^32 − 1) of group 1, wrapping modulo 2^32.
func TestLWEMACKnownValues(t *testing.T) {
	// LD checks each word against modulus 0: a prime above 2^32 (≡ 1 mod
	// 2N for N = 16) lets 32-bit words through.
	cfg := isa.Config{LogN: 4, SRAMSlots: 3}
	for q := uint64(1<<40) + 1; cfg.Moduli == nil; q += 32 {
		if rns.IsPrime(q) {
			cfg.Moduli = []uint64{q}
		}
	}
	mem := NewMemObjects()
	n := 16
	a, q, acc := make([]uint64, n), make([]uint64, n), make([]uint64, n)
	for r := range a {
		a[r] = 1 | 2<<8 | 3<<16 | 255<<24
		acc[r] = uint64(r)
	}
	copy(q[4:], []uint64{10, 20, 30, 1<<32 - 1})
	mem.Set(isa.SpaceDRAM, 1, [][]uint64{a, q, acc})
	p := &isa.Program{Config: cfg, Code: []isa.Instr{
		{Op: isa.OpLD, A: isa.Obj(isa.SpaceDRAM, 1, 0), Out: isa.Slot(isa.SpaceSRAM, 0)},
		{Op: isa.OpLD, A: isa.Obj(isa.SpaceDRAM, 1, 1), Out: isa.Slot(isa.SpaceSRAM, 1)},
		{Op: isa.OpLD, A: isa.Obj(isa.SpaceDRAM, 1, 2), Out: isa.Slot(isa.SpaceSRAM, 2)},
		{Op: isa.OpLWEMAC, A: isa.Slot(isa.SpaceSRAM, 0), B: isa.Words(isa.SpaceSRAM, 1, 1), Out: isa.Slot(isa.SpaceSRAM, 2)},
		{Op: isa.OpST, A: isa.Slot(isa.SpaceSRAM, 2), Out: isa.Obj(isa.SpaceDRAM, 2, 0)},
	}}
	m, err := NewMachine(cfg, mem)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Run(p); err != nil {
		t.Fatal(err)
	}
	// 10 + 40 + 90 + 255·(2^32 − 1) = 140 − 255 mod 2^32 = 2^32 − 115.
	for r, v := range mem.Get(isa.SpaceDRAM, 2)[0] {
		if want := uint64(uint32(r) - 115); v != want {
			t.Fatalf("row %d: %d, want %d", r, v, want)
		}
	}
}
