package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"syscall"
	"time"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
	"github.com/rosemary-fhe/rosemary/fhe/matvec"
)

// HintDownload is SimplePIR's mode (Henzinger et al., USENIX Security '23)
// run on the benchmark's own database with our scan kernel: the client
// downloads the hint H' = (D − 128)·A once (HintBytes: Rows × N 32-bit
// words), and a query is the LWE vector up (lwepir.Client.QueryVector), the
// server's scan D·q alone (lwepir.Server.Scan over the store's tiles, as
// the device reads them) and the column down, decoded with the hint
// (DecodeWithHint). It runs in the benchmark's process with the device
// stopped (the store admits one process), so its CPU is the scan's alone:
// what a server in that mode spends a query, beside which the hint-free
// query's device CPU shows what being hint-free costs.
type HintDownload struct {
	HintBytes int64 `json:"hint_bytes"`
	// HintSeconds: computing H' from the store's tiles (one pass over the
	// database and Rows·Tiles NTTs), the server's work each time the
	// database changes.
	HintSeconds float64  `json:"hint_compute_s"`
	Queries     int      `json:"queries"`
	Correct     bool     `json:"correct"`
	Failures    []string `json:"failures,omitempty"`
	// QueryUpBytes and QueryDownBytes: one query's payload (the vector,
	// the column), as 32-bit words.
	QueryUpBytes   int64 `json:"query_up_bytes"`
	QueryDownBytes int64 `json:"query_down_bytes"`
	// ScanSeconds and DeviceCPUSeconds: the mean wall time and CPU seconds
	// (getrusage of this process) of a warm query's scan, the first query
	// (which maps the store and faults its pages in) left out as the
	// hint-free run leaves its cold one; ScanGBps the database's bytes over
	// ScanSeconds. ClientDecodeCPUSeconds: DecodeWithHint's CPU, a query.
	ScanSeconds      float64 `json:"scan_s"`
	ScanGBps         float64 `json:"scan_gbps"`
	DeviceCPUSeconds float64 `json:"device_cpu_s"`
	// DeviceCPUMedianSeconds: the median of the warm queries' CPU seconds.
	DeviceCPUMedianSeconds float64 `json:"device_cpu_median_s,omitempty"`
	// MinorFaultsPerQuery and MajorFaultsPerQuery: this process's page
	// faults during a warm query's scan (as the hint-free run reports the
	// device's).
	MinorFaultsPerQuery    float64 `json:"minor_faults_per_query,omitempty"`
	MajorFaultsPerQuery    float64 `json:"major_faults_per_query,omitempty"`
	ClientDecodeCPUSeconds float64 `json:"client_decode_cpu_s"`
}

// ColdRun is a query after the store's files were dropped from the page
// cache, beside a raw read of the same files (RawReadGBps, the fastest of
// a RawReadSweep) taken just before it or just after it (Order).
// CachedBytes of the store's StoreBytes were still in the page cache when
// the query started (mincore); Warm if more than 1%: the figure is then no
// cold one, and says so.
type ColdRun struct {
	Order        string  `json:"order"`
	Record       int     `json:"record"`
	QuerySeconds float64 `json:"query_s"`
	ScanGBps     float64 `json:"scan_gbps"`
	RawReadGBps  float64 `json:"raw_read_gbps"`
	CachedBytes  int64   `json:"cached_bytes"`
	StoreBytes   int64   `json:"store_bytes"`
	Warm         bool    `json:"warm"`
	Correct      bool    `json:"correct"`
}

// The orders of ColdRun.
const (
	OrderRawFirst   = "raw read, then the cold query"
	OrderQueryFirst = "cold query, then the raw read"
)

// coldQuery drops the store from the page cache, measures what stayed
// cached and runs one query of record idx.
func coldQuery(ctx context.Context, sess *client.LWESession, opt PIROptions, dbBytes int64, idx int, order string) (ColdRun, error) {
	run := ColdRun{Order: order, Record: idx}
	if err := dropPageCache(opt.StoreDir); err != nil {
		return run, err
	}
	var err error
	if run.CachedBytes, run.StoreBytes, err = cachedBytes(opt.StoreDir); err != nil {
		return run, err
	}
	run.Warm = run.CachedBytes*100 > run.StoreBytes
	q, err := sess.Get(ctx, idx)
	if err != nil {
		return run, fmt.Errorf("bench: cold query (record %d): %w", idx, err)
	}
	run.QuerySeconds = q.Seconds
	run.ScanGBps = float64(dbBytes) / q.Seconds / 1e9
	run.Correct = bytes.Equal(q.Record, client.SeededLWERecord(opt.Seed, idx, opt.RecordSize))
	return run, nil
}

// storeTiles reads a generation's tiles from a store as the device does
// (device/pirserver's source): each limb's pages scanned in place through
// the store's mappings where a page holds whole row blocks, the tile
// prefetched at its first block.
type storeTiles struct {
	objs                []*store.Object
	rowBytes, pageBytes int
}

func (t *storeTiles) Blocks() int { return t.objs[0].Info().Shape.NumLimbs() }

func (t *storeTiles) VisitBlock(_ context.Context, k, b int, f func(row int, rows []byte)) error {
	o := t.objs[k]
	if b == 0 {
		o.Prefetch()
	}
	if t.pageBytes%(matvec.RowBlock*t.rowBytes) == 0 {
		return o.ScanLimb(0, b, func(off int, page []byte) { f(off/t.rowBytes, page) })
	}
	buf := make([]byte, o.Info().Shape.LimbBytes())
	if err := o.ReadLimbInto(buf, 0, b); err != nil {
		return err
	}
	f(0, buf)
	return nil
}

// openTiles opens the store (no device may hold it) and pins the tiles of
// the benchmark's generation; close releases them and the store.
func openTiles(dir string, p lwepir.Params, shape lwepir.Shape) (*storeTiles, func(), error) {
	st, err := store.Open(dir, layout.Layout{Channels: 4, PageSize: 16 << 10})
	if err != nil {
		return nil, nil, err
	}
	t := &storeTiles{rowBytes: p.N(), pageBytes: st.PageSize()}
	closeAll := func() {
		for _, o := range t.objs {
			o.Release()
		}
		st.Close()
	}
	for j := range shape.Tiles(p) {
		o, err := st.Acquire(objname.Stored(objname.LWETiles(lweGen), int64(j)))
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		if o.Info().Shape.Bytes() != int64(shape.TileBytes(p)) {
			closeAll()
			return nil, nil, fmt.Errorf("bench: tile %d holds %d bytes, want %d", j, o.Info().Shape.Bytes(), shape.TileBytes(p))
		}
		t.objs = append(t.objs, o)
	}
	return t, closeAll, nil
}

// runHintDownload measures SimplePIR's mode (HintDownload) on the store's
// database: the hint computed from the tiles, then a query for each of
// indices, each answer decoded with the hint and checked byte for byte.
func runHintDownload(ctx context.Context, opt PIROptions, p lwepir.Params, m lweManifest, indices []int, logf func(string, ...any)) (*HintDownload, error) {
	tiles, closeTiles, err := openTiles(opt.StoreDir, p, m.Shape)
	if err != nil {
		return nil, err
	}
	defer closeTiles()
	hd := &HintDownload{Queries: len(indices), Correct: true, HintBytes: int64(4 * m.Shape.Rows * p.N()),
		QueryUpBytes: int64(4 * m.Shape.Cols), QueryDownBytes: int64(4 * m.Shape.Rows)}
	logf("SimplePIR's mode: computing the hint H' (%d × %d words) from the store's tiles", m.Shape.Rows, p.N())
	start := time.Now()
	hint, err := lwepir.ComputeHint(ctx, p, m.Shape, m.LWESeed, tiles)
	if err != nil {
		return nil, err
	}
	hd.HintSeconds = time.Since(start).Seconds()
	var keySeed [32]byte
	rand.Read(keySeed[:])
	sk, err := lwepir.DeriveSecretKey(p, keySeed[:])
	if err != nil {
		return nil, err
	}
	cl, err := lwepir.NewClient(p, m.Shape, m.LWESeed, sk)
	if err != nil {
		return nil, err
	}
	srv, err := lwepir.NewServer(p, m.Shape)
	if err != nil {
		return nil, err
	}
	var wall, cpu, decode, minor, major float64
	var cpus []float64
	for qi, idx := range indices {
		col, err := cl.Column(idx)
		if err != nil {
			return nil, err
		}
		vec, st, err := cl.QueryVector(col)
		if err != nil {
			return nil, err
		}
		mi0, ma0 := processFaults()
		c0, t0 := processCPU(), time.Now()
		cols, err := srv.Scan(ctx, []*matvec.Query{matvec.NewQuery(vec)}, tiles, nil)
		if err != nil {
			return nil, fmt.Errorf("bench: hint-download scan (record %d): %w", idx, err)
		}
		t1, c1 := time.Now(), processCPU()
		mi1, ma1 := processFaults()
		column, err := cl.DecodeWithHint(st, cols[0], hint)
		if err != nil {
			return nil, err
		}
		c2 := processCPU()
		rec, err := cl.Record(column, idx)
		if err != nil || !bytes.Equal(rec, client.SeededLWERecord(opt.Seed, idx, opt.RecordSize)) {
			hd.Correct = false
			hd.Failures = append(hd.Failures, fmt.Sprintf("record %d differs", idx))
		}
		logf("SimplePIR's mode: query %d (record %d): scan %.3f s, %.3f CPU-s; decode %.4f CPU-s", qi, idx, t1.Sub(t0).Seconds(), c1-c0, c2-c1)
		if qi == 0 && len(indices) > 1 {
			continue // the first maps the store and faults its pages in
		}
		wall += t1.Sub(t0).Seconds()
		cpu += c1 - c0
		cpus = append(cpus, c1-c0)
		decode += c2 - c1
		minor, major = minor+float64(mi1-mi0), major+float64(ma1-ma0)
	}
	n := float64(max(1, len(indices)-1))
	hd.ScanSeconds, hd.DeviceCPUSeconds, hd.ClientDecodeCPUSeconds = wall/n, cpu/n, decode/n
	hd.MinorFaultsPerQuery, hd.MajorFaultsPerQuery = minor/n, major/n
	hd.DeviceCPUMedianSeconds = median(cpus)
	hd.ScanGBps = float64(int64(m.Records)*int64(opt.RecordSize)) / hd.ScanSeconds / 1e9
	return hd, nil
}

// processFaults is the page faults this process has taken: minor, major.
func processFaults() (minor, major int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return ru.Minflt, ru.Majflt
}

// processCPU is the CPU seconds (user and system) this process has used.
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
