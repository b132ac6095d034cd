package infer

import (
	"bytes"
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/model"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

func fixtures(t testing.TB) (*model.Quantized, model.Dataset) {
	t.Helper()
	q, err := model.Default()
	if err != nil {
		t.Fatal(err)
	}
	d, err := model.TestSubset()
	if err != nil {
		t.Fatal(err)
	}
	return q, d
}

type serverResult struct {
	st  *Stats
	err error
}

// session runs a server goroutine and a client over an in-memory pipe.
func session(t *testing.T, q *model.Quantized, cfg Config, imgs [][]byte) ([]*Result, Stats, *Stats) {
	t.Helper()
	cc, sc := transport.Pipe()
	done := make(chan serverResult, 1)
	go func() {
		st, err := Serve(sc, q)
		done <- serverResult{st, err}
	}()
	c, err := NewClient(cc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var res []*Result
	for i, img := range imgs {
		r, err := c.Infer(img)
		if err != nil {
			t.Fatalf("image %d: %v", i, err)
		}
		res = append(res, r)
	}
	cst := c.Stats()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	sr := <-done
	if sr.err != nil {
		t.Fatalf("server: %v", sr.err)
	}
	return res, cst, sr.st
}

// checkAgainstReference asserts exact argmax agreement and logits within
// the truncation error bound; it returns how many logits differ at all.
func checkAgainstReference(t *testing.T, q *model.Quantized, imgs [][]byte, res []*Result) int {
	t.Helper()
	bound := q.LogitErrorBound()
	differ := 0
	for i, img := range imgs {
		ref, err := q.Forward(img)
		if err != nil {
			t.Fatal(err)
		}
		if res[i].Class != model.Argmax(ref) {
			t.Errorf("image %d: private class %d, reference %d (logits %v vs %v)", i, res[i].Class, model.Argmax(ref), res[i].Logits, ref)
		}
		for j := range ref {
			d := res[i].Logits[j] - ref[j]
			if d != 0 {
				differ++
			}
			if d < -bound || d > bound {
				t.Errorf("image %d logit %d: private %d, reference %d, |diff| > bound %d", i, j, res[i].Logits[j], ref[j], bound)
			}
		}
	}
	return differ
}

func TestPrivateInferenceMatchesReference(t *testing.T) {
	q, d := fixtures(t)
	n := 20
	if testing.Short() {
		n = 5
	}
	imgs := d.Images[:n]
	res, cst, sst := session(t, q, Config{Protocol: linear.Cheetah}, imgs)
	differ := checkAgainstReference(t, q, imgs, res)
	correct := 0
	for i, r := range res {
		if r.Class == int(d.Labels[i]) {
			correct++
		}
	}
	t.Logf("%d images: %d correct, %d of %d logits differ from the reference (bound %d)", n, correct, differ, 10*n, q.LogitErrorBound())
	// The model is ≥97% accurate on MNIST; on 20 images at most two errors
	// would already be unusual.
	if correct < n-2 {
		t.Errorf("only %d of %d correct", correct, n)
	}
	if cst.Images != n || sst.Images != n {
		t.Errorf("images: client %d, server %d, want %d", cst.Images, sst.Images, n)
	}
	// Both ends count the same traffic, and each linear layer's measured
	// traffic is the plan's payload plus framing.
	for i := range cst.Layers {
		cl, sl := cst.Layers[i], sst.Layers[i]
		if cl.Linear.BytesC2S != sl.Linear.BytesC2S || cl.Linear.BytesS2C != sl.Linear.BytesS2C ||
			cl.Nonlinear.BytesC2S != sl.Nonlinear.BytesC2S || cl.Nonlinear.BytesS2C != sl.Nonlinear.BytesS2C {
			t.Errorf("layer %d: client and server counters differ: %+v vs %+v", i, cl, sl)
		}
		p := cl.Plan
		up, down := cl.Linear.BytesC2S/uint64(n), cl.Linear.BytesS2C/uint64(n)
		if up < uint64(p.BytesC2S) || up > uint64(p.BytesC2S)+overhead(p.InputCts) ||
			down < uint64(p.BytesS2C) || down > uint64(p.BytesS2C)+overhead(p.OutputCts) {
			t.Errorf("layer %d: measured %d up / %d down per image, plan %d / %d", i, up, down, p.BytesC2S, p.BytesS2C)
		}
		last := i == len(cst.Layers)-1
		switch {
		case !last && (cl.Nonlinear.BytesC2S == 0 || cl.Nonlinear.BytesS2C == 0):
			t.Errorf("layer %d: truncation and ReLU moved no traffic both ways", i)
		case last && (cl.Nonlinear.BytesC2S != 0 || cl.Nonlinear.BytesS2C == 0):
			// Only the server's logit shares travel, to the client.
			t.Errorf("last layer: reveal moved %d bytes up, %d down", cl.Nonlinear.BytesC2S, cl.Nonlinear.BytesS2C)
		}
	}
}

// overhead is the framing around k ciphertext messages: frame header,
// message count and lengths (and per-ciphertext headers the plan may not
// count).
func overhead(k int64) uint64 { return uint64(10 + 4 + 64*k + 64) }

func TestOptiEncodeProtocols(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	q, d := fixtures(t)
	for _, p := range []linear.Protocol{linear.OptiEncode, linear.OptiEncodeBSGS} {
		t.Run(p.String(), func(t *testing.T) {
			imgs := d.Images[20:22]
			res, cst, _ := session(t, q, Config{Protocol: p}, imgs)
			checkAgainstReference(t, q, imgs, res)
			// OptiEncode packs each layer's outputs into fewer ciphertexts.
			for i, l := range cst.Layers {
				if i < 2 && l.Plan.OutputCts >= int64(q.Arch[i].Co) {
					t.Errorf("layer %d: %d output ciphertexts for %d channels", i, l.Plan.OutputCts, q.Arch[i].Co)
				}
			}
		})
	}
}

func TestServerRejectsBadHello(t *testing.T) {
	q, _ := fixtures(t)
	for _, tc := range []struct {
		name  string
		hello []byte
	}{
		{"version", []byte{9, 0, 13}},
		{"protocol", []byte{1, 7, 13}},
		{"logN", []byte{1, 0, 40}},
		{"short", []byte{1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc, sc := transport.Pipe()
			done := make(chan error, 1)
			go func() { _, err := Serve(sc, q); done <- err }()
			if err := cc.Send(frameHello, tc.hello); err != nil {
				t.Fatal(err)
			}
			_, err := protocol.Recv(cc, frameModel)
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte("peer aborted")) {
				t.Errorf("client got %v, want the server's abort", err)
			}
			if err := <-done; err == nil {
				t.Error("server accepted a bad hello")
			}
			cc.Close()
		})
	}
}

func TestServerRejectsWrongFrame(t *testing.T) {
	q, _ := fixtures(t)
	cc, sc := transport.Pipe()
	done := make(chan error, 1)
	go func() { _, err := Serve(sc, q); done <- err }()
	if err := cc.Send(frameNext, []byte{1}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Fatal("server accepted a frame out of order")
	}
	cc.Close()
}

func TestMessagesRoundTrip(t *testing.T) {
	for _, msgs := range [][][]byte{nil, {{}}, {{1, 2, 3}, {}, bytes.Repeat([]byte{7}, 1000)}} {
		got, err := DecodeMessages(EncodeMessages(msgs))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(msgs) {
			t.Fatalf("got %d messages, want %d", len(got), len(msgs))
		}
		for i := range msgs {
			if !bytes.Equal(got[i], msgs[i]) {
				t.Errorf("message %d differs", i)
			}
		}
	}
	bad := [][]byte{
		{},
		{0, 0, 0, 1},
		{0, 0, 0, 1, 0, 0, 0, 5, 1},
		{0, 0, 0, 0, 9},
		{0xff, 0xff, 0xff, 0xff},
	}
	for i, b := range bad {
		if _, err := DecodeMessages(b); err == nil {
			t.Errorf("case %d: malformed list accepted", i)
		}
	}
}

func FuzzDecodeMessages(f *testing.F) {
	f.Add(EncodeMessages([][]byte{{1, 2}, {3}}))
	f.Add([]byte{0, 0, 0, 2, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		msgs, err := DecodeMessages(b)
		if err != nil {
			return
		}
		if !bytes.Equal(EncodeMessages(msgs), b) {
			t.Fatal("decode/encode is not the identity")
		}
	})
}

func FuzzDecodeHello(f *testing.F) {
	f.Add([]byte{1, 0, 13})
	f.Add([]byte{1, 2, 12})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, _, err := protocol.ParseHello(b, 0)
		if err != nil {
			return
		}
		if !bytes.Equal(h.Append(nil), b) {
			t.Fatal("decode/encode is not the identity")
		}
	})
}

func FuzzDecodeGalois(f *testing.F) {
	f.Add(encodeGalois(0, 3, []byte{1, 2}))
	f.Fuzz(func(t *testing.T, b []byte) {
		i, n, k, err := decodeGalois(b)
		if err != nil {
			return
		}
		if i >= n || !bytes.Equal(encodeGalois(i, n, k), b) {
			t.Fatalf("inconsistent decode: key %d of %d", i, n)
		}
	})
}
