package workload_test

import (
	"context"
	"math"
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/engine"
)

// hevecValues makes a key set for p and its values: db encoded as the
// stored plaintexts, the query encoded and encrypted as the input.
func hevecValues(t *testing.T, shape workload.HEVECShape, p *ir.Program, db [][]float64, query []float64) (e *env, codec *workload.HEVECCodec, in, st map[string][]engine.Value) {
	t.Helper()
	e = newEnv(t, p, false)
	codec, err := workload.NewHEVECCodec(shape, e.Params, 26)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := codec.Database(db)
	if err != nil {
		t.Fatal(err)
	}
	st = map[string][]engine.Value{}
	for name, list := range pts {
		for _, pt := range list {
			st[name] = append(st[name], engine.Value{Pt: pt})
		}
	}
	qpt, err := codec.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	in = map[string][]engine.Value{"query": {{Ct: e.Encrypt(t, qpt)}}}
	return e, codec, in, st
}

// The small HEVEC scan, run for real on the hevec preset (N=4096,
// logQP=109) over 1024 MNIST images, decrypts to the plaintext inner
// products and finds the same nearest neighbour.
func TestHEVECSmallMatchesPlaintext(t *testing.T) {
	train, test := mnist(t)
	shape := workload.HEVECSmall()
	p, err := workload.Program("hevec:small")
	if err != nil {
		t.Fatal(err)
	}
	db := make([][]float64, shape.Vectors)
	for i := range db {
		db[i] = unit(train[i])
	}
	query := unit(test[0])

	e, codec, in, st := hevecValues(t, shape, p, db, query)
	out := e.run(t, p, in, st)
	var res []*rlwe.Plaintext
	for _, v := range out["scores"] {
		if v.Ct.Level() != 0 {
			t.Fatalf("scores returned at level %d, want 0", v.Ct.Level())
		}
		res = append(res, e.Decryptor.DecryptNew(v.Ct))
	}
	got, err := codec.Scores(res, len(db))
	if err != nil {
		t.Fatal(err)
	}
	best, bestGot := 0, 0
	var maxErr float64
	for i, x := range db {
		var want float64
		for k := range x {
			want += x[k] * query[k]
		}
		maxErr = math.Max(maxErr, math.Abs(got[i]-want))
		if math.Abs(got[i]-want) > 1e-4 {
			t.Fatalf("vector %d: inner product %.7f, want %.7f", i, got[i], want)
		}
		var bw float64
		for k := range db[best] {
			bw += db[best][k] * query[k]
		}
		if want > bw {
			best = i
		}
		if got[i] > got[bestGot] {
			bestGot = i
		}
	}
	if best != bestGot {
		t.Fatalf("nearest neighbour %d, plaintext says %d", bestGot, best)
	}
	t.Logf("1024 MNIST inner products, max error %.2e, nearest neighbour %d", maxErr, best)
}

// Deep1B at full scale: 10^9 96-d vectors in 128 coefficients, 32 per
// plaintext, 128 score ciphertexts merged per result.
func TestHEVECFullShape(t *testing.T) {
	p, err := workload.Program("hevec")
	if err != nil {
		t.Fatal(err)
	}
	s := workload.HEVECShape{Name: "x", Params: "hevec", Vectors: 1_000_000_000, Dim: 128, Pack: 128}
	lay, err := s.Layout()
	if err != nil {
		t.Fatal(err)
	}
	// ⌈10^9/32⌉ = 31,250,000 plaintexts, ⌈/128⌉ = 244,141 groups.
	if lay.PerPt != 32 || lay.Groups != 244141 || lay.Plaintexts != 244141*128 || lay.Gap != 1 {
		t.Fatalf("layout %+v", lay)
	}
	count := map[ir.Op]int64{}
	var stored int64
	for _, n := range p.Nodes {
		count[n.Op] += n.Count
		if n.Op == ir.OpStored && n.Degree == 0 && n.Count > 1 {
			stored += n.Count
		}
	}
	// One PMult per database plaintext plus one per merge (127 per group);
	// one automorphism per merge; one Rescale per returned ciphertext.
	if stored != lay.Plaintexts || count[ir.OpHRot] != 127*lay.Groups ||
		count[ir.OpPMult] != lay.Plaintexts+127*lay.Groups || count[ir.OpRescale] != lay.Groups {
		t.Fatalf("op counts %v, stored %d", count, stored)
	}
	compileAll(t, p)
	// Run next to the data, only the packed scores cross the link: 128×
	// less than the database (a level-0 ciphertext per 128 two-limb
	// plaintexts).
	var dbBytes, outBytes int64
	for _, n := range p.Nodes {
		b, err := p.Bytes(n, 64)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case n.Op == ir.OpStored && n.Count > 1:
			dbBytes += b * n.Count
		case n.Op == ir.OpOutput:
			outBytes += b * n.Count
		}
	}
	if outBytes*128 != dbBytes {
		t.Fatalf("scores %d bytes, database %d bytes", outBytes, dbBytes)
	}
}

func TestHEVECRejectsBadShapes(t *testing.T) {
	for _, s := range []workload.HEVECShape{
		{Name: "x", Params: "hevec", Vectors: 10, Dim: 96, Pack: 1},
		{Name: "x", Params: "hevec", Vectors: 10, Dim: 128, Pack: 256},
		{Name: "x", Params: "hevec", Vectors: 0, Dim: 128, Pack: 1},
		{Name: "x", Params: "hevec", Vectors: 10, Dim: 4096, Pack: 1},
		{Name: "x", Params: "pir-bgv", Vectors: 10, Dim: 128, Pack: 1},
		{Name: "x", Params: "nope", Vectors: 10, Dim: 128, Pack: 1},
	} {
		if _, err := s.Program(); err == nil {
			t.Errorf("accepted %+v", s)
		}
	}
}

// The small scan split as the compiler plans it (bare: the scan and the
// merge tree on the SSD, lowered to mPrograms and run on the in-process
// device interpreter) gives the same scores as the host run.
func TestHEVECSmallOnDevice(t *testing.T) {
	train, test := mnist(t)
	shape := workload.HEVECSmall()
	shape.Vectors, shape.Pack = 64, 16 // 16 plaintexts, one merge tree of 15 merges
	p, err := shape.Program()
	if err != nil {
		t.Fatal(err)
	}
	plan := compileAll(t, p)["bare"]
	onDev := 0
	for i, d := range plan.Placement {
		if d == compiler.SSD && p.Nodes[i].Op != ir.OpInput && p.Nodes[i].Op != ir.OpStored && p.Nodes[i].Op != ir.OpOutput {
			onDev++
		}
	}
	if onDev == 0 {
		t.Fatal("bare plan runs nothing on the device")
	}
	db := make([][]float64, shape.Vectors)
	for i := range db {
		db[i] = unit(train[i])
	}
	query := unit(test[1])
	e, codec, in, st := hevecValues(t, shape, p, db, query)
	x, err := engine.NewExecutor(e.Preset, e.Params, e.keys)
	if err != nil {
		t.Fatal(err)
	}
	x.OnDevice = func(i int) bool { return plan.Placement[i] == compiler.SSD }
	out, err := x.Run(context.Background(), plan.Program, in, st)
	if err != nil {
		t.Fatal(err)
	}
	if x.Stats.DeviceOps == 0 {
		t.Fatalf("stats %+v", x.Stats)
	}
	got, err := codec.Scores([]*rlwe.Plaintext{e.Decryptor.DecryptNew(out["scores"][0].Ct)}, len(db))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range db {
		var want float64
		for k := range v {
			want += v[k] * query[k]
		}
		if math.Abs(got[i]-want) > 1e-4 {
			t.Fatalf("vector %d: %.7f on the device, want %.7f", i, got[i], want)
		}
	}
	t.Logf("%d device ops, %d micro-ops, %d B to the device, %d B back", x.Stats.DeviceOps, x.Stats.DeviceMicroOps, x.Stats.BytesToDevice, x.Stats.BytesFromDevice)
}
