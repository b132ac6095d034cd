package edge

import (
	"fmt"
	"math"
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
)

type latSetup struct {
	params ckks.Parameters
	sk     *rlwe.SecretKey
	pk     *rlwe.PublicKey
	ctx    *Context
	epk    *PublicKey
	esk    *SecretKey
}

func newLatSetup(t testing.TB, p Params, opts ...Option) *latSetup {
	t.Helper()
	lp, err := ckks.NewParametersFromLiteral(ckks.ParametersLiteral{LogN: bitsLen(p.N), Q: p.Q, LogDefaultScale: p.LogScale})
	if err != nil {
		t.Fatal(err)
	}
	sk, pk := rlwe.NewKeyGenerator(lp).GenKeyPairNew()
	ctx, err := NewContext(p, opts...)
	if err != nil {
		t.Fatal(err)
	}
	epk, err := ctx.ImportPublicKey(pk.Value[0].Q.Coeffs, pk.Value[1].Q.Coeffs, true)
	if err != nil {
		t.Fatal(err)
	}
	esk, err := ctx.ImportSecretKey(sk.Value.Q.Coeffs, true)
	if err != nil {
		t.Fatal(err)
	}
	return &latSetup{params: lp, sk: sk, pk: pk, ctx: ctx, epk: epk, esk: esk}
}

func bitsLen(n int) int {
	l := 0
	for 1<<l < n {
		l++
	}
	return l
}

func testValues(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Sin(float64(i)*0.37)*100 + float64(i%7)
	}
	return v
}

func (s *latSetup) toLattigo(ct *Ciphertext) *rlwe.Ciphertext {
	lct := ckks.NewCiphertext(s.params, 1, s.params.MaxLevel())
	for i := range ct.C0 {
		copy(lct.Value[0].Coeffs[i], ct.C0[i])
		copy(lct.Value[1].Coeffs[i], ct.C1[i])
	}
	lct.Scale = rlwe.NewScale(ct.Scale)
	return lct
}

func (s *latSetup) lattigoDecrypt(t *testing.T, ct *Ciphertext, n int) []float64 {
	t.Helper()
	pt := rlwe.NewDecryptor(s.params, s.sk).DecryptNew(s.toLattigo(ct))
	out := make([]float64, s.params.MaxSlots())
	if err := ckks.NewEncoder(s.params).Decode(pt, out); err != nil {
		t.Fatal(err)
	}
	return out[:n]
}

func maxErr(a, b []float64) float64 {
	m := 0.0
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

// Our encoding equals Lattigo's (coefficients differ at most by one rounding unit).
func TestEncoderMatchesLattigo(t *testing.T) {
	for _, n := range []int{1024, 4096} {
		p, _ := Preset(n)
		s := newLatSetup(t, p)
		vals := testValues(n / 2)
		scale := math.Exp2(float64(p.LogScale))
		buf := make([]uint64, n)
		if err := encodeInto(buf, vals, scale, s.ctx.logN); err != nil {
			t.Fatal(err)
		}
		pt := ckks.NewPlaintext(s.params, s.params.MaxLevel())
		if err := ckks.NewEncoder(s.params).Encode(vals, pt); err != nil {
			t.Fatal(err)
		}
		s.params.RingQ().INTT(pt.Value, pt.Value)
		q := p.Q[0]
		worst := int64(0)
		for j, c := range ints(buf) {
			l := int64(pt.Value.Coeffs[0][j])
			if l > int64(q/2) {
				l -= int64(q)
			}
			d := c - l
			if d < 0 {
				d = -d
			}
			worst = max(worst, d)
		}
		if worst > 1 {
			t.Fatalf("N=%d: encoded coefficients differ from Lattigo's by up to %d", n, worst)
		}
	}
}

// Public-key encryption with a converted Lattigo key decrypts under Lattigo,
// and under our decryptor; for every preset and every NTT path.
func TestEncryptLattigoDecrypts(t *testing.T) {
	for _, pp := range Presets {
		if testing.Short() && pp.N > 4096 {
			continue
		}
		for _, path := range allPaths {
			if path == PathTable && pp.N > 4096 {
				continue // the table path is the fly path's arithmetic with stored twiddles
			}
			t.Run(pp.Name+"/"+string(path), func(t *testing.T) { testEncryptLattigoDecrypts(t, pp, path) })
		}
	}
}

var allPaths = []NTTPath{PathFly, PathTable, PathRNS, PathRNSShared}

func testEncryptLattigoDecrypts(t *testing.T, pp Params, path NTTPath) {
	s := newLatSetup(t, pp, WithPath(path))
	enc, err := NewEncryptor(s.ctx, s.epk)
	if err != nil {
		t.Fatal(err)
	}
	// Keep |Δ·v| well below Q/2 (the N2048 preset has one 27-bit prime at scale 2^25).
	amp := math.Min(1, math.Exp2(pp.LogQ()-float64(pp.LogScale)-10))
	vals := testValues(pp.N / 2)
	for i := range vals {
		vals[i] *= amp
	}
	ct := s.ctx.NewCiphertext()
	scale := math.Exp2(float64(pp.LogScale))
	if err := enc.Encrypt(vals, scale, ct); err != nil {
		t.Fatal(err)
	}
	// Tolerance: fresh noise ~ 3.24·sqrt(4N/3)·sqrt(N) in slots, over Δ.
	tol := 8 * 3.24 * math.Sqrt(4*float64(pp.N)/3) * math.Sqrt(float64(pp.N)) / scale
	got := s.lattigoDecrypt(t, ct, len(vals))
	if e := maxErr(got, vals); e > tol {
		t.Fatalf("lattigo decryption error %.3g > %.3g", e, tol)
	}
	dec, err := NewDecryptor(s.ctx, s.esk)
	if err != nil {
		t.Fatal(err)
	}
	mine := make([]float64, len(vals))
	if err := dec.Decrypt(ct, mine); err != nil {
		t.Fatal(err)
	}
	if e := maxErr(mine, vals); e > tol {
		t.Fatalf("edge decryption error %.3g > %.3g", e, tol)
	}
	// A wrong key must not decrypt.
	other, _, _ := s.ctx.GenKeys()
	d2, _ := NewDecryptor(s.ctx, other)
	d2.Decrypt(ct, mine)
	if e := maxErr(mine, vals); e < 1 {
		t.Fatalf("decryption with a wrong key gave error %.3g", e)
	}
}

// Lattigo-encrypted ciphertexts decrypt with the edge decryptor.
func TestDecryptLattigoCiphertext(t *testing.T) {
	p, _ := Preset(4096)
	s := newLatSetup(t, p)
	vals := testValues(p.N / 2)
	pt := ckks.NewPlaintext(s.params, s.params.MaxLevel())
	ckks.NewEncoder(s.params).Encode(vals, pt)
	lct, err := rlwe.NewEncryptor(s.params, s.pk).EncryptNew(pt)
	if err != nil {
		t.Fatal(err)
	}
	ct := s.ctx.NewCiphertext()
	for i := range ct.C0 {
		copy(ct.C0[i], lct.Value[0].Coeffs[i])
		copy(ct.C1[i], lct.Value[1].Coeffs[i])
	}
	ct.Scale = lct.Scale.Float64()
	dec, _ := NewDecryptor(s.ctx, s.esk)
	out := make([]float64, len(vals))
	if err := dec.Decrypt(ct, out); err != nil {
		t.Fatal(err)
	}
	if e := maxErr(out, vals); e > 1e-2 {
		t.Fatalf("error %.3g", e)
	}
}

// Seeded symmetric encryption: the server expands c1 and Lattigo decrypts.
func TestSeededSymmetric(t *testing.T) {
	p, _ := Preset(4096)
	s := newLatSetup(t, p)
	enc, err := NewSymEncryptor(s.ctx, s.esk)
	if err != nil {
		t.Fatal(err)
	}
	vals := testValues(p.N / 2)
	sct := s.ctx.NewSeededCiphertext()
	scale := math.Exp2(30)
	if err := enc.EncryptSeeded(vals, scale, sct); err != nil {
		t.Fatal(err)
	}
	ct, err := s.ctx.ExpandSeeded(sct)
	if err != nil {
		t.Fatal(err)
	}
	if e := maxErr(s.lattigoDecrypt(t, ct, len(vals)), vals); e > 1e-3 {
		t.Fatalf("seeded ciphertext decrypts with error %.3g", e)
	}
	// Two encryptions use different seeds.
	sct2 := s.ctx.NewSeededCiphertext()
	enc.EncryptSeeded(vals, scale, sct2)
	if sct2.Seed == sct.Seed {
		t.Fatal("seed reused across ciphertexts")
	}
}

// Self-contained keys (no Lattigo) round-trip, with every NTT back end.
func TestGenKeysRoundTrip(t *testing.T) {
	for _, opt := range []Option{WithTableNTT(), func(*Context) {}} {
		testGenKeysRoundTrip(t, opt)
	}
}

func testGenKeysRoundTrip(t *testing.T, opt Option) {
	p, _ := Preset(2048)
	ctx, err := NewContext(p, opt)
	if err != nil {
		t.Fatal(err)
	}
	sk, pk, err := ctx.GenKeys()
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := NewEncryptor(ctx, pk)
	dec, _ := NewDecryptor(ctx, sk)
	vals := []float64{1, -2, 3.5, 0, 1000}
	ct := ctx.NewCiphertext()
	if err := enc.Encrypt(vals, math.Exp2(25), ct); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(vals))
	if err := dec.Decrypt(ct, out); err != nil {
		t.Fatal(err)
	}
	if e := maxErr(out, vals); e > 1e-2 {
		t.Fatalf("round trip error %.3g", e)
	}
}

// Steady-state encryption allocates nothing on every path; working memory
// is ≈ 2N words plus, on PathRNS, the encryptor's lean table of exactly 2N
// words (on PathRNSShared the context holds 2N words per limb).
func TestEncryptAllocatesNothing(t *testing.T) {
	for _, n := range []int{4096, 16384} {
		for _, path := range allPaths {
			p, _ := Preset(n)
			ctx, err := NewContext(p, WithPath(path))
			if err != nil {
				t.Fatal(err)
			}
			_, pk, _ := ctx.GenKeys()
			enc, _ := NewEncryptor(ctx, pk)
			ct := ctx.NewCiphertext()
			vals := testValues(n / 2)
			if a := testing.AllocsPerRun(3, func() {
				if err := enc.Encrypt(vals, 1<<25, ct); err != nil {
					t.Fatal(err)
				}
			}); a != 0 {
				t.Fatalf("N=%d %s: Encrypt allocates %.1f times per call", n, path, a)
			}
			lim := 2*8*n + 2*n + 1024
			if path == PathRNS {
				lim += 2*8*n + rnsHeaderBytes
			}
			if w := enc.WorkingBytes(); w > lim {
				t.Fatalf("N=%d %s: working bytes %d > %d", n, path, w, lim)
			}
			if path == PathRNSShared {
				if tb, want := ctx.TwiddleBytes(), len(p.Q)*(2*8*n+rnsHeaderBytes+8*(2*(ctx.logN+1)+2)); tb != want {
					t.Fatalf("N=%d %s: context twiddles %d bytes, want %d", n, path, tb, want)
				}
			}
		}
	}
}

func TestEncryptRejectsBadInput(t *testing.T) {
	p, _ := Preset(1024)
	ctx, _ := NewContext(p)
	_, pk, _ := ctx.GenKeys()
	enc, _ := NewEncryptor(ctx, pk)
	ct := ctx.NewCiphertext()
	cases := map[string]func() error{
		"too many values": func() error { return enc.Encrypt(make([]float64, 513), 1<<20, ct) },
		"NaN":             func() error { return enc.Encrypt([]float64{math.NaN()}, 1<<20, ct) },
		"huge":            func() error { return enc.Encrypt([]float64{1e30}, 1<<20, ct) },
		"bad scale":       func() error { return enc.Encrypt([]float64{1}, 0, ct) },
		"bad ct":          func() error { return enc.Encrypt([]float64{1}, 1<<20, &Ciphertext{}) },
	}
	for name, f := range cases {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := ctx.ImportPublicKey([][]uint64{make([]uint64, 3)}, nil, false); err == nil {
		t.Error("malformed public key accepted")
	}
}

// BenchmarkEncrypt measures Encode + public-key Encrypt: ours on every
// NTT path (ours/N=…/path=…; the default path is also plain ours/N=…) and
// Lattigo's (lattigo/N=…), reporting thread CPU time (cpu-ns/op) and, for
// ours, the working memory (work-B: encryptor buffers + context twiddles).
func BenchmarkEncrypt(b *testing.B) {
	for _, n := range []int{4096, 16384} {
		p, _ := Preset(n)
		s := newLatSetup(b, p)
		vals := testValues(n / 2)
		scale := math.Exp2(float64(p.LogScale))
		pk0, pk1 := s.ctx.ExportPublicKey(s.epk)
		ours := func(path NTTPath) func(b *testing.B) {
			return func(b *testing.B) {
				ctx, err := NewContext(p, WithPath(path))
				if err != nil {
					b.Fatal(err)
				}
				pk, err := ctx.ImportPublicKey(pk0, pk1, false)
				if err != nil {
					b.Fatal(err)
				}
				enc, err := NewEncryptor(ctx, pk)
				if err != nil {
					b.Fatal(err)
				}
				ct := ctx.NewCiphertext()
				b.ReportAllocs()
				cpuLoop(b, func() { enc.Encrypt(vals, scale, ct) })
				// After cpuLoop: its ResetTimer drops user metrics.
				b.ReportMetric(float64(enc.WorkingBytes()+ctx.TwiddleBytes()), "work-B")
			}
		}
		b.Run(fmt.Sprintf("ours/N=%d", n), ours(DefaultPath(p)))
		for _, path := range allPaths {
			if path.isRNS() && !DefaultPath(p).isRNS() {
				continue // no rns kernels here: the Go fallback is not a contender
			}
			b.Run(fmt.Sprintf("ours/N=%d/path=%s", n, path), ours(path))
		}
		b.Run(fmt.Sprintf("lattigo/N=%d", n), func(b *testing.B) {
			encd := ckks.NewEncoder(s.params)
			enc := rlwe.NewEncryptor(s.params, s.pk)
			pt := ckks.NewPlaintext(s.params, s.params.MaxLevel())
			ct := ckks.NewCiphertext(s.params, 1, s.params.MaxLevel())
			b.ReportAllocs()
			cpuLoop(b, func() {
				encd.Encode(vals, pt)
				enc.Encrypt(pt, ct)
			})
		})
	}
}
