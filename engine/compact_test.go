package engine_test

import (
	"context"
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/internal/fhetest"
)

// TestCompactDatabaseOnDevice: a scan over a compact stored database run
// with the products and the sum on the device (the compact plaintexts
// lifted by OpPMultCompact) gives exactly the ciphertext the host computes
// with Lattigo, decrypts to Σ q·db_k, and counts one limb per stored
// plaintext as the bytes the device read.
func TestCompactDatabaseOnDevice(t *testing.T) {
	pr, params := fhetest.BGVParams(t, "insecure-test-bgv")
	const records = 4
	level := params.MaxLevel()
	b := ir.NewBuilder("scan", pr.Name)
	q := b.Input("q", level)
	db := b.StoredCompact("db", level, records)
	b.Output("y", b.Sum(b.PMult(q, db), 1))
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}

	kg := rlwe.NewKeyGenerator(params)
	sk := kg.GenSecretKeyNew()
	enc := bgv.NewEncoder(params)
	tmod := params.PlaintextModulus()
	slots := params.MaxSlots()
	want := make([]uint64, slots)
	qv := make([]uint64, slots)
	for i := range qv {
		qv[i] = uint64(i*7+3) % tmod
	}
	qpt := bgv.NewPlaintext(params, level)
	if err := enc.Encode(qv, qpt); err != nil {
		t.Fatal(err)
	}
	qct, err := rlwe.NewEncryptor(params, sk).EncryptNew(qpt)
	if err != nil {
		t.Fatal(err)
	}
	var pts []engine.Value
	for k := 0; k < records; k++ {
		v := make([]uint64, slots)
		for i := range v {
			v[i] = uint64(i*(k+2)+k) % tmod
			want[i] = (want[i] + qv[i]*v[i]) % tmod
		}
		pt := bgv.NewPlaintext(params, level)
		if err := enc.Encode(v, pt); err != nil {
			t.Fatal(err)
		}
		pts = append(pts, engine.Value{Pt: pt})
	}
	run := func(onDevice bool) (*rlwe.Ciphertext, engine.ExecStats) {
		x, err := engine.NewExecutor(pr, params, engine.Keys{})
		if err != nil {
			t.Fatal(err)
		}
		if onDevice {
			x.Device = engine.LocalDevice{}
			x.OnDevice = func(i int) bool {
				op := p.Nodes[i].Op
				return op == ir.OpPMult || op == ir.OpSum || op == ir.OpStored
			}
		}
		out, err := x.Run(context.Background(), p, map[string][]engine.Value{"q": {{Ct: qct}}}, map[string][]engine.Value{"db": pts})
		if err != nil {
			t.Fatal(err)
		}
		return out["y"][0].Ct, x.Stats
	}
	host, _ := run(false)
	dev, st := run(true)
	for j := range host.Value {
		for i := range host.Value[j].Coeffs {
			for c, v := range host.Value[j].Coeffs[i] {
				if dev.Value[j].Coeffs[i][c] != v {
					t.Fatalf("poly %d limb %d coefficient %d: device %d, host %d", j, i, c, dev.Value[j].Coeffs[i][c], v)
				}
			}
		}
	}
	got := make([]uint64, slots)
	if err := enc.Decode(rlwe.NewDecryptor(params, sk).DecryptNew(dev), got); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("slot %d: %d, want %d", i, got[i], want[i])
		}
	}
	if compact := int64(records * params.N() * engine.WordBytes); st.DeviceStoredBytes != compact {
		t.Errorf("device read %d B of stored data, want %d (one limb per plaintext)", st.DeviceStoredBytes, compact)
	}
}

// TestGaloisElements: the distinct elements of a program's rotations and
// conjugations, sorted, as Lattigo computes them.
func TestGaloisElements(t *testing.T) {
	pr, params := fhetest.CKKSParams(t, "insecure-test")
	b := ir.NewBuilder("g", pr.Name)
	x := b.Input("x", 1)
	y := b.HRot(b.HRot(x, 3), 1)
	b.Output("y", b.HAdd(b.HRot(y, 3), b.Conjugate(y)))
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	got := engine.GaloisElements(params.Parameters, p)
	want := map[uint64]bool{params.GaloisElement(3): true, params.GaloisElement(1): true, params.GaloisElementForComplexConjugation(): true}
	if len(got) != len(want) {
		t.Fatalf("%d elements %v, want %d", len(got), got, len(want))
	}
	for i, g := range got {
		if !want[g] || (i > 0 && got[i-1] >= g) {
			t.Fatalf("elements %v: not the distinct sorted set %v", got, want)
		}
	}
}
