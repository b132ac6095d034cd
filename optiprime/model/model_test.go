package model

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

func defaults(t testing.TB) (*Quantized, Dataset) {
	t.Helper()
	q, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	d, err := TestSubset()
	if err != nil {
		t.Fatal(err)
	}
	return q, d
}

func TestDefaultModel(t *testing.T) {
	q, d := defaults(t)
	if d.Len() != 100 {
		t.Fatalf("subset has %d images", d.Len())
	}
	acc, err := q.Accuracy(d)
	if err != nil {
		t.Fatal(err)
	}
	// 98.77% on all 10,000 test images (measured by `go generate`); the
	// first 100 are easy for it.
	if acc < 0.97 {
		t.Errorf("quantized accuracy %.2f on the subset", acc)
	}
	if bits := q.StaticBits(); bits >= q.LogT {
		t.Errorf("worst case needs %d bits, ℓ = %d", bits, q.LogT)
	}
	// The largest accumulator seen on the subset stays far inside the range.
	var peak int64
	for _, img := range d.Images {
		x, _ := q.Input(img)
		for i := range q.Arch {
			acc, err := q.Conv(i, x)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range acc {
				peak = max(peak, abs64(v))
			}
			for j, v := range acc {
				acc[j] = max(0, v>>q.Shift[i])
			}
			x = acc
		}
	}
	if peak >= int64(1)<<(q.LogT-1) {
		t.Errorf("peak accumulator %d overflows ℓ = %d", peak, q.LogT)
	}
	t.Logf("ℓ = %d, static bits %d, peak accumulator 2^%.1f, logit error bound %d", q.LogT, q.StaticBits(), math.Log2(float64(peak)), q.LogitErrorBound())
}

// forwardNoisy is Forward with each truncation returning ⌊x/2^s⌋ or one
// less at random, as the private protocol may.
func forwardNoisy(q *Quantized, img []byte, rng *rand.Rand) []int64 {
	x, _ := q.Input(img)
	for i := range q.Arch {
		acc, _ := q.Conv(i, x)
		if i == len(q.Arch)-1 {
			return acc
		}
		for j, v := range acc {
			acc[j] = max(0, v>>q.Shift[i]-int64(rng.IntN(2)))
		}
		x = acc
	}
	return nil
}

func TestLogitErrorBound(t *testing.T) {
	q, d := defaults(t)
	bound := q.LogitErrorBound()
	rng := rand.New(rand.NewPCG(3, 4))
	var worst int64
	for _, img := range d.Images[:30] {
		ref, _ := q.Forward(img)
		for k := 0; k < 3; k++ {
			noisy := forwardNoisy(q, img, rng)
			for j := range ref {
				worst = max(worst, abs64(noisy[j]-ref[j]))
			}
		}
	}
	if worst > bound {
		t.Fatalf("observed logit error %d exceeds the bound %d", worst, bound)
	}
	if worst == 0 {
		t.Fatal("random truncation errors left every logit unchanged")
	}
	t.Logf("worst observed %d, bound %d", worst, bound)
}

func TestQuantizedTracksFloat(t *testing.T) {
	_, d := defaults(t)
	f, err := NewFloat(DefaultArch(), 7)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Train(d, TrainOptions{Epochs: 3, Batch: 10, LR: 0.05, Momentum: 0.9, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	q, err := Quantize(f, 8)
	if err != nil {
		t.Fatal(err)
	}
	last := len(q.Arch) - 1
	scale := math.Ldexp(1, q.ActScale+q.Shift[last])
	var maxErr, maxMag float64
	for _, img := range d.Images[:20] {
		fl, _ := f.Logits(img)
		ql, err := q.Forward(img)
		if err != nil {
			t.Fatal(err)
		}
		for j := range fl {
			maxErr = max(maxErr, math.Abs(float64(ql[j])/scale-fl[j]))
			maxMag = max(maxMag, math.Abs(fl[j]))
		}
	}
	// 8-bit weights: a few percent of the logit range.
	if maxErr > 0.05*maxMag {
		t.Errorf("quantized logits differ by %.3f (logits up to %.3f)", maxErr, maxMag)
	}
}

func TestTrainingLearns(t *testing.T) {
	_, d := defaults(t)
	f, err := NewFloat(DefaultArch(), 11)
	if err != nil {
		t.Fatal(err)
	}
	before := f.Accuracy(d)
	var losses []float64
	opt := TrainOptions{Epochs: 6, Batch: 10, LR: 0.05, Momentum: 0.9, Seed: 2, Progress: func(_ int, l float64) { losses = append(losses, l) }}
	if _, err := f.Train(d, opt); err != nil {
		t.Fatal(err)
	}
	after := f.Accuracy(d)
	if !(losses[len(losses)-1] < losses[0]/2) || after < 0.9 || after <= before {
		t.Errorf("losses %v, training accuracy %.2f → %.2f", losses, before, after)
	}
}

// TestGradient compares backpropagation with central differences.
func TestGradient(t *testing.T) {
	_, d := defaults(t)
	f, err := NewFloat(DefaultArch(), 5)
	if err != nil {
		t.Fatal(err)
	}
	for i := range f.B {
		for j := range f.B[i] {
			f.B[i][j] = 0.01 * float64(j%3+1) // non-zero: blank windows would sit on the ReLU kink
		}
	}
	ws := newWorkspace(f.Arch)
	img, label := d.Images[0], int(d.Labels[0])
	loss := func() float64 {
		f.forward(ws, img)
		g := make([]float64, Classes)
		return softmaxCE(ws.act[len(f.Arch)], label, g)
	}
	var dW, dB [][]float64
	for i := range f.W {
		dW = append(dW, make([]float64, len(f.W[i])))
		dB = append(dB, make([]float64, len(f.B[i])))
	}
	f.forward(ws, img)
	f.backward(ws, label, dW, dB)
	rng := rand.New(rand.NewPCG(1, 2))
	const h = 1e-5
	for l := range f.W {
		for k := 0; k < 8; k++ {
			for _, p := range []struct {
				v []float64
				g []float64
			}{{f.W[l], dW[l]}, {f.B[l], dB[l]}} {
				j := rng.IntN(len(p.v))
				old := p.v[j]
				p.v[j] = old + h
				lp := loss()
				p.v[j] = old - h
				lm := loss()
				p.v[j] = old
				num := (lp - lm) / (2 * h)
				if math.Abs(num-p.g[j]) > 1e-5+1e-3*math.Abs(num) {
					t.Errorf("layer %d param %d: backprop %.8f, numeric %.8f", l, j, p.g[j], num)
				}
			}
		}
	}
}

func TestModelFileRoundTrip(t *testing.T) {
	q, _ := defaults(t)
	b, err := q.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var r Quantized
	if err := r.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	b2, _ := r.MarshalBinary()
	if !bytes.Equal(b, b2) {
		t.Fatal("round trip changed the encoding")
	}
	pub, err := q.Public().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var p Quantized
	if err := p.UnmarshalBinary(pub); err != nil {
		t.Fatal(err)
	}
	if p.W != nil || p.LogT != q.LogT || len(p.Arch) != len(q.Arch) {
		t.Errorf("public model decoded as %+v", p)
	}
	// Corruptions are rejected.
	for name, mut := range map[string]func([]byte) []byte{
		"magic":     func(b []byte) []byte { b[0] ^= 1; return b },
		"checksum":  func(b []byte) []byte { b[len(b)/2] ^= 1; return b },
		"truncated": func(b []byte) []byte { return b[:len(b)-10] },
		"empty":     func([]byte) []byte { return nil },
	} {
		c := mut(append([]byte(nil), b...))
		if err := new(Quantized).UnmarshalBinary(c); err == nil {
			t.Errorf("%s: corrupted model accepted", name)
		}
	}
	// A weight beyond the bound is rejected even with a valid checksum.
	bad := *q
	bad.W = append([][]int64(nil), q.W...)
	bad.W[0] = append([]int64(nil), q.W[0]...)
	bad.W[0][0] = 1000
	if _, err := bad.MarshalBinary(); err == nil {
		t.Error("out-of-range weight encoded")
	}
}

func TestIDX(t *testing.T) {
	_, d := defaults(t)
	im, lb, err := EncodeIDX(d.Subset(3))
	if err != nil {
		t.Fatal(err)
	}
	imgs, err := DecodeIDXImages(im)
	if err != nil {
		t.Fatal(err)
	}
	labels, err := DecodeIDXLabels(lb)
	if err != nil {
		t.Fatal(err)
	}
	if len(imgs) != 3 || !bytes.Equal(imgs[2], d.Images[2]) || !bytes.Equal(labels, d.Labels[:3]) {
		t.Fatal("IDX round trip differs")
	}
	if _, err := DecodeIDXImages(im[:len(im)-1]); err == nil {
		t.Error("short image file accepted")
	}
	lb[8] = 10
	if _, err := DecodeIDXLabels(lb); err == nil {
		t.Error("label 10 accepted")
	}
	// The first test images are digits 7, 2, 1, 0 (the well-known start of
	// the MNIST test set).
	if !bytes.Equal(d.Labels[:4], []byte{7, 2, 1, 0}) {
		t.Errorf("subset starts with labels %v", d.Labels[:4])
	}
}

// TestFullMNIST checks the module-cache copy of MNIST when it is present.
func TestFullMNIST(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	dir, err := DataDir()
	if err != nil {
		t.Skipf("GoMNIST data not available: %v", err)
	}
	test, err := LoadMNISTTest(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, d := defaults(t)
	if test.Len() != 10000 {
		t.Fatalf("test set has %d images", test.Len())
	}
	for i := range d.Images {
		if !bytes.Equal(test.Images[i], d.Images[i]) || test.Labels[i] != d.Labels[i] {
			t.Fatalf("embedded subset differs from the test set at %d", i)
		}
	}
}

func FuzzUnmarshalModel(f *testing.F) {
	q, err := Default()
	if err != nil {
		f.Fatal(err)
	}
	full, _ := q.MarshalBinary()
	pub, _ := q.Public().MarshalBinary()
	f.Add(pub)
	f.Add(full[:200])
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Quantized
		if err := m.UnmarshalBinary(b); err != nil {
			return
		}
		out, err := m.MarshalBinary()
		if err != nil {
			t.Fatalf("decoded model does not re-encode: %v", err)
		}
		if !bytes.Equal(out, b) {
			t.Fatal("decode/encode is not the identity")
		}
	})
}

func FuzzDecodeIDXImages(f *testing.F) {
	d, _ := TestSubset()
	im, _, _ := EncodeIDX(d.Subset(1))
	f.Add(im)
	f.Add(im[:16])
	f.Fuzz(func(t *testing.T, b []byte) {
		imgs, err := DecodeIDXImages(b)
		if err != nil {
			return
		}
		for _, img := range imgs {
			if len(img) != ImageSize {
				t.Fatal("wrong image size")
			}
		}
	})
}

func FuzzDecodeIDXLabels(f *testing.F) {
	d, _ := TestSubset()
	_, lb, _ := EncodeIDX(d.Subset(5))
	f.Add(lb)
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := DecodeIDXLabels(b)
		if err != nil {
			return
		}
		for _, v := range l {
			if v >= Classes {
				t.Fatal("label out of range")
			}
		}
	})
}
