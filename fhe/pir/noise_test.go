package pir

import (
	"context"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// noiseBudget is log2(Q_l/2) − log2‖w‖∞ for w = t·(c0 + c1·s) mod Q_l
// centred: in Lattigo's BGV a ciphertext satisfies c0 + c1·s = t⁻¹·m' + e
// (m' the scaled message), so w = m' + t·e and decryption is correct while
// ‖w‖∞ < Q_l/2, i.e. while the budget is positive. It includes the message
// (|m'| ≤ t/2, 16 bits), so a noiseless ciphertext has about
// log2(Q_l) − 17 bits.
func noiseBudget(params bgv.Parameters, sk *rlwe.SecretKey, ct *rlwe.Ciphertext) float64 {
	level := ct.Level()
	r := params.RingQ().AtLevel(level)
	pt := rlwe.NewDecryptor(params, sk).DecryptNew(ct)
	if pt.IsNTT {
		r.INTT(pt.Value, pt.Value)
	}
	r.MulScalar(pt.Value, params.PlaintextModulus(), pt.Value)
	w := make([]*big.Int, params.N())
	for i := range w {
		w[i] = new(big.Int)
	}
	r.PolyToBigintCentered(pt.Value, 1, w)
	m := new(big.Int)
	for _, v := range w {
		if v.CmpAbs(m) > 0 {
			m.Abs(v)
		}
	}
	return log2Big(r.ModulusAtLevel[level]) - 1 - log2Big(m)
}

func log2Big(x *big.Int) float64 {
	if x.Sign() == 0 {
		return math.Inf(-1)
	}
	f, _ := new(big.Float).SetInt(x).Float64()
	return math.Log2(f)
}

// TestNoiseBudget measures the noise budget of every stage with bgv-13 on
// a 4 × 256 database of full-size random plaintexts and checks that the
// answer keeps a comfortable margin.
//
// Measured (bgv-13: three 49-bit Q primes; Rows=4, Cols=256; budgets in
// bits, see noiseBudget; ±0.4 between runs and prime choices — with the
// earlier 50-bit primes the answer kept 20.7):
//
//	fresh query (level 2, log Q ≈ 147)                 126.3
//	deepest leaf before rescale (depth 9, level 2)     113.5
//	selections after rescale (level 1, log Q ≈ 98)      74.2
//	row sum Σ_c colSel_c·pt_{r,c} (level 1)             49.4
//	Σ_r rowSum_r ⊗ rowSel_r before rescale (level 1)    21.3
//	answer after rescale (level 0, log Q ≈ 49)          21.3
//
// The row product dominates: ‖rowSum noise‖·‖rowSel noise‖·√N ≈
// 2^48·2^23·2^6.5 against Q_1/2; the final rescale divides it by q_1
// (its own rounding noise, ≈ 2^23, is far below), so the budget is the
// same before and after it.
//
// Extrapolation to the largest shape (Rows=2048, Cols=256): the expansion
// noise (13 bits used at depth 9, ~1 bit more per extra level) is removed
// by the first rescale, after which the selections' noise is the
// rescale's rounding noise whatever the depth; the row sums do not depend
// on Rows; the row product adds Rows independent terms: log2(2048/4)/2 =
// 4.5 bits fewer on average (9 at worst), i.e. ≈ 16.8 bits (≥ 12.3) left.
// TestLargestShape (ROSEMARY_PIR_BIG=1) measured 16.9 bits before and
// after the final rescale (2 min 13 s – 2 min 40 s with 2 workers on a
// shared 2-core machine): comfortably enough.
func TestNoiseBudget(t *testing.T) {
	e := getEnv(t, "bgv-13")
	params := e.params
	n := params.N()
	s := mustShape(t, params, 2*n, 1024)
	if s.Rows != 4 || s.Cols != 256 {
		t.Fatalf("shape %+v", s)
	}
	data := randomBytes(11, 2*n*1024)
	db, _ := NewMemoryDatabase(s, data)
	client := e.client(t, s)
	srv := e.server(t, s, 2)
	ctx := context.Background()
	idx := 1023 // last row, last column: the deepest paths
	q, err := client.Query(idx)
	if err != nil {
		t.Fatal(err)
	}
	fresh := noiseBudget(params, e.sk, q)

	// The deepest leaf before rescaling.
	root, _ := srv.root(ctx, q)
	ex := srv.expanders(root, 1)[0]
	leaf, err := ex.leaf(ex.colPath(s.Cols-1, s.LogCols()))
	if err != nil {
		t.Fatal(err)
	}
	leafBudget := noiseBudget(params, e.sk, leaf)

	cols, rows, err := srv.Expand(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	sel := math.Inf(1)
	for _, ct := range append(cols, rows...) {
		sel = math.Min(sel, noiseBudget(params, e.sk, ct))
	}

	// Row sum of the last row, as the server computes it.
	eval := bgv.NewEvaluator(params, e.evk)
	rowSum := bgv.NewCiphertext(params, 1, params.MaxLevel()-1)
	pt := bgv.NewPlaintext(params, params.MaxLevel()-1)
	pt.IsBatched = false
	coeffs := make([]uint64, n)
	for c := 0; c < s.Cols; c++ {
		if err := db.Plaintext(ctx, (s.Rows-1)*s.Cols+c, coeffs); err != nil {
			t.Fatal(err)
		}
		if err := bgv.NewEncoder(params).Encode(coeffs, pt); err != nil {
			t.Fatal(err)
		}
		if c == 0 {
			err = eval.Mul(cols[c], pt, rowSum)
		} else {
			err = eval.MulThenAdd(cols[c], pt, rowSum)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	rowSumBudget := noiseBudget(params, e.sk, rowSum)

	pre, ev, err := srv.answer(ctx, q, db)
	if err != nil {
		t.Fatal(err)
	}
	preBudget := noiseBudget(params, e.sk, pre)
	ans := bgv.NewCiphertext(params, 1, pre.Level())
	if err := ev.Rescale(pre, ans); err != nil {
		t.Fatal(err)
	}
	ansBudget := noiseBudget(params, e.sk, ans)
	t.Logf("noise budget (bits): fresh query %.1f, deepest leaf %.1f, selections (min) %.1f, row sum %.1f, before final rescale %.1f, answer %.1f",
		fresh, leafBudget, sel, rowSumBudget, preBudget, ansBudget)

	got, err := client.Decode(idx, ans)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(data[idx*2*n:(idx+1)*2*n]) {
		t.Fatal("record decoded wrong")
	}
	// Room for Rows = 2048 (at most 9 more bits) with margin.
	if preBudget < 9+8 || ansBudget < 16 {
		t.Errorf("noise budget too small: %.1f bits before the final rescale, %.1f after", preBudget, ansBudget)
	}
}

// randomDB generates plaintext p's coefficients from p (16-bit values),
// without storing the database.
type randomDB struct{ seed uint64 }

func (d randomDB) Plaintext(_ context.Context, p int, dst []uint64) error {
	r := rand.New(rand.NewPCG(d.seed, uint64(p)))
	for i := 0; i < len(dst); i += 4 {
		v := r.Uint64()
		for j := i; j < min(i+4, len(dst)); j++ {
			dst[j] = v & 0xffff
			v >>= 16
		}
	}
	return nil
}

// TestLargestShape answers one query over the largest bgv-13 database,
// Rows = 2048 × Cols = 256 plaintexts of random 16-bit coefficients
// generated on the fly (one record of 2N bytes each), checks the decoded
// record and reports the noise budget. It takes minutes: set
// ROSEMARY_PIR_BIG=1 to run it (never in -short mode).
func TestLargestShape(t *testing.T) {
	if testing.Short() || os.Getenv("ROSEMARY_PIR_BIG") != "1" {
		t.Skip("set ROSEMARY_PIR_BIG=1 (without -short) to run the 2048 × 256 database")
	}
	e := getEnv(t, "bgv-13")
	params := e.params
	n := params.N()
	s := mustShape(t, params, 2*n, 2048*256)
	if s.Rows != 2048 || s.Cols != 256 {
		t.Fatalf("shape %+v", s)
	}
	db := randomDB{seed: 42}
	client := e.client(t, s)
	srv := e.server(t, s, 2)
	ctx := context.Background()
	idx := s.Records - 1 - 12345 // last row region, deep paths
	q, err := client.Query(idx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	pre, ev, err := srv.answer(ctx, q, db)
	if err != nil {
		t.Fatal(err)
	}
	ans := bgv.NewCiphertext(params, 1, pre.Level())
	if err := ev.Rescale(pre, ans); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	preBudget, ansBudget := noiseBudget(params, e.sk, pre), noiseBudget(params, e.sk, ans)
	t.Logf("2048 × 256 answer in %v; noise budget %.1f bits before the final rescale, %.1f after", elapsed, preBudget, ansBudget)
	got, err := client.Decode(idx, ans)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]uint64, n)
	if err := db.Plaintext(ctx, idx, want); err != nil {
		t.Fatal(err)
	}
	for k := range want {
		if uint64(got[2*k])|uint64(got[2*k+1])<<8 != want[k] {
			t.Fatalf("coefficient %d decoded %d, want %d", k, uint64(got[2*k])|uint64(got[2*k+1])<<8, want[k])
		}
	}
	if preBudget < 4 {
		t.Errorf("noise budget %.1f bits before the final rescale", preBudget)
	}
}
