package programs

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/client/internal/session"
	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/internal/fhetest"
)

// encryptedScoreBound is how far a decrypted score of an encrypted-vector
// database may be from the plaintext inner product, for vectors and
// queries of coefficients in [−1, 1] and [−1/8, 1/8]: the product of two
// fresh ciphertexts adds e_q·x + e_x·q and the key switch's error to the
// plain scan's rounding; measured errors stay below 1e-7 (fresh keys and
// noise each run), and the bound leaves room for other data.
const encryptedScoreBound = 1e-3

// session.Vectors stored as CKKS ciphertexts: the device computes every score
// ciphertext × ciphertext (relinearized with the uploaded key), the
// decrypted scores equal the plaintext inner products within the bound,
// and the store's files hold none of the plaintexts the plain database
// would have stored.
func TestEncryptedVectorSessionScores(t *testing.T) {
	ctx := context.Background()
	const n, dim = 300, 24 // 300 vectors in 10 plaintexts of 32-coefficient slots
	shape, err := VectorShape("hevec", n, dim)
	if err != nil {
		t.Fatal(err)
	}
	shape.Encrypted = true
	dir := t.TempDir()
	st, err := store.Open(dir, layout.Layout{Channels: 4, PageSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dev, err := device.New(st, device.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	_, params := fhetest.CKKSParams(t, "hevec")
	sk := rlwe.NewKeyGenerator(params).GenSecretKeyNew()
	if _, err := NewVectorLoader(storeSink(st), "v", shape, nil); err == nil {
		t.Fatal("an encrypted-vector loader without a secret key was made")
	}
	l, err := NewVectorLoader(storeSink(st), "v", shape, sk)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	vecs := make([][]float64, n)
	for i := range vecs {
		vecs[i] = make([]float64, dim)
		for k := range vecs[i] {
			vecs[i][k] = r.Float64()*2 - 1
		}
		if err := l.Add(ctx, vecs[i]); err != nil {
			t.Fatal(err)
		}
	}
	written, err := l.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := NewVectorSession(ctx, dev, "v", shape, sk, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q := make([]float64, dim)
	for k := range q {
		q[k] = (r.Float64()*2 - 1) / 8
	}
	got, resp, err := sess.Scores(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var worst float64
	for i, v := range vecs {
		var want float64
		for k := range v {
			want += v[k] * q[k]
		}
		d := math.Abs(got[i] - want)
		worst = max(worst, d)
		if d > encryptedScoreBound {
			t.Fatalf("score %d: %g, want %g", i, got[i], want)
		}
	}
	t.Logf("largest score error %.3g over %d vectors; %d bytes stored", worst, n, written)
	if resp.Stored == 0 {
		t.Fatal("the device read no stored ciphertexts")
	}
	// The plaintexts a plain database would store: none of their limbs
	// (first 64 bytes of each) is in any store file.
	_, codec, err := vectorCodec(shape)
	if err != nil {
		t.Fatal(err)
	}
	var files [][]byte
	err = filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		files = append(files, b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := 0; p*codec.Layout.PerPt < n; p++ {
		pt, err := codec.Plaintext(vecs[p*codec.Layout.PerPt : min((p+1)*codec.Layout.PerPt, n)])
		if err != nil {
			t.Fatal(err)
		}
		for li, limb := range pt.Value.Coeffs {
			needle := limbBytes8([][]uint64{limb[:8]})
			for _, f := range files {
				if bytes.Contains(f, needle) {
					t.Fatalf("plaintext %d limb %d is in the store", p, li)
				}
			}
		}
	}
}

// A session that reads plain stored vectors as ciphertexts (the shapes
// disagree: one poly per position, the program wants two) is refused by
// the device with an error, not a wrong answer or a panic.
func TestEncryptedShapeOverPlainVectorsRefused(t *testing.T) {
	ctx := context.Background()
	shape, err := VectorShape("hevec", 100, 8)
	if err != nil {
		t.Fatal(err)
	}
	st := openTestStore(t)
	dev, err := device.New(st, device.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewVectorLoader(storeSink(st), "v", shape, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if err := l.Add(ctx, make([]float64, 8)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	_, params := fhetest.CKKSParams(t, "hevec")
	shape.Encrypted = true
	sess, err := NewVectorSession(ctx, dev, "v", shape, rlwe.NewKeyGenerator(params).GenSecretKeyNew(), session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sess.Scores(ctx, make([]float64, 8)); !errors.Is(err, api.ErrInvalid) {
		t.Fatalf("ciphertexts read from plaintext objects: %v, want ErrInvalid", err)
	}
}
