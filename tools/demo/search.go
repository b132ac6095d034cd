package demo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/client/programs"
	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/optiprime/model"
	"github.com/rosemary-fhe/rosemary/sim/system"
	"github.com/rosemary-fhe/rosemary/tools/report"
)

// SearchOptions configure the main job.
type SearchOptions struct {
	Vectors    int // MNIST images in the database (≤ 1024)
	QueryImage int // MNIST test image queried (0–99)
	Opt        compiler.OptLevel
	Arch       string
}

// Projection is one simulated system's figures for a program.
type Projection struct {
	System   string  `json:"system"`
	LatencyS float64 `json:"latency_s"`
	PCIe     int64   `json:"pcie_bytes"`
	EnergyJ  float64 `json:"energy_j"`
}

// NNAnswer is the outcome of the encrypted nearest-neighbour query.
type NNAnswer struct {
	Query         int     `json:"query_image"`
	QueryLabel    int     `json:"query_label"`
	Neighbor      int     `json:"neighbor"`
	NeighborLabel int     `json:"neighbor_label"`
	PlainNeighbor int     `json:"plaintext_neighbor"`
	Score         float64 `json:"score"`
	MaxScoreError float64 `json:"max_score_error"` // over the k returned
}

// SearchSummary is what the main job found (measured here unless a field
// says projected).
type SearchSummary struct {
	Answer          NNAnswer `json:"answer"`
	Correct         bool     `json:"correct"`
	Error           string   `json:"error,omitempty"`
	HostNodes       int      `json:"plan_host_nodes"`
	SSDNodes        int      `json:"plan_ssd_nodes"`
	HostDeviceBytes int64    `json:"host_device_bytes"`
	HostOnlyBytes   int64    `json:"host_only_bytes"`
	DeviceStoreRead int64    `json:"device_store_bytes"`
	QuerySeconds    float64  `json:"query_s"`
	SetupSeconds    float64  `json:"setup_s"`
	// Projected (simulated) latency of this query and of the same search
	// at the paper's scale (Deep1B) on each system.
	ProjectedQuery []Projection `json:"projected_query"`
	ProjectedFull  []Projection `json:"projected_deep1b"`
}

// Search runs the main job under ctx and writes a report to w (nil for
// none): what a user of the client library does — make keys, open a
// device on a store, create a vector database, load their vectors, ask for
// the nearest one — with MNIST images as the user's data.
func Search(ctx context.Context, w io.Writer, o SearchOptions) (*SearchSummary, error) {
	if w == nil {
		w = io.Discard
	}
	if o.Vectors == 0 {
		o.Vectors = 1024
	}
	if o.Opt == "" {
		o.Opt = compiler.OptFull
	}
	if o.Arch == "" {
		o.Arch = "rosemary"
	}
	hw, err := arch.Preset(o.Arch)
	if err != nil {
		return nil, err
	}
	train, err := model.TrainSubset()
	if err != nil {
		return nil, err
	}
	test, err := model.TestSubset()
	if err != nil {
		return nil, err
	}
	if o.Vectors < 1 || o.Vectors > len(train.Images) || o.QueryImage < 0 || o.QueryImage >= len(test.Images) {
		return nil, fmt.Errorf("demo: %d vectors (1–%d), query image %d (0–%d)", o.Vectors, len(train.Images), o.QueryImage, len(test.Images)-1)
	}
	fmt.Fprintf(w, "\nRosemary demo — encrypted nearest-neighbour search through the client library (HEVEC coefficient encoding, N=4096, 128-bit)\n")
	dir, err := os.MkdirTemp("", "rosemary-demo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	t0 := time.Now()
	keys, err := client.NewKeys(filepath.Join(dir, "keys"))
	if err != nil {
		return nil, err
	}
	// The device runs in this process, over a store in dir.
	st, err := store.Open(filepath.Join(dir, "store"), layout.Layout{})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	dev, err := device.New(st, device.DefaultLimits())
	if err != nil {
		return nil, err
	}
	c := client.New(dev, keys).WithPrograms(programs.New())
	// The user's data: unit vectors of the first training images (cosine
	// similarity is their inner product), as an .fvecs file.
	db := make([][]float32, o.Vectors)
	for i := range db {
		db[i] = unitVector(train.Images[i])
	}
	var file bytes.Buffer
	if err := dataset.WriteFVecs(&file, db); err != nil {
		return nil, err
	}
	if _, err := c.CreateVectors(ctx, "mnist", len(db[0]), client.VectorOptions{Metric: client.InnerProduct}); err != nil {
		return nil, err
	}
	in, err := c.Load(ctx, "mnist", bytes.NewReader(file.Bytes()), client.LoadOptions{Vectors: dataset.FVecs})
	if err != nil {
		return nil, err
	}
	s := &SearchSummary{SetupSeconds: time.Since(t0).Seconds(), HostOnlyBytes: in.Bytes}
	fmt.Fprintf(w, "  client: keys made (the secret key stays in a 0600 file), %d MNIST images loaded as %s of plaintexts into a 4-channel interleaved store (in-process device), generation %d\n",
		o.Vectors, report.Bytes(in.Bytes), in.Generation)

	shape, err := programs.VectorShape(in.Preset, in.Records, in.Vectors.Dim)
	if err != nil {
		return nil, err
	}
	prog, err := shape.Program()
	if err != nil {
		return nil, err
	}
	plan, err := compiler.Compile(prog, hw, compiler.Options{Opt: o.Opt})
	if err != nil {
		return nil, err
	}
	for _, d := range plan.Placement {
		if d == compiler.SSD {
			s.SSDNodes++
		} else {
			s.HostNodes++
		}
	}
	fmt.Fprintf(w, "  compiler (--opt %s): %d of %d nodes on the SSD, %d on the host\n", o.Opt, s.SSDNodes, s.SSDNodes+s.HostNodes, s.HostNodes)

	// A first query sets the scan on the device and stores the evaluation
	// keys; the second is the one measured.
	q := unitVector(test.Images[o.QueryImage])
	if _, err := c.Nearest(ctx, "mnist", q, 1); err != nil {
		return nil, err
	}
	res, err := c.Nearest(ctx, "mnist", q, 5)
	if err != nil {
		return nil, err
	}
	s.QuerySeconds = res.Seconds
	s.HostDeviceBytes = res.QueryBytes + res.AnswerBytes
	s.DeviceStoreRead = res.StoreBytes
	a := NNAnswer{Query: o.QueryImage, QueryLabel: int(test.Labels[o.QueryImage]), Neighbor: res.IDs[0],
		NeighborLabel: int(train.Labels[res.IDs[0]]), Score: res.Scores[0]}
	best := math.Inf(-1)
	for i, x := range db {
		var dot float64
		for k := range x {
			dot += float64(x[k]) * float64(q[k])
		}
		if dot > best {
			a.PlainNeighbor, best = i, dot
		}
		for j, id := range res.IDs {
			if id == i {
				a.MaxScoreError = math.Max(a.MaxScoreError, math.Abs(res.Scores[j]-dot))
			}
		}
	}
	s.Answer = a
	s.Correct = a.Neighbor == a.PlainNeighbor && a.MaxScoreError < 1e-3
	if !s.Correct {
		s.Error = fmt.Sprintf("nearest %d (score error %.2g), plaintext search says %d", a.Neighbor, a.MaxScoreError, a.PlainNeighbor)
	}
	fmt.Fprintf(w, "  query: MNIST test image %d (a %d), encrypted here (%s ciphertext)\n", a.Query, a.QueryLabel, report.Bytes(res.QueryBytes))
	fmt.Fprintf(w, "  answer: nearest neighbour = training image %d (a %d), cosine %.4f; plaintext search agrees: %v (max score error %.1e over the top 5)\n",
		a.Neighbor, a.NeighborLabel, a.Score, a.Neighbor == a.PlainNeighbor, a.MaxScoreError)
	fmt.Fprintf(w, "  bytes host↔device for the query: %s (query up, every score down, encrypted); a host-only run pulls the database: %s (%.0f× more) — measured here\n",
		report.Bytes(s.HostDeviceBytes), report.Bytes(s.HostOnlyBytes), float64(s.HostOnlyBytes)/float64(max(s.HostDeviceBytes, 1)))
	fmt.Fprintf(w, "  the device read %s from its store next to the data; query time %.2f s (%.2f s on the device's interpreter, measured here)\n",
		report.Bytes(s.DeviceStoreRead), s.QuerySeconds, res.DeviceSeconds)

	// Projection: the same query, and the search at Deep1B scale.
	if s.ProjectedQuery, err = project(prog, hw, o.Opt); err != nil {
		return nil, err
	}
	full, err := workload.Program("hevec")
	if err != nil {
		return nil, err
	}
	if s.ProjectedFull, err = project(full, hw, o.Opt); err != nil {
		return nil, err
	}
	for _, set := range []struct {
		name string
		p    []Projection
	}{{"this query", s.ProjectedQuery}, {"Deep1B (10^9 vectors)", s.ProjectedFull}} {
		fmt.Fprintf(w, "  projected (simulated), %s:", set.name)
		for _, p := range set.p {
			fmt.Fprintf(w, " %s %.3g s;", p.System, p.LatencyS)
		}
		fmt.Fprintf(w, " Rosemary vs HA %.1f×, vs CPU %.1f×\n", set.p[1].LatencyS/set.p[0].LatencyS, set.p[2].LatencyS/set.p[0].LatencyS)
	}
	fmt.Fprintln(w, "  (a query this small is bound by flash read latency on Rosemary and HA alike; at scale the in-storage scan wins)")
	if s.Correct {
		fmt.Fprintln(w, "  result: CORRECT")
	} else {
		fmt.Fprintf(w, "  result: WRONG (%s)\n", s.Error)
	}
	return s, nil
}

// unitVector is an image's pixels scaled to length 1.
func unitVector(img []byte) []float32 {
	v := make([]float32, len(img))
	var n float64
	for _, p := range img {
		n += float64(p) * float64(p)
	}
	n = math.Sqrt(n)
	for i, p := range img {
		v[i] = float32(float64(p) / n)
	}
	return v
}

// project compiles p for a and simulates it on Rosemary, HA and CPU.
func project(p *ir.Program, a *arch.Arch, opt compiler.OptLevel) ([]Projection, error) {
	plan, err := compiler.Compile(p, a, compiler.Options{Opt: opt})
	if err != nil {
		return nil, err
	}
	var out []Projection
	for _, sys := range []struct {
		name string
		s    system.System
	}{{"Rosemary", system.Rosemary}, {"HA", system.HA}, {"CPU", system.CPU}} {
		r, err := system.Run(plan, a, sys.s, system.Options{MaxTiles: 4096})
		if err != nil {
			return nil, fmt.Errorf("demo: simulate %s: %w", sys.name, err)
		}
		out = append(out, Projection{System: sys.name, LatencyS: r.Report.LatencyS, PCIe: r.Report.PCIeBytes, EnergyJ: r.Report.EnergyJ})
	}
	return out, nil
}
