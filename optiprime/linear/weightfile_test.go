package linear

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
)

// checkWeightFile writes ws to a weight file, reads it back and requires
// every plaintext to equal the one PrepareWeights made, coefficient for
// coefficient (so evaluating with either gives the same messages).
func checkWeightFile(t *testing.T, pl *Plan, ws *Weights) {
	t.Helper()
	var buf bytes.Buffer
	if err := pl.WriteWeights(&buf, ws); err != nil {
		t.Fatal(err)
	}
	refs := pl.plainRefs()
	want := 4 + 32 + 5
	if !ws.Lazy() {
		want += len(refs) * (22 + (pl.Params.MaxLevel()+1)*pl.Params.N()*8)
	}
	if buf.Len() != want {
		t.Fatalf("weight file of %d bytes, want %d", buf.Len(), want)
	}
	file := append([]byte(nil), buf.Bytes()...)
	rws, err := pl.ReadWeights(&buf, ws.w)
	if err != nil {
		t.Fatal(err)
	}
	sameWeights(t, ws, rws)
	// The path of big-endian hosts (each coefficient decoded through a
	// buffer) reads the same.
	old := littleEndian
	littleEndian = false
	defer func() { littleEndian = old }()
	dws, err := pl.ReadWeights(bytes.NewReader(file), ws.w)
	if err != nil {
		t.Fatal(err)
	}
	sameWeights(t, ws, dws)
}

// sameWeights requires rws to hold ws's plaintexts, coefficient for
// coefficient.
func sameWeights(t *testing.T, ws, rws *Weights) {
	t.Helper()
	if rws.Lazy() != ws.Lazy() || len(rws.plains) != len(ws.plains) {
		t.Fatalf("read back lazy %v with %d plaintexts, wrote lazy %v with %d", rws.Lazy(), len(rws.plains), ws.Lazy(), len(ws.plains))
	}
	for ref, pt := range ws.plains {
		got := rws.plains[ref]
		if got == nil || got.Level != pt.Level || got.LogT != pt.LogT || got.NNZ != pt.NNZ || got.MaxAbs != pt.MaxAbs || got.L1 != pt.L1 {
			t.Fatalf("plaintext %+v read back as %+v", ref, got)
		}
		for i := range pt.Value.Coeffs {
			for j, c := range pt.Value.Coeffs[i] {
				if got.Value.Coeffs[i][j] != c {
					t.Fatalf("plaintext %+v limb %d coefficient %d: %d, want %d", ref, i, j, got.Value.Coeffs[i][j], c)
				}
			}
		}
	}
}

// TestWeightFileRefused: a weight file is refused for other weights, for
// another plan, truncated, with a coefficient not below its modulus, or
// with trailing bytes.
func TestWeightFileRefused(t *testing.T) {
	p, err := cheetah.NewParameters(cheetah.PN12)
	if err != nil {
		t.Fatal(err)
	}
	s := ConvShape{Ci: 3, H: 6, W: 6, Co: 4, Kh: 3, Kw: 3, Stride: 1, Pad: 1}
	opt := Options{LogT: 20, WeightBits: 6}
	pl, err := NewPlan(Cheetah, p, s, opt)
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewPlan(OptiEncodeBSGS, p, s, opt)
	if err != nil {
		t.Fatal(err)
	}
	w := randWeights(t, s.WeightLen(), opt.WeightBits, opt.LogT)
	ev := cheetah.NewEvaluator(p, nil, nil)
	ws, err := pl.PrepareWeights(ev, w)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := pl.WriteWeights(&buf, ws); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()
	w2 := append([]uint64(nil), w...)
	w2[5] = (w2[5] + 1) & (1<<opt.LogT - 1)
	if w2[5] == 1<<(opt.WeightBits-1) { // keep it within the bound
		w2[5] -= 2
	}
	high := append([]byte(nil), file...)
	for i := 0; i < 8; i++ {
		high[4+32+5+22+i] = 0xff // the first coefficient: 2^64 − 1 ≥ q_0
	}
	for _, c := range []struct {
		name string
		pl   *Plan
		file []byte
		w    []uint64
		want string
	}{
		{"other weights", pl, file, w2, "other weights"},
		{"other plan", other, file, w, "another plan"},
		{"truncated", pl, file[:len(file)-1], w, "unexpected EOF"},
		{"coefficient", pl, high, w, "not below q_0"},
		{"trailing", pl, append(append([]byte(nil), file...), 0), w, "data after"},
		{"magic", pl, append([]byte("XXXX"), file[4:]...), w, "not a weight file"},
	} {
		_, err := c.pl.ReadWeights(bytes.NewReader(c.file), c.w)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
	if _, err := pl.ReadWeights(bytes.NewReader(file), w); err != nil {
		t.Fatalf("the file itself: %v", err)
	}
}

// TestCheckWeightFile: the header check accepts the file it wrote, and
// refuses a wrong length or other weights.
func TestCheckWeightFile(t *testing.T) {
	p, err := cheetah.NewParameters(cheetah.PN12)
	if err != nil {
		t.Fatal(err)
	}
	s := ConvShape{Ci: 2, H: 5, W: 5, Co: 3, Kh: 3, Kw: 3, Stride: 1, Pad: 1}
	opt := Options{LogT: 20, WeightBits: 6}
	pl, err := NewPlan(OptiEncodeBSGS, p, s, opt)
	if err != nil {
		t.Fatal(err)
	}
	w := randWeights(t, s.WeightLen(), opt.WeightBits, opt.LogT)
	ws, err := pl.PrepareWeights(cheetah.NewEvaluator(p, nil, nil), w)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := pl.WriteWeights(&buf, ws); err != nil {
		t.Fatal(err)
	}
	n := int64(buf.Len())
	if err := pl.CheckWeightFile(bytes.NewReader(buf.Bytes()), n, w); err != nil {
		t.Fatal(err)
	}
	if err := pl.CheckWeightFile(bytes.NewReader(buf.Bytes()), n-1, w); err == nil {
		t.Error("a short file passed")
	}
	w2 := append([]uint64(nil), w...)
	w2[0] ^= 1
	if err := pl.CheckWeightFile(bytes.NewReader(buf.Bytes()), n, w2); err == nil {
		t.Error("other weights passed")
	}
}
