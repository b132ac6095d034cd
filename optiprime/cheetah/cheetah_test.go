package cheetah

import (
	"crypto/rand"
	"encoding/binary"
	"math"
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
)

func mustParams(t testing.TB, lit Literal) Parameters {
	t.Helper()
	p, err := NewParameters(lit)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func randPoly(t testing.TB, n, logT int) []uint64 {
	t.Helper()
	buf := make([]byte, 8*n)
	if _, err := rand.Read(buf); err != nil {
		t.Fatal(err)
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(buf[8*i:]) & (1<<uint(logT) - 1)
	}
	return out
}

// negacyclic is the reference product in Z_{2^logT}[X]/(X^N+1).
func negacyclic(a, b []uint64, N, logT int) []uint64 {
	mask := uint64(1)<<uint(logT) - 1
	out := make([]uint64, N)
	for i, ai := range a {
		if ai == 0 {
			continue
		}
		for j, bj := range b {
			if bj == 0 {
				continue
			}
			k := i + j
			if k < N {
				out[k] += ai * bj
			} else {
				out[k-N] -= ai * bj
			}
		}
	}
	for i := range out {
		out[i] &= mask
	}
	return out
}

func automorph(a []uint64, g uint64, N, logT int) []uint64 {
	mask := uint64(1)<<uint(logT) - 1
	out := make([]uint64, N)
	for i, v := range a {
		e := (uint64(i) * g) % uint64(2*N)
		if e < uint64(N) {
			out[e] = (out[e] + v) & mask
		} else {
			out[e-uint64(N)] = (out[e-uint64(N)] - v) & mask
		}
	}
	return out
}

// roles are the objects of the two parties over one key set: the client
// encrypts and decrypts under the secret key, the server evaluates under
// the public key and the Galois keys gks.
func roles(p Parameters, keys *Keys, gks []*rlwe.GaloisKey) (*Encryptor, *Decryptor, *Evaluator) {
	return NewEncryptor(p, keys.SK), NewDecryptor(p, keys.SK), NewEvaluator(p, keys.PK, gks)
}

// decryptsTo fails unless ct decrypts to want.
func decryptsTo(t *testing.T, dec *Decryptor, ct *Ciphertext, what string, want []uint64) {
	t.Helper()
	got, err := dec.Decrypt(ct)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, what, got, want)
}

func equal(t *testing.T, what string, got, want []uint64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: length %d, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: coefficient %d = %d, want %d", what, i, got[i], want[i])
		}
	}
}

func TestPresetsSecure(t *testing.T) {
	for _, lit := range []Literal{PN12, PN13, PN14, PN15} {
		p := mustParams(t, lit)
		if !p.Secure() {
			t.Errorf("%s: logQP %.1f over the HE-standard bound for logN %d", lit.Name, p.LogQP(), p.LogN())
		}
	}
	if _, err := NewParameters(Literal{LogN: 12, LogQ: []int{60, 49}}); err == nil {
		t.Error("parameters without P and without base-2 decomposition accepted")
	}
}

func TestEncryptMulDecryptExact(t *testing.T) {
	for _, tc := range []struct {
		lit  Literal
		logT int
		wMax int // bits of the weights (full range when = logT)
	}{
		{PN12, 20, 20},
		{PN12, 37, 20},
		{PN12, 45, 8},
		{PN13, 37, 37},
	} {
		p := mustParams(t, tc.lit)
		N := p.N()
		keys := GenKeys(p)
		enc, dec, ev := roles(p, keys, nil)
		a := randPoly(t, N, tc.logT)
		// b: a kernel-like polynomial with 64 non-zeros, signed weights.
		b := make([]uint64, N)
		ws := randPoly(t, 64, tc.wMax)
		pos := randPoly(t, 64, p.LogN())
		for i := range ws {
			w := ws[i] - (1 << uint(tc.wMax-1)) // centered
			b[pos[i]] = w & (1<<uint(tc.logT) - 1)
		}
		ct, _, err := enc.EncryptSeeded(a, tc.logT)
		if err != nil {
			t.Fatal(err)
		}
		decryptsTo(t, dec, ct, "Dec(Enc(a))", a)

		pt, err := ev.EncodePlain(b, ct.Level(), tc.logT)
		if err != nil {
			t.Fatal(err)
		}
		prod, err := ev.MulPlainNew(ct, pt)
		if err != nil {
			t.Fatal(err)
		}
		if prod.Noise >= p.Budget(prod.Level(), tc.logT) {
			t.Fatalf("%s t=2^%d: bound 2^%.1f over budget", tc.lit.Name, tc.logT, prod.Noise.Log2())
		}
		decryptsTo(t, dec, prod, "Dec(Enc(a)*b)", negacyclic(a, b, N, tc.logT))

		// Add a server share s: Dec = a*b + s*b.
		s := randPoly(t, N, tc.logT)
		ct2, _, err := enc.EncryptSeeded(a, tc.logT)
		if err != nil {
			t.Fatal(err)
		}
		if err := ev.AddPlain(ct2, s); err != nil {
			t.Fatal(err)
		}
		sum := make([]uint64, N)
		for i := range sum {
			sum[i] = (a[i] + s[i]) & (1<<uint(tc.logT) - 1)
		}
		decryptsTo(t, dec, ct2, "Dec(Enc(a)+s)", sum)
	}
}

func TestAutomorphismMonomialAdd(t *testing.T) {
	for _, lit := range []Literal{PN12, PN13} {
		p := mustParams(t, lit)
		N := p.N()
		logT := 30
		keys := GenKeys(p)
		gs := []uint64{uint64(N + 1), uint64(N/2 + 1), 5, 25}
		gks, err := GenGaloisKeys(p, keys.SK, gs)
		if err != nil {
			t.Fatal(err)
		}
		enc, dec, ev := roles(p, keys, gks)
		a := randPoly(t, N, logT)
		ct, _, err := enc.EncryptSeeded(a, logT)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range gs {
			r, err := ev.AutomorphismNew(ct, g)
			if err != nil {
				t.Fatal(err)
			}
			decryptsTo(t, dec, r, "σ(a)", automorph(a, g, N, logT))
		}
		if _, err := ev.AutomorphismNew(ct, 3); err == nil {
			t.Error("automorphism without key succeeded")
		}
		for _, k := range []int{1, 7, N - 1, N + 3, -5} {
			r := ev.MulMonomialNew(ct, k)
			mono := make([]uint64, N)
			kk := ((k % (2 * N)) + 2*N) % (2 * N)
			if kk < N {
				mono[kk] = 1
			} else {
				mono[kk-N] = 1<<uint(logT) - 1
			}
			decryptsTo(t, dec, r, "a·X^k", negacyclic(a, mono, N, logT))
		}
		c2 := ct.CopyNew()
		if err := ev.Add(c2, ct); err != nil {
			t.Fatal(err)
		}
		if err := ev.Sub(c2, ct); err != nil {
			t.Fatal(err)
		}
		if err := ev.Add(c2, c2.CopyNew()); err != nil {
			t.Fatal(err)
		}
		got, err := dec.Decrypt(c2)
		if err != nil {
			t.Fatal(err)
		}
		twice := make([]uint64, N)
		for i := range twice {
			twice[i] = (2 * a[i]) & (1<<uint(logT) - 1)
		}
		equal(t, "a+a-a+..", got, twice)
	}
}

// phaseLevel0 returns the exact level-0 phase of ct (coefficient domain).
func phaseLevel0(p Parameters, keys *Keys, c [2][]uint64) []uint64 {
	r0 := p.RingQ().AtLevel(0)
	c1 := r0.NewPoly()
	copy(c1.Coeffs[0], c[1])
	r0.NTT(c1, c1)
	r0.MulCoeffsMontgomery(c1, keys.SK.Value.Q, c1)
	r0.INTT(c1, c1)
	q0 := p.RLWE().Q()[0]
	out := make([]uint64, p.N())
	for i := range out {
		out[i] = (c[0][i] + c1.Coeffs[0][i]) % q0
	}
	return out
}

func TestRerandomizeCompressRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		lit  Literal
		logT int
	}{{PN12, 21}, {PN12, 37}, {PN13, 41}} {
		p := mustParams(t, tc.lit)
		N := p.N()
		keys := GenKeys(p)
		enc, dec, ev := roles(p, keys, nil)
		a := randPoly(t, N, tc.logT)
		ct, seed, err := enc.EncryptSeeded(a, tc.logT)
		if err != nil {
			t.Fatal(err)
		}
		// Through the input wire format.
		data, err := p.MarshalInput(ct, seed)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) != p.InputSize() {
			t.Fatalf("input size %d, InputSize %d", len(data), p.InputSize())
		}
		ct, err = p.UnmarshalInput(data)
		if err != nil {
			t.Fatal(err)
		}
		decryptsTo(t, dec, ct, "seeded input", a)

		w := make([]uint64, 9)
		for i := range w {
			w[i] = uint64(i*37+5) & (1<<uint(tc.logT) - 1)
		}
		pt, err := ev.EncodePlain(w, ct.Level(), tc.logT)
		if err != nil {
			t.Fatal(err)
		}
		prod, err := ev.MulPlainNew(ct, pt)
		if err != nil {
			t.Fatal(err)
		}
		want := negacyclic(a, w, N, tc.logT)
		if err := ev.Rerandomize(prod, DefaultFloodLambda); err != nil {
			t.Fatal(err)
		}
		decryptsTo(t, dec, prod, "rerandomized", want)

		keep := []int{0, 1, 2, 100, N / 2, N - 1}
		comp, err := ev.Compress(prod, keep)
		if err != nil {
			t.Fatal(err)
		}
		if comp.D0 == 0 || comp.D1 == 0 || comp.D0 <= comp.D1 {
			t.Errorf("%s t=2^%d: dropped bits d0=%d d1=%d, expected 0 < d1 < d0", tc.lit.Name, tc.logT, comp.D0, comp.D1)
		}
		b0 := p.QiBits()[0]
		data, err = comp.MarshalBinary(b0)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) != p.OutputSize(len(keep), comp.D0, comp.D1) {
			t.Fatalf("output size %d, OutputSize %d", len(data), p.OutputSize(len(keep), comp.D0, comp.D1))
		}
		if full := 2 * N * b0 / 8; len(data)*2 > full {
			t.Errorf("compressed %d bytes, not under half of the uncompressed %d", len(data), full)
		}
		comp2, err := p.UnmarshalCompressed(data)
		if err != nil {
			t.Fatal(err)
		}
		vals, err := dec.DecryptCompressed(comp2, keep)
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range keep {
			if vals[i] != want[k] {
				t.Fatalf("compressed coefficient %d = %d, want %d", k, vals[i], want[k])
			}
		}

		// The error introduced by dropping bits is within 2^(d0-1) + N·2^(d1-1).
		exact := ev.levelZeroCoeffs(t, prod)
		exactPhase := phaseLevel0(p, keys, exact)
		q0 := p.RLWE().Q()[0]
		approx := [2][]uint64{make([]uint64, N), make([]uint64, N)}
		for i, k := range keep {
			approx[0][k] = (comp.C0[i] << uint(comp.D0)) % q0
		}
		for j := range approx[1] {
			approx[1][j] = (comp.C1[j] << uint(comp.D1)) % q0
		}
		approxPhase := phaseLevel0(p, keys, approx)
		limit := math.Exp2(float64(comp.D0-1)) + float64(N)*math.Exp2(float64(comp.D1-1))
		for _, k := range keep {
			var diff float64
			if approxPhase[k] >= exactPhase[k] {
				diff = float64(approxPhase[k] - exactPhase[k])
			} else {
				diff = float64(exactPhase[k] - approxPhase[k])
			}
			if diff > float64(q0)/2 {
				diff = float64(q0) - diff
			}
			if diff > limit {
				t.Fatalf("dropping bits moved phase %d by %.0f > bound %.0f", k, diff, limit)
			}
		}
	}
}

// levelZeroCoeffs switches a copy of ct to level 0 (coefficient domain).
func (ev *Evaluator) levelZeroCoeffs(t *testing.T, ct *Ciphertext) [2][]uint64 {
	t.Helper()
	level := ct.Level()
	rq := ev.p.RingQ().AtLevel(level)
	r0 := ev.p.RingQ().AtLevel(0)
	var out [2][]uint64
	for i := 0; i < 2; i++ {
		tmp := *ct.Ct.Value[i].CopyNew()
		rq.DivRoundByLastModulusManyNTT(level, tmp, rq.NewPoly(), tmp)
		z := r0.NewPoly()
		copy(z.Coeffs[0], tmp.Coeffs[0])
		r0.INTT(z, z)
		out[i] = z.Coeffs[0]
	}
	return out
}

func TestRejectsBadInput(t *testing.T) {
	p := mustParams(t, PN12)
	keys := GenKeys(p)
	ev := NewEvaluator(p, keys.PK, nil)
	if _, err := ev.EncodePlain(make([]uint64, p.N()+1), 0, 20); err == nil {
		t.Error("oversized plaintext accepted")
	}
	enc := NewEncryptor(p, keys.SK)
	if _, _, err := enc.EncryptSeeded([]uint64{1 << 20}, 20); err == nil {
		t.Error("coefficient ≥ t accepted")
	}
	if _, _, err := enc.EncryptSeeded([]uint64{1}, 46); err == nil {
		t.Error("t = 2^46 accepted")
	}
	if _, err := p.UnmarshalInput([]byte("RCI\x01")); err == nil {
		t.Error("truncated input accepted")
	}
	if _, err := p.UnmarshalCompressed([]byte("RCO\x01\x0c\x14\x00\x00\xff\xff\xff\xff")); err == nil {
		t.Error("nkeep > N accepted")
	}
	// Flooding that cannot fit must be refused, not silently weakened.
	if _, _, err := p.RerandomizedBound(Bound(math.Exp2(80)), p.MaxLevel(), 37, 40); err == nil {
		t.Error("oversized flooding accepted")
	}
}
