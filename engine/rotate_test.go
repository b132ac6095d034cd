package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"

	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// TestRotatorMatchesLattigo: the interpreter's column rotations equal
// Lattigo's evaluator bit for bit, in place and out of place, at two levels,
// and a rotation without its key is refused.
func TestRotatorMatchesLattigo(t *testing.T) {
	bp, err := bgv.NewParametersFromLiteral(bgv.ParametersLiteral{LogN: 10, LogQ: []int{60, 60}, LogP: []int{61}, PlaintextModulus: 2199023265793})
	if err != nil {
		t.Fatal(err)
	}
	kg := rlwe.NewKeyGenerator(bp)
	sk := kg.GenSecretKeyNew()
	keys := map[int]*rlwe.GaloisKey{}
	var gks []*rlwe.GaloisKey
	for _, k := range []int{1, 7, 256} {
		keys[k] = kg.GenGaloisKeyNew(bp.GaloisElementForColRotation(k), sk)
		gks = append(gks, keys[k])
	}
	eval := bgv.NewEvaluator(bp, rlwe.NewMemEvaluationKeySet(nil, gks...))
	enc := rlwe.NewEncryptor(bp, sk)
	ecd := bgv.NewEncoder(bp)
	vals := make([]uint64, bp.MaxSlots())
	for i := range vals {
		vals[i] = uint64(i * 3)
	}
	rot := NewRotator(bp, keys)
	for _, level := range []int{bp.MaxLevel(), 0} {
		pt := bgv.NewPlaintext(bp, level)
		if err := ecd.Encode(vals, pt); err != nil {
			t.Fatal(err)
		}
		ct, err := enc.EncryptNew(pt)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []int{1, 7, 256} {
			want := bgv.NewCiphertext(bp, 1, level)
			if err := eval.RotateColumns(ct, k, want); err != nil {
				t.Fatal(err)
			}
			got := bgv.NewCiphertext(bp, 1, level)
			if err := rot.RotateColumns(ct, k, got); err != nil {
				t.Fatal(err)
			}
			if !got.Value[0].Equal(&want.Value[0]) || !got.Value[1].Equal(&want.Value[1]) {
				t.Fatalf("level %d, rotation by %d: differs from Lattigo", level, k)
			}
			in := ct.CopyNew()
			if err := rot.RotateColumns(in, k, in); err != nil {
				t.Fatal(err)
			}
			if !in.Value[0].Equal(&want.Value[0]) || !in.Value[1].Equal(&want.Value[1]) {
				t.Fatalf("level %d, rotation by %d in place: differs from Lattigo", level, k)
			}
		}
	}
	if err := rot.RotateColumns(bgv.NewCiphertext(bp, 1, bp.MaxLevel()), 2, bgv.NewCiphertext(bp, 1, bp.MaxLevel())); err == nil {
		t.Fatal("a rotation without its key ran")
	}
	wrong := NewRotator(bp, map[int]*rlwe.GaloisKey{3: keys[7]})
	if err := wrong.RotateColumns(bgv.NewCiphertext(bp, 1, bp.MaxLevel()), 3, bgv.NewCiphertext(bp, 1, bp.MaxLevel())); err == nil {
		t.Fatal("a key of another rotation was used")
	}
}

// lweHintSetup builds a one-hint-ciphertext LWE PIR database of rows rows at
// parameters p: the server, one query's evaluation keys and encrypted
// secret, and the stored diagonals.
func lweHintSetup(tb testing.TB, p lwepir.Params, rows int) (*lwepir.Server, *lwepir.EvalKeys, *rlwe.Ciphertext, lwepir.MemDiagonals) {
	tb.Helper()
	shape := lwepir.Shape{Rows: rows, Cols: p.N(), RecordSize: min(64, rows)}
	tiles := lwepir.MemTiles{make([]byte, shape.TileBytes(p))}
	for i := range tiles[0] {
		tiles[0][i] = byte(i*7 + i>>9)
	}
	var seed [lwepir.SeedSize]byte
	h, err := lwepir.ComputeHint(context.Background(), p, shape, seed, tiles)
	if err != nil {
		tb.Fatal(err)
	}
	diags := make(lwepir.MemDiagonals, lwepir.DiagonalCount(p, shape))
	if err := lwepir.EncodeDiagonals(p, shape, h, func(i int, w []uint64) error {
		diags[i] = append([]uint64(nil), w...)
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	sk, evk, err := lwepir.GenerateKeys(p, shape)
	if err != nil {
		tb.Fatal(err)
	}
	cl, err := lwepir.NewClient(p, shape, seed, sk)
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := lwepir.NewServer(p, shape)
	if err != nil {
		tb.Fatal(err)
	}
	q, _, err := cl.Query(0)
	if err != nil {
		tb.Fatal(err)
	}
	return srv, evk, q.Secret, diags
}

func engineRotations(bp bgv.Parameters, keys *lwepir.EvalKeys) (lwepir.Rotator, error) {
	return NewRotator(bp, keys.Rotations), nil
}

// TestLWEHintOnTheEngine: the LWE PIR's ring stage with its key switches on
// the interpreter gives Lattigo's ciphertexts bit for bit.
func TestLWEHintOnTheEngine(t *testing.T) {
	p := lwepir.Test()
	srv, evk, secret, diags := lweHintSetup(t, p, p.HintSlots())
	want, err := srv.EvaluateHint(context.Background(), evk, secret, diags, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.Rotations = engineRotations
	got, err := srv.EvaluateHint(context.Background(), evk, secret, diags, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("%d hint ciphertexts, want %d", len(got), len(want))
	}
	for i := range got {
		if !got[i].Value[0].Equal(&want[i].Value[0]) || !got[i].Value[1].Equal(&want[i].Value[1]) {
			t.Fatalf("hint ciphertext %d differs from Lattigo's", i)
		}
	}
}

// BenchmarkLWEHint times one query's ring stage at the default parameters
// (8192 rows: a 4 GiB database's layout, 94 rotations and 2048 diagonals)
// with its rotations on Lattigo and on the engine, and on the engine over
// diagonals read in place, in one run.
func BenchmarkLWEHint(b *testing.B) {
	p := lwepir.Default()
	srv, evk, secret, diags := lweHintSetup(b, p, p.HintSlots())
	// in-place: the diagonals read in pieces of a 16 KiB page, as the
	// device reads them from its store's mappings.
	inPlace := lwepir.MemPieces{MemDiagonals: diags, Limbs: len(p.HintLogQ), Piece: 2048}
	for _, c := range []struct {
		name  string
		rot   func(bgv.Parameters, *lwepir.EvalKeys) (lwepir.Rotator, error)
		diags lwepir.Diagonals
	}{{"lattigo", nil, diags}, {"engine", engineRotations, diags}, {"engine-in-place", engineRotations, inPlace}} {
		b.Run(c.name, func(b *testing.B) {
			srv.Rotations = c.rot
			for range b.N {
				if _, err := srv.EvaluateHint(context.Background(), evk, secret, c.diags, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLWEHintSmall times one query's ring stage of small databases on
// the engine (the device's form), by the rows of their matrix: 4 (one
// diagonal, 11 rotations), 256 (256-byte records: 64 diagonals, 19
// rotations), 512 (256-byte records sealed: 128 diagonals, 26 rotations).
func BenchmarkLWEHintSmall(b *testing.B) {
	p := lwepir.Default()
	for _, rows := range []int{4, 256, 512} {
		b.Run(fmt.Sprint(rows), func(b *testing.B) {
			srv, evk, secret, diags := lweHintSetup(b, p, rows)
			srv.Rotations = engineRotations
			b.ResetTimer()
			for range b.N {
				if _, err := srv.EvaluateHint(context.Background(), evk, secret, diags, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestRotatorHoistedMatchesLattigo: the engine's hoisted rotations equal
// Lattigo's single rotations bit for bit (Lattigo key-switches c1's
// decomposition and then permutes: hoisting only shares the decomposition)
// and decrypt to the rotated plaintext; an amount without its key is
// refused.
func TestRotatorHoistedMatchesLattigo(t *testing.T) {
	bp, err := bgv.NewParametersFromLiteral(bgv.ParametersLiteral{LogN: 10, LogQ: []int{60, 60}, LogP: []int{61}, PlaintextModulus: 2199023265793})
	if err != nil {
		t.Fatal(err)
	}
	kg := rlwe.NewKeyGenerator(bp)
	sk := kg.GenSecretKeyNew()
	ks := []int{1, 2, 3, 5}
	keys := map[int]*rlwe.GaloisKey{}
	var gks []*rlwe.GaloisKey
	for _, k := range ks {
		keys[k] = kg.GenGaloisKeyNew(bp.GaloisElementForColRotation(k), sk)
		gks = append(gks, keys[k])
	}
	ecd := bgv.NewEncoder(bp)
	vals := make([]uint64, bp.MaxSlots())
	for i := range vals {
		vals[i] = uint64(i*5 + 1)
	}
	pt := bgv.NewPlaintext(bp, bp.MaxLevel())
	if err := ecd.Encode(vals, pt); err != nil {
		t.Fatal(err)
	}
	ct, err := rlwe.NewEncryptor(bp, sk).EncryptNew(pt)
	if err != nil {
		t.Fatal(err)
	}
	newOuts := func() []*rlwe.Ciphertext {
		outs := make([]*rlwe.Ciphertext, len(ks))
		for i := range outs {
			outs[i] = bgv.NewCiphertext(bp, 1, bp.MaxLevel())
		}
		return outs
	}
	got, want := newOuts(), newOuts()
	if err := NewRotator(bp, keys).RotateColumnsHoisted(ct, ks, got); err != nil {
		t.Fatal(err)
	}
	eval := bgv.NewEvaluator(bp, rlwe.NewMemEvaluationKeySet(nil, gks...))
	for i, k := range ks {
		if err := eval.RotateColumns(ct, k, want[i]); err != nil {
			t.Fatal(err)
		}
	}
	dec := rlwe.NewDecryptor(bp, sk)
	half := len(vals) / 2
	for i, k := range ks {
		if !got[i].Value[0].Equal(&want[i].Value[0]) || !got[i].Value[1].Equal(&want[i].Value[1]) {
			t.Fatalf("rotation by %d: differs from Lattigo's rotation", k)
		}
		out := make([]uint64, len(vals))
		if err := ecd.Decode(dec.DecryptNew(got[i]), out); err != nil {
			t.Fatal(err)
		}
		for v := range out {
			r, c := v/half, v%half
			if w := vals[r*half+(c+k)%half]; out[v] != w {
				t.Fatalf("rotation by %d, slot %d: %d, want %d", k, v, out[v], w)
			}
		}
	}
	if err := NewRotator(bp, keys).RotateColumnsHoisted(ct, []int{1, 4}, newOuts()[:2]); err == nil {
		t.Fatal("a rotation without its key ran")
	}
}
