package engine

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
	"github.com/rosemary-fhe/rosemary/fhe/matvec"
	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// Two 30-bit primes ≡ 1 mod 2^5 for N=16 (found by search at test start).
func testConfig(t *testing.T) isa.Config {
	t.Helper()
	var qs []uint64
	for q := uint64(1<<30) + 1; len(qs) < 3; q += 32 {
		if rns.IsPrime(q) {
			qs = append(qs, q)
		}
	}
	return isa.Config{LogN: 4, Moduli: qs, Scalars: []uint64{3}, Galois: []uint64{5},
		Bases: []isa.Basis{{From: []uint8{0, 1}, To: []uint8{2}}}, SRAMSlots: 8}
}

func TestInterpreterMatchesKernels(t *testing.T) {
	cfg := testConfig(t)
	mem := NewMemObjects()
	a := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	b := make([]uint64, 16)
	for i := range b {
		b[i] = uint64(i*i*7919) % cfg.Moduli[0]
	}
	mem.Set(isa.SpaceDRAM, 1, [][]uint64{a, b})
	src := `.logn 4
.moduli ` + u64s(cfg.Moduli) + `
.scalars 3
.galois 5
.basis 0 1 -> 2
.slots sram=8
ld m0 dram[1:0] -> sram[0]
ld m0 dram[1:1] -> sram[1]
ntt m0 sram[0] -> sram[2]
modmul.plain m0 sram[2], sram[1] -> sram[3]
modadd.scalar m0 sram[3], #0 -> sram[3]
automorph m0 sram[3], #0 -> sram[4]
intt m0 sram[4] -> sram[4]
st m0 sram[4] -> dram[2:0]
bconv sram[0], #0 -> sram[5]
st m2 sram[5] -> dram[3:0]
`
	p, err := isa.Assemble(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMachine(p.Config, mem)
	if err != nil {
		t.Fatal(err)
	}
	st, err := m.Run(p)
	if err != nil {
		t.Fatal(err)
	}
	// The same computation with the kernels directly.
	tab, _ := rns.NewNTTTable(16, cfg.Moduli[0])
	x := make([]uint64, 16)
	tab.Forward(a, x)
	rns.MulBarrett(x, b, x, &tab.Modulus)
	rns.AddScalar(x, 3, x, tab.Q)
	idx, _ := rns.AutomorphismNTTIndex(16, 5)
	y := make([]uint64, 16)
	rns.Permute(x, y, idx)
	tab.Backward(y, y)
	got := mem.Get(isa.SpaceDRAM, 2)[0]
	for i := range y {
		if got[i] != y[i] {
			t.Fatalf("coefficient %d: %d, want %d", i, got[i], y[i])
		}
	}
	if st.Instructions != 10 || st.ByOp[isa.OpLD] != 2 || st.MicroOps != 9+(2+2*1) {
		t.Fatalf("stats %+v", st)
	}
	if st.BytesRead[isa.SpaceDRAM] != 2*16*WordBytes || st.BytesWritten[isa.SpaceDRAM] != 2*16*WordBytes {
		t.Fatalf("DRAM bytes %+v %+v", st.BytesRead, st.BytesWritten)
	}
	// BCONV of (a mod q0, b mod q1): the CRT value of small a = b is a itself.
	mem.Set(isa.SpaceDRAM, 1, [][]uint64{a, a})
	if _, err := m.Run(p); err != nil {
		t.Fatal(err)
	}
	conv := mem.Get(isa.SpaceDRAM, 3)[0]
	for i := range a {
		if conv[i] != a[i] {
			t.Fatalf("bconv coefficient %d = %d, want %d", i, conv[i], a[i])
		}
	}
}

func TestInterpreterErrors(t *testing.T) {
	cfg := testConfig(t)
	mem := NewMemObjects()
	prog := &isa.Program{Config: cfg, Code: []isa.Instr{{Op: isa.OpLD, A: isa.Obj(isa.SpaceNAND, 4, 0), Out: isa.Slot(isa.SpaceSRAM, 0)}}}
	m, err := NewMachine(cfg, mem)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Run(prog); err == nil || !strings.Contains(err.Error(), "no object nand[4]") {
		t.Fatalf("missing object: %v", err)
	}
	bad := make([]uint64, 16)
	bad[3] = cfg.Moduli[0]
	mem.Set(isa.SpaceNAND, 4, [][]uint64{bad})
	if _, err := m.Run(prog); err == nil || !strings.Contains(err.Error(), "not reduced") {
		t.Fatalf("unreduced limb: %v", err)
	}
	other := cfg
	other.Moduli = append([]uint64(nil), cfg.Moduli...)
	other.Moduli[1], other.Moduli[2] = other.Moduli[2], other.Moduli[1]
	if _, err := m.Run(&isa.Program{Config: other}); err == nil {
		t.Fatal("ran a program with a different configuration")
	}
	if _, err := NewMachine(isa.Config{}, mem); err == nil {
		t.Fatal("accepted an empty configuration")
	}
}

func u64s(v []uint64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatUint(x, 10)
	}
	return strings.Join(s, " ")
}

// LD lends the object's limb to the slot; writing the slot must not touch
// the object (copy on write).
func TestLoadedLimbsAreCopiedOnWrite(t *testing.T) {
	cfg := testConfig(t)
	mem := NewMemObjects()
	a := make([]uint64, 16)
	for i := range a {
		a[i] = uint64(i + 1)
	}
	mem.Set(isa.SpaceDRAM, 1, [][]uint64{a})
	p := &isa.Program{Config: cfg, Code: []isa.Instr{
		{Op: isa.OpLD, A: isa.Obj(isa.SpaceDRAM, 1, 0), Out: isa.Slot(isa.SpaceSRAM, 0)},
		{Op: isa.OpModAdd, Flags: isa.FlagScalarB, A: isa.Slot(isa.SpaceSRAM, 0), B: isa.Imm(0), Out: isa.Slot(isa.SpaceSRAM, 0)},
		{Op: isa.OpNTT, A: isa.Slot(isa.SpaceSRAM, 0), Out: isa.Slot(isa.SpaceSRAM, 0)},
		{Op: isa.OpINTT, A: isa.Slot(isa.SpaceSRAM, 0), Out: isa.Slot(isa.SpaceSRAM, 0)},
		{Op: isa.OpST, A: isa.Slot(isa.SpaceSRAM, 0), Out: isa.Obj(isa.SpaceDRAM, 2, 0)},
	}}
	m, err := NewMachine(cfg, mem)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Run(p); err != nil {
		t.Fatal(err)
	}
	for i, v := range mem.Get(isa.SpaceDRAM, 1)[0] {
		if v != uint64(i+1) {
			t.Fatalf("source object modified at %d: %d", i, v)
		}
	}
	for i, v := range mem.Get(isa.SpaceDRAM, 2)[0] {
		if v != uint64(i+1)+3 {
			t.Fatalf("result %d = %d, want %d", i, v, i+4)
		}
	}
}

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
