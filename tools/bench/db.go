package bench

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/client/programs"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// DBOptions configure the user-data benchmark: a record file and a vector
// file generated here, loaded through the client library into a device
// process, then queried and checked.
type DBOptions struct {
	RecordBytes int64 // size of the record file
	RecordSize  int
	Gets        int // PIR reads at random indices (first and last included)
	Vectors     int // vectors in the .fvecs file
	Dim         int
	Queries     int // nearest-neighbour queries
	Seed        uint64
	Dir         string   // work directory (files, store, keys)
	Device      []string // command starting a device daemon (args before --store)
	Plaintext   bool     // the device serves plaintext on loopback (default: TLS 1.3, client certificates)
	Log         func(format string, args ...any)
	Progress    func(stage string, done, total int64)
}

// DBReport is what `rosemary bench db --json` prints; every figure is
// measured in the run.
type DBReport struct {
	Transport       string  `json:"transport"` // TransportTLS or TransportPlaintext
	RecordFileBytes int64   `json:"record_file_bytes"`
	Records         int     `json:"records"`
	RecordLoadS     float64 `json:"record_load_s"`
	RecordStored    int64   `json:"record_stored_bytes"`
	RecordRows      int     `json:"record_rows"` // the stored matrix the load chose
	RecordCols      int     `json:"record_cols"`
	Gets            int     `json:"gets"`
	GetsCorrect     int     `json:"gets_correct"`
	GetMeanS        float64 `json:"get_mean_s"`
	GetDeviceMeanS  float64 `json:"get_device_mean_s"` // what the device reported per get

	VectorFileBytes int64   `json:"vector_file_bytes"`
	Vectors         int     `json:"vectors"`
	Dim             int     `json:"dim"`
	VectorLoadS     float64 `json:"vector_load_s"`
	VectorStored    int64   `json:"vector_stored_bytes"`
	Queries         int     `json:"queries"`
	Top1Agree       int     `json:"top1_agree"`
	Top1Rate        float64 `json:"top1_rate"`
	QueryMeanS      float64 `json:"query_mean_s"`
	QueryBytes      int64   `json:"query_bytes"`  // ciphertext up, per query
	AnswerBytes     int64   `json:"answer_bytes"` // score ciphertexts down, per query
	DevicePeakRSS   uint64  `json:"device_peak_rss_bytes"`
	Provenance      string  `json:"provenance"`
}

// timedLoadResult is a load of a file into a database: what
// the client reports, the file's size and the load's wall time.
type timedLoadResult struct {
	*client.Info
	fileBytes int64
	seconds   float64
}

// timedLoad loads the file at path into the database name with opt,
// telling progress the bytes consumed and the file's size. buffered reads
// the file through a large buffer; a vector file must not be buffered, as
// the load seeks back to read it twice.
func timedLoad(ctx context.Context, c *client.Client, name, path string, buffered bool, opt client.LoadOptions,
	progress func(done, size int64)) (timedLoadResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return timedLoadResult{}, err
	}
	defer f.Close()
	fi, _ := f.Stat()
	var r io.Reader = f
	if buffered {
		r = bufio.NewReaderSize(f, 1<<20)
	}
	opt.Progress = func(done int64) { progress(done, fi.Size()) }
	start := time.Now()
	in, err := c.Load(ctx, name, r, opt)
	return timedLoadResult{Info: in, fileBytes: fi.Size(), seconds: time.Since(start).Seconds()}, err
}

// RunDB runs the benchmark.
func RunDB(ctx context.Context, opt DBOptions) (*DBReport, error) {
	logf, progress := orQuiet(opt.Log, opt.Progress)
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, err
	}
	rep := &DBReport{Gets: opt.Gets, Queries: opt.Queries, Dim: opt.Dim, Provenance: "measured here"}
	recPath := filepath.Join(opt.Dir, "records.bin")
	vecPath := filepath.Join(opt.Dir, "base.fvecs")
	records := int(opt.RecordBytes / int64(opt.RecordSize))
	logf("generating %d records of %d B and %d %d-dimensional vectors in %s", records, opt.RecordSize, opt.Vectors, opt.Dim, opt.Dir)
	if err := writeRecords(recPath, opt.Seed, int64(records)*int64(opt.RecordSize)); err != nil {
		return nil, err
	}
	if err := writeVectors(vecPath, opt.Seed, opt.Vectors, opt.Dim); err != nil {
		return nil, err
	}
	rep.Records, rep.Vectors = records, opt.Vectors
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

	// Records: load, then read back at random indices.
	if _, err := c.CreatePIR(ctx, "records", opt.RecordSize, client.PIROptions{}); err != nil {
		return nil, err
	}
	in, err := timedLoad(ctx, c, "records", recPath, true, client.LoadOptions{Records: dataset.FixedSize},
		func(done, size int64) { progress("load records", done, size) })
	if err != nil {
		return nil, err
	}
	rep.RecordFileBytes, rep.RecordLoadS, rep.RecordStored = in.fileBytes, in.seconds, in.Bytes
	rep.RecordRows, rep.RecordCols = in.Matrix().Rows, in.Matrix().Cols
	logf("loaded %d records in %.1f s", in.Records, rep.RecordLoadS)
	rng := rand.New(rand.NewPCG(opt.Seed, 77))
	var getS, getDev float64
	rf, err := os.Open(recPath)
	if err != nil {
		return nil, err
	}
	defer rf.Close()
	for g := 0; g < opt.Gets; g++ {
		idx := rng.IntN(records)
		switch g {
		case 0:
			idx = 0
		case 1:
			idx = records - 1
		}
		q, err := c.GetQuery(ctx, "records", idx)
		if err != nil {
			return nil, err
		}
		want := make([]byte, opt.RecordSize)
		if _, err := rf.ReadAt(want, int64(idx)*int64(opt.RecordSize)); err != nil {
			return nil, err
		}
		if bytes.Equal(q.Record, want) {
			rep.GetsCorrect++
		}
		getS += q.Seconds
		if q.Device != nil {
			getDev += q.Device.Seconds
		}
		progress("gets", int64(g+1), int64(opt.Gets))
	}
	rep.GetMeanS = getS / float64(max(opt.Gets, 1))
	rep.GetDeviceMeanS = getDev / float64(max(opt.Gets, 1))
	logf("%d of %d records read back exactly, %.2f s each", rep.GetsCorrect, opt.Gets, rep.GetMeanS)

	// Vectors: load, then nearest neighbours against brute force.
	if _, err := c.CreateVectors(ctx, "vectors", opt.Dim, client.VectorOptions{Metric: client.L2}); err != nil {
		return nil, err
	}
	vin, err := timedLoad(ctx, c, "vectors", vecPath, false, client.LoadOptions{Vectors: dataset.FVecs},
		func(done, size int64) { progress("load vectors (two passes)", min(done, size), size) })
	if err != nil {
		return nil, err
	}
	rep.VectorFileBytes, rep.VectorLoadS, rep.VectorStored = vin.fileBytes, vin.seconds, vin.Bytes
	logf("loaded %d vectors in %.1f s", vin.Records, rep.VectorLoadS)
	db, err := readVectors(vecPath)
	if err != nil {
		return nil, err
	}
	var qs float64
	for i := 0; i < opt.Queries; i++ {
		q := make([]float32, opt.Dim)
		for k := range q {
			q[k] = float32(rng.NormFloat64())
		}
		res, err := c.Nearest(ctx, "vectors", q, 1)
		if err != nil {
			return nil, err
		}
		if res.IDs[0] == nearest(db, q) {
			rep.Top1Agree++
		}
		qs += res.Seconds
		rep.QueryBytes, rep.AnswerBytes = res.QueryBytes, res.AnswerBytes
		progress("nearest", int64(i+1), int64(opt.Queries))
	}
	rep.QueryMeanS = qs / float64(max(opt.Queries, 1))
	rep.Top1Rate = float64(rep.Top1Agree) / float64(max(opt.Queries, 1))
	logf("top-1 agrees with brute force on %d of %d queries, %.2f s each", rep.Top1Agree, opt.Queries, rep.QueryMeanS)
	if st, err := c.Device().Stats(ctx, &devicepb.StatsRequest{}); err == nil {
		rep.DevicePeakRSS = st.PeakRssBytes
	}
	return rep, nil
}

func writeRecords(path string, seed uint64, n int64) error {
	return writeBuffered(path, func(w io.Writer) error {
		var key [32]byte
		key[0] = byte(seed)
		_, err := io.CopyN(w, rand.NewChaCha8(key), n)
		return err
	})
}

func writeVectors(path string, seed uint64, n, dim int) error {
	return writeBuffered(path, func(w io.Writer) error {
		fw := dataset.NewFVecsWriter(w)
		r := rand.New(rand.NewPCG(seed, 99))
		v := make([]float32, dim)
		for i := 0; i < n; i++ {
			for k := range v {
				v[k] = float32(r.NormFloat64())
			}
			if err := fw.Write(v); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeBuffered creates the file at path and has fill write it through a
// large buffer (the generated files run to gigabytes), then flushes and
// closes it; the file is closed on every path.
func writeBuffered(path string, fill func(w io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := fill(w); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func readVectors(path string) ([][]float32, error) {
	vr, closer, err := dataset.OpenVectors(path)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	var out [][]float32
	for {
		v, err := vr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, append([]float32(nil), v...))
	}
}

// nearest is the plaintext brute-force search (smallest L2 distance).
func nearest(db [][]float32, q []float32) int {
	best, bestD := 0, math.Inf(1)
	for i, x := range db {
		var d float32
		for k := range x {
			t := x[k] - q[k]
			d += t * t
		}
		if float64(d) < bestD {
			best, bestD = i, float64(d)
		}
	}
	return best
}
