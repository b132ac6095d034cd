package edge

import (
	"crypto/sha3"
	"encoding/binary"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func fixedSeed() [SeedSize]byte {
	var s [SeedSize]byte
	for i := range s {
		s[i] = byte(i)
	}
	return s
}

// The PRNG must be exactly SHAKE256(seed ‖ le64(stream) ‖ le64(block)).
func TestPRNGIsShakeCounterMode(t *testing.T) {
	seed := fixedSeed()
	p := NewPRNG(seed)
	p.Seek(7, 3)
	got := make([]byte, 2*BlockSize+5)
	p.Read(got)
	for blk := 0; blk < 3; blk++ {
		in := append([]byte{}, seed[:]...)
		in = binary.LittleEndian.AppendUint64(in, 7)
		in = binary.LittleEndian.AppendUint64(in, uint64(3+blk))
		want := sha3.SumSHAKE256(in, BlockSize)
		lo := blk * BlockSize
		hi := min(lo+BlockSize, len(got))
		for i := lo; i < hi; i++ {
			if got[i] != want[i-lo] {
				t.Fatalf("block %d byte %d: got %02x want %02x", blk, i-lo, got[i], want[i-lo])
			}
		}
	}
}

type samplerGolden struct {
	Bytes    []byte   `json:"bytes"`
	Binomial []int8   `json:"binomial"`
	Ternary  []int8   `json:"ternary"`
	Uniform  []uint64 `json:"uniform_q1053818881"`
	Uniform2 []uint64 `json:"uniform_q1152921504606830593"`
}

func goldenSamples() samplerGolden {
	seed := fixedSeed()
	p := NewPRNG(seed)
	var g samplerGolden
	g.Bytes = make([]byte, 32)
	p.Read(g.Bytes)
	p.Seek(StreamE0, 0)
	g.Binomial = make([]int8, 32)
	p.SampleBinomial(g.Binomial)
	p.Seek(StreamU, 0)
	g.Ternary = make([]int8, 32)
	p.SampleTernary(g.Ternary)
	p.Seek(StreamA, 0)
	g.Uniform = make([]uint64, 16)
	p.SampleUniform(g.Uniform, 1053818881)
	g.Uniform2 = make([]uint64, 8)
	p.SampleUniform(g.Uniform2, 1152921504606830593)
	return g
}

// Fixed seed → fixed output vectors (testdata/sampler_golden.json).
func TestSamplerGolden(t *testing.T) {
	path := filepath.Join("testdata", "sampler_golden.json")
	got := goldenSamples()
	if *update {
		b, _ := json.MarshalIndent(got, "", " ")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden: %v (run with -update once)", err)
	}
	var want samplerGolden
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Fatalf("sampler output changed:\n got %s\nwant %s", gb, wb)
	}
}

func TestMod3Exhaustive(t *testing.T) {
	for r := uint32(0); r < 256; r++ {
		if mod3(r) != r%3 {
			t.Fatalf("mod3(%d) = %d", r, mod3(r))
		}
	}
}

// chi2 returns Pearson's statistic of observed counts against expected ones.
func chi2(obs []int, exp []float64) float64 {
	s := 0.0
	for i := range obs {
		d := float64(obs[i]) - exp[i]
		s += d * d / exp[i]
	}
	return s
}

// Ternary: 10^6 samples, 2 degrees of freedom; critical value at p = 0.001
// is 13.82. A sampler that accepted r = 255 (bias 1/768) scores ≈ 30 here.
func TestTernaryChiSquare(t *testing.T) {
	p := NewPRNG(fixedSeed())
	const n = 1_000_000
	buf := make([]int8, n)
	p.SampleTernary(buf)
	obs := make([]int, 3)
	for _, v := range buf {
		if v < -1 || v > 1 {
			t.Fatalf("ternary sample %d out of range", v)
		}
		obs[v+1]++
	}
	exp := []float64{n / 3.0, n / 3.0, n / 3.0}
	if c := chi2(obs, exp); c > 13.82 {
		t.Fatalf("ternary chi-square %.2f > 13.82 (counts %v)", c, obs)
	}
}

// Uniform mod a 30-bit prime into 64 equal-width bins: 63 degrees of
// freedom, critical value at p = 0.001 is 103.44. Also for a 60-bit prime.
func TestUniformChiSquare(t *testing.T) {
	for _, q := range []uint64{1053818881, 1152921504606830593} {
		p := NewPRNG(fixedSeed())
		const n = 640_000
		buf := make([]uint64, n)
		p.SampleUniform(buf, q)
		obs := make([]int, 64)
		for _, v := range buf {
			if v >= q {
				t.Fatalf("uniform sample %d ≥ q=%d", v, q)
			}
			obs[int(float64(v)/float64(q)*64)]++
		}
		exp := make([]float64, 64)
		for i := range exp {
			exp[i] = n / 64.0
		}
		if c := chi2(obs, exp); c > 103.44 {
			t.Fatalf("q=%d: uniform chi-square %.2f > 103.44", q, c)
		}
	}
}

// Binomial k=21: mean 0, variance 10.5, and the shape of Bin(42,1/2)-21.
func TestBinomialMoments(t *testing.T) {
	p := NewPRNG(fixedSeed())
	const n = 600_000
	buf := make([]int8, n)
	p.SampleBinomial(buf)
	var sum, sum2 float64
	obs := make([]int, 43)
	for _, v := range buf {
		if v < -21 || v > 21 {
			t.Fatalf("binomial sample %d out of range", v)
		}
		sum += float64(v)
		sum2 += float64(v) * float64(v)
		obs[v+21]++
	}
	mean := sum / n
	variance := sum2/n - mean*mean
	// standard error of the mean: sqrt(10.5/n) ≈ 0.0042; of the variance ≈ 0.019.
	if math.Abs(mean) > 0.025 {
		t.Errorf("binomial mean %.4f, want 0 ± 0.025", mean)
	}
	if math.Abs(variance-10.5) > 0.12 {
		t.Errorf("binomial variance %.4f, want 10.5 ± 0.12", variance)
	}
	// Chi-square against the exact pmf over the bins -12..12 plus two tails.
	pmf := make([]float64, 43)
	c := 1.0
	for k := 0; k <= 42; k++ {
		pmf[k] = c / math.Pow(2, 42)
		c = c * float64(42-k) / float64(k+1)
	}
	var o []int
	var e []float64
	lowO, lowE, highO, highE := 0, 0.0, 0, 0.0
	for k := 0; k <= 42; k++ {
		switch {
		case k < 9:
			lowO += obs[k]
			lowE += pmf[k] * n
		case k > 33:
			highO += obs[k]
			highE += pmf[k] * n
		default:
			o = append(o, obs[k])
			e = append(e, pmf[k]*n)
		}
	}
	o = append(o, lowO, highO)
	e = append(e, lowE, highE)
	// 27 bins, 26 degrees of freedom: critical value at p = 0.001 is 54.05.
	if s := chi2(o, e); s > 54.05 {
		t.Errorf("binomial chi-square %.2f > 54.05", s)
	}
}

// Each binomial draw consumes 16 bytes per three samples; samples drawn in
// one call or in pieces of 3 agree.
func TestBinomialChunking(t *testing.T) {
	a := make([]int8, 30)
	NewPRNG(fixedSeed()).SampleBinomial(a)
	p := NewPRNG(fixedSeed())
	b := make([]int8, 30)
	for i := 0; i < 30; i += 3 {
		p.SampleBinomial(b[i : i+3])
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("sample %d: %d vs %d", i, a[i], b[i])
		}
	}
}

func TestSmallToMod(t *testing.T) {
	q := uint64(1053818881)
	out := make([]uint64, 3)
	smallToMod(out, []int8{-1, 0, 21}, q)
	if out[0] != q-1 || out[1] != 0 || out[2] != 21 {
		t.Fatalf("smallToMod: %v", out)
	}
}

func TestPRNGAllocs(t *testing.T) {
	p := NewPRNG(fixedSeed())
	buf := make([]int8, 4096)
	if a := testing.AllocsPerRun(10, func() { p.Seek(StreamE0, 0); p.SampleBinomial(buf) }); a != 0 {
		t.Fatalf("SampleBinomial allocates %.1f times", a)
	}
}
