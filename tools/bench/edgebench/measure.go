package edgebench

import (
	"fmt"
	"math"
	"runtime"

	"github.com/rosemary-fhe/rosemary/rise/edge"
	"github.com/rosemary-fhe/rosemary/rise/video"
)

// Result is one row of `rosemary edge bench`: figures measured on this
// machine by Measure (the lattigo_* fields are filled by the caller).
type Result struct {
	// Path is the NTT path of the main figures (the context default here:
	// rns on amd64 with AVX-512 IFMA, else fly).
	Path                edge.NTTPath `json:"path"`
	N                   int          `json:"n"`
	Limbs               int          `json:"limbs"`
	LogQ                float64      `json:"log_q"`
	EncryptMs           float64      `json:"encrypt_ms"`
	EncryptCPUMs        float64      `json:"encrypt_cpu_ms"`
	DecryptMs           float64      `json:"decrypt_ms"`
	WorkingBytes        int          `json:"working_bytes"`
	AllocsPerOp         float64      `json:"allocs_per_op"`
	LattigoEncryptMs    float64      `json:"lattigo_encrypt_ms"`
	LattigoEncryptCPUMs float64      `json:"lattigo_encrypt_cpu_ms"`
	LattigoWorkingBytes int          `json:"lattigo_working_bytes"`
	FPSQQVGA            float64      `json:"fps_qqvga"`
	FPSQVGA             float64      `json:"fps_qvga"`
	// The same encryptor with precomputed twiddle tables (faster, bigger).
	EncryptTableMs    float64 `json:"encrypt_table_ms"`
	EncryptTableCPUMs float64 `json:"encrypt_table_cpu_ms"`
	TableWorkingBytes int     `json:"table_working_bytes"`
	SeededEncryptMs   float64 `json:"seeded_encrypt_ms"`
	CtsQQVGA          int     `json:"cts_per_frame_qqvga"`
	CtsQVGA           int     `json:"cts_per_frame_qvga"`
	CiphertextBytes   int     `json:"ciphertext_bytes"`
	// Lattigo's figures over ours (set by SetLattigo): encryption speed-up in
	// wall and thread-CPU time, and our working memory as a fraction of
	// Lattigo's.
	SpeedupWall  float64 `json:"speedup_wall"`
	SpeedupCPU   float64 `json:"speedup_cpu"`
	WorkingRatio float64 `json:"working_ratio"`
	// Every path measured (the main one first), same rules.
	Paths []PathResult `json:"paths"`
}

// PathResult is public-key encryption on one NTT path.
type PathResult struct {
	Path         edge.NTTPath `json:"path"`
	EncryptMs    float64      `json:"encrypt_ms"`
	EncryptCPUMs float64      `json:"encrypt_cpu_ms"`
	// Encryptor buffers plus the context's twiddle state (Context.TwiddleBytes).
	WorkingBytes int `json:"working_bytes"`
}

// SetLattigo records Lattigo's figures and the ratios to ours.
func (r *Result) SetLattigo(encryptMs, encryptCPUMs float64, workingBytes int) {
	r.LattigoEncryptMs, r.LattigoEncryptCPUMs, r.LattigoWorkingBytes = encryptMs, encryptCPUMs, workingBytes
	ratio := func(a, b float64) float64 {
		if b <= 0 {
			return 0
		}
		return math.Round(a/b*1000) / 1000
	}
	r.SpeedupWall = ratio(encryptMs, r.EncryptMs)
	r.SpeedupCPU = ratio(encryptCPUMs, r.EncryptCPUMs)
	r.WorkingRatio = ratio(float64(r.WorkingBytes), float64(workingBytes))
}

// Values returns the deterministic slot values used for benchmarks.
func Values(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i%1000) - 500 + 0.25
	}
	return v
}

// Measure times public-key encryption on the given NTT path (the main
// figures; edge.DefaultPath(p) is the rns kernels where they run) and on the
// others (fly, the RISE configuration; table; rns and rns-shared where the
// rns kernels run), seeded encryption and decryption of one full ciphertext
// of p with iters repetitions, counts heap allocations per encryption,
// computes the working memory from the actual buffers (plus the context's
// NTT twiddle state) and the frames per second reached when packing and
// encrypting synthetic QQVGA and QVGA frames.
func Measure(p edge.Params, path edge.NTTPath, iters int) (Result, error) {
	r := Result{N: p.N, Limbs: len(p.Q), LogQ: math.Round(p.LogQ()*10) / 10, Path: path}
	ctx, err := edge.NewContext(p, edge.WithPath(path))
	if err != nil {
		return r, err
	}
	sk, pk, err := ctx.GenKeys()
	if err != nil {
		return r, err
	}
	enc, err := edge.NewEncryptor(ctx, pk)
	if err != nil {
		return r, err
	}
	vals := Values(p.Slots())
	scale := math.Exp2(float64(p.LogScale))
	ct := ctx.NewCiphertext()
	encrypt := func() error { return enc.Encrypt(vals, scale, ct) }
	if r.EncryptMs, r.EncryptCPUMs, err = TimeOp(iters, encrypt); err != nil {
		return r, err
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for i := 0; i < iters; i++ {
		if err := encrypt(); err != nil {
			return r, err
		}
	}
	runtime.ReadMemStats(&m1)
	r.AllocsPerOp = float64(m1.Mallocs-m0.Mallocs) / float64(iters)
	r.WorkingBytes = enc.WorkingBytes() + ctx.TwiddleBytes()
	r.CiphertextBytes = ctx.CiphertextSize()
	r.Paths = append(r.Paths, PathResult{Path: r.Path, EncryptMs: r.EncryptMs, EncryptCPUMs: r.EncryptCPUMs, WorkingBytes: r.WorkingBytes})

	dec, err := edge.NewDecryptor(ctx, sk)
	if err != nil {
		return r, err
	}
	out := make([]float64, p.Slots())
	if r.DecryptMs, err = timeIt(iters, func() error { return dec.Decrypt(ct, out) }); err != nil {
		return r, err
	}
	if e := maxAbsDiff(out, vals); e > 0.01 {
		return r, fmt.Errorf("edgebench: decryption error %g", e)
	}

	pk0, pk1 := ctx.ExportPublicKey(pk)
	others := []edge.NTTPath{edge.PathFly, edge.PathTable}
	if d := edge.DefaultPath(p); d == edge.PathRNS || d == edge.PathRNSShared {
		others = append(others, edge.PathRNS, edge.PathRNSShared)
	}
	for _, path := range others {
		if path == r.Path {
			continue
		}
		pr, err := measurePath(p, path, pk0, pk1, vals, scale, iters)
		if err != nil {
			return r, err
		}
		r.Paths = append(r.Paths, pr)
		if path == edge.PathTable {
			r.EncryptTableMs, r.EncryptTableCPUMs, r.TableWorkingBytes = pr.EncryptMs, pr.EncryptCPUMs, pr.WorkingBytes
		}
	}

	senc, err := edge.NewSymEncryptor(ctx, sk)
	if err != nil {
		return r, err
	}
	sct := ctx.NewSeededCiphertext()
	if r.SeededEncryptMs, err = timeIt(iters, func() error { return senc.EncryptSeeded(vals, scale, sct) }); err != nil {
		return r, err
	}

	codec, err := video.NewCodec(p)
	if err != nil {
		return r, err
	}
	r.CtsQQVGA = codec.CiphertextsPerFrame(video.QQVGAWidth, video.QQVGAHeight)
	r.CtsQVGA = codec.CiphertextsPerFrame(video.QVGAWidth, video.QVGAHeight)
	slots := make([]float64, codec.Slots)
	for _, fr := range []struct {
		w, h int
		fps  *float64
	}{{video.QQVGAWidth, video.QQVGAHeight, &r.FPSQQVGA}, {video.QVGAWidth, video.QVGAHeight, &r.FPSQVGA}} {
		frames := max(1, iters/4)
		t, err := timeIt(frames, func() error {
			f := video.SyntheticFrame(fr.w, fr.h, 0)
			for k := 0; k < codec.CiphertextsPerFrame(fr.w, fr.h); k++ {
				if err := codec.Pack(f, k, slots); err != nil {
					return err
				}
				if err := enc.Encrypt(slots, codec.Scale, ct); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return r, err
		}
		*fr.fps = math.Round(1000/t*10) / 10
	}
	return r, nil
}

// measurePath times public-key encryption under (pk0, pk1) on one path.
func measurePath(p edge.Params, path edge.NTTPath, pk0, pk1 [][]uint64, vals []float64, scale float64, iters int) (PathResult, error) {
	pr := PathResult{Path: path}
	ctx, err := edge.NewContext(p, edge.WithPath(path))
	if err != nil {
		return pr, err
	}
	pk, err := ctx.ImportPublicKey(pk0, pk1, false)
	if err != nil {
		return pr, err
	}
	enc, err := edge.NewEncryptor(ctx, pk)
	if err != nil {
		return pr, err
	}
	ct := ctx.NewCiphertext()
	if pr.EncryptMs, pr.EncryptCPUMs, err = TimeOp(iters, func() error { return enc.Encrypt(vals, scale, ct) }); err != nil {
		return pr, fmt.Errorf("edgebench: path %s: %w", path, err)
	}
	pr.WorkingBytes = enc.WorkingBytes() + ctx.TwiddleBytes()
	return pr, nil
}

func maxAbsDiff(a, b []float64) float64 {
	m := 0.0
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}
