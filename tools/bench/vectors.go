package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/client/programs"
)

// VectorsOptions configure the encrypted-vectors benchmark: one .fvecs
// file loaded twice into one device process, as plain and as encrypted
// vectors (client.VectorOptions.EncryptVectors), the same queries asked
// of both.
type VectorsOptions struct {
	Vectors   int
	Dim       int
	Queries   int
	Seed      uint64
	Dir       string   // work directory (file, store, keys)
	Device    []string // command starting a device daemon (args before --store)
	Plaintext bool     // the device serves plaintext on loopback (default: TLS 1.3)
	Log       func(format string, args ...any)
	Progress  func(stage string, done, total int64)
}

// VectorsMode is one storage mode's measured cost.
type VectorsMode struct {
	Encrypted     bool    `json:"encrypted_vectors"`
	LoadS         float64 `json:"load_s"`
	StoredBytes   int64   `json:"stored_bytes"`
	QueryMeanS    float64 `json:"query_mean_s"`
	DeviceMeanS   float64 `json:"device_mean_s"` // the device's RunStream time
	Top1Agree     int     `json:"top1_agree"`    // queries whose top 1 is brute force's
	QueryBytes    int64   `json:"query_bytes"`
	AnswerBytes   int64   `json:"answer_bytes"`
	MaxScoreDiffR float64 `json:"max_score_diff_rel"` // largest |d_mode − d_brute| / d_brute of the reported top-1 distance²
}

// VectorsReport is what `rosemary bench vectors --json` prints; every
// figure is measured in the run.
type VectorsReport struct {
	Transport  string      `json:"transport"`
	Vectors    int         `json:"vectors"`
	Dim        int         `json:"dim"`
	FileBytes  int64       `json:"file_bytes"`
	Queries    int         `json:"queries"`
	Plain      VectorsMode `json:"plain"`
	Encrypted  VectorsMode `json:"encrypted"`
	LoadX      float64     `json:"load_ratio"`   // encrypted / plain
	QueryX     float64     `json:"query_ratio"`  // encrypted / plain, end to end
	StoredX    float64     `json:"stored_ratio"` // encrypted / plain
	Provenance string      `json:"provenance"`
}

// RunVectors runs the benchmark.
func RunVectors(ctx context.Context, opt VectorsOptions) (*VectorsReport, error) {
	logf, progress := orQuiet(opt.Log, opt.Progress)
	if opt.Vectors < 1 || opt.Dim < 1 || opt.Queries < 1 {
		return nil, fmt.Errorf("bench: %d vectors of %d dimensions, %d queries", opt.Vectors, opt.Dim, opt.Queries)
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, err
	}
	rep := &VectorsReport{Vectors: opt.Vectors, Dim: opt.Dim, Queries: opt.Queries, Provenance: "measured here"}
	vecPath := filepath.Join(opt.Dir, "base.fvecs")
	if err := writeVectors(vecPath, opt.Seed, opt.Vectors, opt.Dim); err != nil {
		return nil, err
	}
	db, err := readVectors(vecPath)
	if err != nil {
		return nil, err
	}
	keys, dp, err := freshDevice(ctx, opt.Dir, opt.Device, opt.Plaintext, logf)
	if err != nil {
		return nil, err
	}
	defer dp.stop()
	rep.Transport = dp.transport
	c, err := client.Open(ctx, dp.addr, keys, dp.dial...)
	if c != nil {
		c.WithPrograms(programs.New())
	}
	if err != nil {
		return nil, err
	}
	defer c.Close()
	rng := rand.New(rand.NewPCG(opt.Seed, 123))
	queries := make([][]float32, opt.Queries)
	for i := range queries {
		queries[i] = make([]float32, opt.Dim)
		for k := range queries[i] {
			queries[i][k] = float32(rng.NormFloat64())
		}
	}
	for _, m := range []*VectorsMode{&rep.Plain, &rep.Encrypted} {
		m.Encrypted = m == &rep.Encrypted
		name := "plain"
		if m.Encrypted {
			name = "encrypted"
		}
		if _, err := c.CreateVectors(ctx, name, opt.Dim, client.VectorOptions{Metric: client.L2, EncryptVectors: m.Encrypted}); err != nil {
			return nil, err
		}
		in, err := timedLoad(ctx, c, name, vecPath, false, client.LoadOptions{Vectors: dataset.FVecs},
			func(done, size int64) { progress("load "+name, min(done, size), size) })
		if err != nil {
			return nil, err
		}
		rep.FileBytes, m.LoadS, m.StoredBytes = in.fileBytes, in.seconds, in.Bytes
		logf("%s: %d vectors loaded in %.1f s, %d bytes stored", name, in.Records, m.LoadS, m.StoredBytes)
		// The first query sets the plan and uploads the keys: not timed.
		if _, err := c.Nearest(ctx, name, queries[0], 1); err != nil {
			return nil, err
		}
		var wall, dev float64
		for i, q := range queries {
			res, err := c.Nearest(ctx, name, q, 1)
			if err != nil {
				return nil, err
			}
			want := nearest(db, q)
			if res.IDs[0] == want {
				m.Top1Agree++
			}
			var d float64
			for k := range q {
				t := float64(db[res.IDs[0]][k] - q[k])
				d += t * t
			}
			if d > 0 {
				m.MaxScoreDiffR = max(m.MaxScoreDiffR, abs(res.Scores[0]-d)/d)
			}
			wall += res.Seconds
			dev += res.DeviceSeconds
			m.QueryBytes, m.AnswerBytes = res.QueryBytes, res.AnswerBytes
			progress("nearest "+name, int64(i+1), int64(opt.Queries))
		}
		m.QueryMeanS, m.DeviceMeanS = wall/float64(opt.Queries), dev/float64(opt.Queries)
		logf("%s: top-1 = brute force on %d of %d queries, %.3f s each (device %.3f s)", name, m.Top1Agree, opt.Queries, m.QueryMeanS, m.DeviceMeanS)
	}
	rep.LoadX = rep.Encrypted.LoadS / rep.Plain.LoadS
	rep.QueryX = rep.Encrypted.QueryMeanS / rep.Plain.QueryMeanS
	rep.StoredX = float64(rep.Encrypted.StoredBytes) / float64(rep.Plain.StoredBytes)
	return rep, nil
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
