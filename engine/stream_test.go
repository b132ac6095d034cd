package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/internal/fhetest"
)

// memSource serves a stream run from memory.
type memSource struct {
	sp     *lower.StreamProgram
	inputs map[string][]engine.Limbs
	stored map[string][]engine.Limbs
	keys   map[string]engine.Limbs
}

func (m *memSource) Input(i int, k int64) (engine.Limbs, error) {
	v, ok := m.inputs[m.sp.Nodes[i].Name]
	if !ok || k >= int64(len(v)) {
		return nil, fmt.Errorf("no input %q instance %d", m.sp.Nodes[i].Name, k)
	}
	return v[k], nil
}

func (m *memSource) Key(name string) (engine.Limbs, error) {
	k, ok := m.keys[name]
	if !ok {
		return nil, fmt.Errorf("no key %s", name)
	}
	return k, nil
}

func (m *memSource) Stored(_ context.Context, i int) (engine.StoredReader, error) {
	v, ok := m.stored[m.sp.Nodes[i].Name]
	if !ok {
		return nil, fmt.Errorf("no stored %q", m.sp.Nodes[i].Name)
	}
	return sliceReader(v), nil
}

type sliceReader []engine.Limbs

func (s sliceReader) Instance(k int64) (engine.Limbs, error) {
	if k < 0 || k >= int64(len(s)) {
		return nil, fmt.Errorf("instance %d of %d", k, len(s))
	}
	return s[k], nil
}
func (sliceReader) Close() error { return nil }

// pirFixture is an expanded-query PIR on bgv-13 with random records.
type pirFixture struct {
	params     bgv.Parameters
	sk         *rlwe.SecretKey
	plan       *compiler.Plan
	sp         *lower.StreamProgram
	db         [][]uint64 // compact coefficients per plaintext
	keys       map[string]engine.Limbs
	rows, cols int64
}

func newPIRFixture(t *testing.T, rows, cols int64) *pirFixture {
	t.Helper()
	_, params := fhetest.BGVParams(t, "bgv-13")
	p, err := workload.ExpandedPIR{Name: "pir", Params: "bgv-13", Rows: rows, Cols: cols}.Program()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := arch.Preset("rosemary")
	plan, err := compiler.Compile(p, a, compiler.Options{Opt: "full"})
	if err != nil {
		t.Fatal(err)
	}
	// The database lives on the device: the scan runs there whatever the
	// cost model says of so small a database (as the runtime does).
	plan, seg := plan.AllOnDevice()
	sp, err := plan.StreamSegment(seg, lower.RingOf(params.Parameters), fhe.BGV, params.PlaintextModulus())
	if err != nil {
		t.Fatal(err)
	}
	f := &pirFixture{params: params, plan: plan, sp: sp, rows: rows, cols: cols, keys: map[string]engine.Limbs{}}
	kg := rlwe.NewKeyGenerator(params)
	f.sk = kg.GenSecretKeyNew()
	f.keys["rlk"] = engine.KeyLimbs(&kg.GenRelinearizationKeyNew(f.sk).GadgetCiphertext)
	for _, sn := range sp.Nodes {
		for _, st := range sn.Steps {
			name := st.KeyName()
			if _, ok := f.keys[name]; !ok {
				f.keys[name] = engine.KeyLimbs(&kg.GenGaloisKeyNew(st.GaloisElement, f.sk).GadgetCiphertext)
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range rows * cols {
		m := make([]uint64, params.N())
		for i := range m {
			m[i] = rng.Uint64N(1 << 16)
		}
		f.db = append(f.db, m)
	}
	return f
}

// query encrypts the selection of plaintext r·cols + c.
func (f *pirFixture) query(t *testing.T, r, c int64) *rlwe.Ciphertext {
	t.Helper()
	tm := f.params.PlaintextModulus()
	coeffs := make([]uint64, f.params.N())
	rowSpec, colSpec := ir.ExpandSpec{Prefix: 0, PrefixBits: 1}, ir.ExpandSpec{Prefix: 1, PrefixBits: 1}
	coeffs[rowSpec.Coefficient(f.rows, r)] = invMod(uint64(2*f.rows), tm)
	coeffs[colSpec.Coefficient(f.cols, c)] = invMod(uint64(2*f.cols), tm)
	pt := bgv.NewPlaintext(f.params, f.params.MaxLevel())
	pt.IsBatched = false
	if err := bgv.NewEncoder(f.params).Encode(coeffs, pt); err != nil {
		t.Fatal(err)
	}
	ct, err := rlwe.NewEncryptor(f.params, f.sk).EncryptNew(pt)
	if err != nil {
		t.Fatal(err)
	}
	return ct
}

func invMod(x, m uint64) uint64 {
	r := uint64(1)
	for e := m - 2; e > 0; e >>= 1 {
		if e&1 == 1 {
			r = r * x % m
		}
		x = x * x % m
	}
	return r
}

func ctLimbs(ct *rlwe.Ciphertext) engine.Limbs {
	var out engine.Limbs
	for _, p := range ct.Value {
		out = append(out, p.Coeffs...)
	}
	return out
}

// run answers one query on the stream executor and decrypts the answer.
func (f *pirFixture) run(t *testing.T, q *rlwe.Ciphertext, workers int) ([]uint64, engine.Limbs, engine.StreamStats) {
	t.Helper()
	src := &memSource{sp: f.sp, inputs: map[string][]engine.Limbs{"query": {ctLimbs(q)}}, stored: map[string][]engine.Limbs{}, keys: f.keys}
	for _, m := range f.db {
		src.stored["database"] = append(src.stored["database"], engine.Limbs{m})
	}
	s, err := engine.NewStream(f.sp)
	if err != nil {
		t.Fatal(err)
	}
	out, st, err := s.Run(context.Background(), src, engine.StreamOptions{Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	ptMeta := bgv.NewPlaintext(f.params, f.params.MaxLevel()-1)
	ptMeta.IsBatched = false
	md, err := engine.ProgramMeta(f.plan.Program, f.params, f.params, map[string]rlwe.MetaData{"query": *q.MetaData, "database": *ptMeta.MetaData})
	if err != nil {
		t.Fatal(err)
	}
	var answer engine.Limbs
	var node int
	for i, sn := range f.sp.Nodes {
		if sn.Out {
			answer, node = out[i][0], sn.Node
		}
	}
	ct := rlwe.NewCiphertext(f.params, 1, 0)
	*ct.MetaData = md[node]
	if !engine.CopyLimbs(answer, ct.Value, 1) {
		t.Fatalf("answer of %d limbs", len(answer))
	}
	pt := rlwe.NewDecryptor(f.params, f.sk).DecryptNew(ct)
	pt.IsBatched = false
	got := make([]uint64, f.params.N())
	if err := bgv.NewEncoder(f.params).Decode(pt, got); err != nil {
		t.Fatal(err)
	}
	return got, answer, st
}

// The stream executor answers an expanded-query PIR on 128-bit parameters
// exactly: the decrypted answer is the selected plaintext, for every
// plaintext of a small database, and one or two workers give the same
// ciphertext.
func TestStreamPIR(t *testing.T) {
	f := newPIRFixture(t, 4, 8)
	for _, pick := range [][2]int64{{0, 0}, {3, 7}, {1, 5}, {2, 2}} {
		q := f.query(t, pick[0], pick[1])
		got, ans1, st := f.run(t, q, 1)
		want := f.db[pick[0]*f.cols+pick[1]]
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("plaintext (%d, %d): coefficient %d is %d, want %d", pick[0], pick[1], i, got[i], want[i])
			}
		}
		if st.StoredInstances != f.rows*f.cols {
			t.Fatalf("read %d stored instances, want %d", st.StoredInstances, f.rows*f.cols)
		}
		_, ans2, _ := f.run(t, q, 2)
		for i := range ans1 {
			for j := range ans1[i] {
				if ans1[i][j] != ans2[i][j] {
					t.Fatalf("one and two workers differ at limb %d coefficient %d", i, j)
				}
			}
		}
	}
}

// sameReader serves one plaintext for every instance (the work of a scan
// does not depend on the data).
type sameReader struct{ v engine.Limbs }

func (s sameReader) Instance(int64) (engine.Limbs, error) { return s.v, nil }
func (sameReader) Close() error                           { return nil }

type sameSource struct {
	*memSource
	pt engine.Limbs
}

func (s sameSource) Stored(context.Context, int) (engine.StoredReader, error) {
	return sameReader{s.pt}, nil
}

// BenchmarkStreamPIRScan measures one expanded-query PIR over 16 × 256
// plaintexts of N = 2^13 (64 MiB of 16-bit records), on 1 and 2 workers;
// it reports the scan rate over 2-byte stored coefficients.
func BenchmarkStreamPIRScan(b *testing.B) {
	t := &testing.T{}
	f := newPIRFixture(t, 16, 256)
	q := f.query(t, 3, 5)
	src := sameSource{&memSource{sp: f.sp, inputs: map[string][]engine.Limbs{"query": {ctLimbs(q)}}, keys: f.keys}, engine.Limbs{f.db[0]}}
	s, err := engine.NewStream(f.sp)
	if err != nil {
		b.Fatal(err)
	}
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := s.Run(context.Background(), src, engine.StreamOptions{Workers: workers}); err != nil {
					b.Fatal(err)
				}
			}
			dbBytes := float64(f.rows*f.cols) * float64(f.params.N()) * 2
			b.ReportMetric(dbBytes/(b.Elapsed().Seconds()/float64(b.N))/1e9, "GB/s")
		})
	}
}
