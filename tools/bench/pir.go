package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/programs"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/pir"
	"github.com/rosemary-fhe/rosemary/internal/membw"
)

// PIROptions configure the GiB-scale PIR benchmark.
type PIROptions struct {
	Size       int64  // database bytes (2-byte words of 16-bit record chunks)
	RecordSize int    // bytes per record
	Queries    int    // queries at random indices, the first and last included
	Seed       uint64 // records and indices
	Preset     string // BGV preset (default bgv-13)
	// Scheme is "lwe" (the default: package fhe/lwepir) or "bgv".
	Scheme string
	// LWEParams names the LWE parameter set ("" is "default").
	LWEParams string
	// LWEPacked (LWE) queries in the packed mode (packing keys up with
	// each query, the packed answer down, no Galois keys) instead of the
	// ring stage.
	LWEPacked bool
	// LogCols (LWE) is the layout's target: below 2^LogCols columns
	// (lwepir.NewShapeCols; 0 is the client's default: lwepir.PackedTargetLogCols
	// in the packed mode with PackV3, lwepir.TargetLogCols otherwise). Fewer columns, a
	// shorter query; more rows, more packs.
	LogCols int
	// Batches (LWE): after the single queries, waves of B concurrent
	// queries for each B, measuring queries per second.
	Batches []int
	// StoreDir holds the store; a database of the same size, record size
	// and seed found there is reused.
	StoreDir string
	// Device is the address of a running `rosemary device serve` on
	// StoreDir; empty starts one (DeviceCommand) as a child process.
	Device        string
	DeviceCommand []string
	// Dial is how to reach Device (its TLS or plaintext options); a child
	// device serves TLS with fresh certificates unless Plaintext.
	Dial      []remote.Option
	Plaintext bool
	// Compare (LWE) also runs SimplePIR's mode on the same database once
	// the device is done: the client downloads the hint H' once and each
	// query is the scan alone (our kernel, lwepir.Server.Scan over the
	// store's tiles) and the client's decoding (HintDownload).
	Compare bool
	// Lattigo runs the host-only baseline (one query with Lattigo's
	// evaluator reading the store) before the device starts.
	Lattigo bool
	// Progress, if set, is told how far a long stage is.
	Progress func(stage string, done, total int64)
	Log      func(format string, args ...any)
}

// PIRReport is what `rosemary bench pir --json` prints. Every figure is
// measured in this run on this machine.
type PIRReport struct {
	// Transport is how the client reached the device (TransportTLS or
	// TransportPlaintext; empty for a device started elsewhere).
	Transport string `json:"transport,omitempty"`
	Scheme    string `json:"scheme"`
	DBBytes   int64  `json:"db_bytes"`
	// StoredBytes: the store's files (the database, its hint and padding).
	StoredBytes  int64   `json:"stored_bytes,omitempty"`
	Params       string  `json:"params"`
	RecordSize   int     `json:"record_size"`
	Records      int     `json:"records"`
	Rows         int     `json:"rows"`
	Cols         int     `json:"cols"`
	Reused       bool    `json:"store_reused"`
	BuildSeconds float64 `json:"build_s,omitempty"`

	Queries  int      `json:"queries"`
	Correct  bool     `json:"correct"`
	Failures []string `json:"failures,omitempty"`
	Indices  []int    `json:"indices"`
	// QuerySeconds is the mean wall time of a query at the client
	// (encrypt, send, device run, receive, decrypt); min and max beside.
	QuerySeconds    float64 `json:"query_s"`
	QueryMinSeconds float64 `json:"query_min_s"`
	QueryMaxSeconds float64 `json:"query_max_s"`
	DeviceSeconds   float64 `json:"device_s"` // mean run time on the device
	// ScanGBps is database bytes over the mean query time (LWE: of the
	// warm queries, the store in the page cache); DeviceScanGBps the same
	// over the device's run time; ColdScanGBps over the first query's
	// time, run after the store's files were dropped from the page cache
	// (LWE: left out where the drop left the store cached: ColdIsWarm).
	ScanGBps         float64 `json:"scan_gbps"`
	DeviceScanGBps   float64 `json:"device_scan_gbps,omitempty"`
	ColdScanGBps     float64 `json:"cold_scan_gbps,omitempty"`
	ColdQuerySeconds float64 `json:"cold_query_s,omitempty"`
	// QueryUpBytes and QueryDownBytes: one query's payload each way,
	// counted on the connection.
	QueryUpBytes   int64 `json:"query_up_bytes,omitempty"`
	QueryDownBytes int64 `json:"query_down_bytes,omitempty"`
	// DeviceStoreBytes (LWE): what the device read from its store per
	// query, as it reports (the tiles once and the hint's diagonals once).
	DeviceStoreBytes int64 `json:"device_store_bytes,omitempty"`
	// RawReadGBps is a plain read of the store's channel files
	// (RawReadBytes of them) in this run: BGV, every file at once in
	// rawReadStreams parts each; LWE, the fastest pass of two sweeps
	// (RawReadSweep: readers a file × requests in flight a reader, up to
	// 128 requests, at least the scan's 8), RawReadInFlight requests
	// outstanding in it, O_DIRECT when RawReadDirect. RawReadBeforeGBps is
	// the sweep's best just before the first cold query (a cache below
	// this machine may lend the query what the read left),
	// RawReadAfterGBps the best of the sweep just after the second (which
	// the query may lend the read): the two orders, each pass after the
	// page cache was dropped. RawReadSweeps holds every pass of both.
	RawReadGBps       float64   `json:"raw_read_gbps"`
	RawReadBytes      int64     `json:"raw_read_bytes"`
	RawReadDirect     bool      `json:"raw_read_direct"`
	RawReadInFlight   int       `json:"raw_read_in_flight,omitempty"`
	RawReadBeforeGBps float64   `json:"raw_read_before_gbps,omitempty"`
	RawReadAfterGBps  float64   `json:"raw_read_after_gbps,omitempty"`
	RawReadSweeps     []RawRead `json:"raw_read_sweeps,omitempty"`
	// ColdRuns (LWE) are the two cold queries, one in each order beside a
	// raw read (ColdRun): each is labelled warm where the page cache
	// still held the store after it was dropped (a device's long-lived
	// mappings keep pages that dropping the cache does not evict: a
	// device given with --device, or ours after its first scans).
	ColdRuns []ColdRun `json:"cold_runs,omitempty"`
	// ColdOverBestRaw (LWE): each cold query's GB/s (ColdRuns, a warm one
	// left out) over RawReadGBps, the strongest raw read of the run;
	// WarmOverReadSweep: ScanGBps over MemReadGBps. The two ratios issue
	// 40 sets goals for (≥ 0.8 each), computed here so that every run
	// states them.
	ColdOverBestRaw   []float64 `json:"cold_over_best_raw,omitempty"`
	WarmOverReadSweep float64   `json:"warm_over_read_sweep,omitempty"`
	// ColdIsWarm: the first query's store was found cached after the drop
	// (ColdRuns[0].Warm), so its figures are FirstQuerySeconds and
	// FirstScanGBps, not the cold ones (left out).
	ColdIsWarm        bool    `json:"cold_is_warm,omitempty"`
	FirstQuerySeconds float64 `json:"first_query_s,omitempty"`
	FirstScanGBps     float64 `json:"first_scan_gbps,omitempty"`
	// DeviceCPUPerQuery (LWE) is the CPU seconds the device process spent
	// per warm single query (from /proc; 0 where unknown: a device not
	// started here): the hint-free query's whole cost on the device.
	DeviceCPUPerQuery float64 `json:"device_cpu_s_per_query,omitempty"`
	// DeviceMinorFaultsPerQuery and DeviceMajorFaultsPerQuery (LWE) are
	// the page faults the device process took a warm query: a warm query
	// reads the store's pages where they are mapped, so faults there are
	// pages the kernel took away between queries (major: read back from
	// the disk), and a figure beside many is not warm.
	// DeviceCPUPerQueryMedian (LWE) is the median over the warm queries of
	// the device process's CPU seconds during each (its process CPU
	// clock): a query the host stalled moves the mean, not the median.
	DeviceCPUPerQueryMedian   float64 `json:"device_cpu_s_per_query_median,omitempty"`
	DeviceMinorFaultsPerQuery float64 `json:"device_minor_faults_per_query,omitempty"`
	DeviceMajorFaultsPerQuery float64 `json:"device_major_faults_per_query,omitempty"`
	// HintDownloadDeviceCPUSeconds (--compare) is the server's CPU seconds
	// a query in SimplePIR's mode on the same database (HintDownload: the
	// scan alone); HintFreeCPUOverhead is DeviceCPUPerQuery over it, what
	// being hint-free costs the device.
	HintDownloadDeviceCPUSeconds float64 `json:"hint_download_device_cpu_s,omitempty"`
	HintFreeCPUOverhead          float64 `json:"hint_free_cpu_overhead,omitempty"`
	// HintFreeCPUOverheadMedian is the same ratio of the two sides' medians
	// a query (DeviceCPUPerQueryMedian over the baseline's).
	HintFreeCPUOverheadMedian float64       `json:"hint_free_cpu_overhead_median,omitempty"`
	HintDownload              *HintDownload `json:"hint_download,omitempty"`
	// CachedReadGBps (LWE) is the same files read again through the page
	// cache once the warm queries have cached them, every core reading its
	// share in 256 KiB requests, the fastest of three passes
	// (ReadFilesCached): the copy every warm scan makes, with nothing
	// computed on it.
	CachedReadGBps float64 `json:"cached_read_gbps,omitempty"`
	// ScanStageSeconds and RingStageSeconds (LWE) are the device's two
	// stages of a warm query, as it reports them (RunStreamResponse.cores,
	// wall time each, run side by side on the same cores): the pass over
	// the database (first dimension) and the query's own ring work (the
	// hint's product H·s). ScanStageGBps is database bytes over the scan
	// stage.
	ScanStageSeconds float64 `json:"scan_stage_s,omitempty"`
	RingStageSeconds float64 `json:"ring_stage_s,omitempty"`
	// LWEMode (LWE) is "ring" or "packed" (PIROptions.LWEPacked);
	// PackStageSeconds the packed mode's own stage (Prepare, beside the
	// scan), as RingStageSeconds is the ring stage's.
	LWEMode          string  `json:"lwe_mode,omitempty"`
	PackStageSeconds float64 `json:"pack_stage_s,omitempty"`
	ScanStageGBps    float64 `json:"scan_stage_gbps,omitempty"`
	// MemBandwidthGBps is this machine's memory bandwidth, measured in this
	// run before the device starts: a STREAM triad on every core
	// (internal/membw), the ceiling of a scan served from memory.
	MemBandwidthGBps float64 `json:"mem_bandwidth_gbps"`
	// MemReadGBps is a read-only sweep of memory on every core
	// (membw.Read): a scan only reads, and one core here sweeps faster than
	// its triad, so this, not the triad, is a scan's memory ceiling.
	MemReadGBps float64 `json:"mem_read_gbps,omitempty"`
	// ScanRoofQueryGBps (LWE) is this machine's compute ceiling for the
	// scan, measured in this run before the device starts (matvec.Roof,
	// every core): query-bytes (a database byte times one query) a second
	// that the scan kernel's multiply-add instruction retires with its
	// operands in registers. BatchRoofQueriesPerS is it over the database's
	// bytes: the queries a second no batch, however large, can exceed — the
	// scan's multiply-adds alone, with no memory, ring stage or transport.
	ScanRoofQueryGBps    float64 `json:"scan_roof_query_gbps,omitempty"`
	BatchRoofQueriesPerS float64 `json:"batch_roof_queries_per_s,omitempty"`
	// HostDeviceBytes: payload bytes crossing host↔device per query (mean,
	// both directions), counted by the client's gRPC stats handler.
	HostDeviceBytes int64 `json:"host_device_bytes"`
	// HostOnlyBytes: what a host-only run moves per query: the database.
	HostOnlyBytes int64   `json:"host_only_bytes"`
	Reduction     float64 `json:"reduction"`
	SetupBytes    int64   `json:"setup_bytes"` // keys and program, once
	// DevicePeakRSS is the device process's peak resident set (VmHWM);
	// DeviceValuePeak the most value memory one run held.
	DevicePeakRSS uint64 `json:"device_peak_rss_bytes"`
	// DevicePeakAnonRSS and DevicePeakFileRSS split it (the device's
	// samples while it ran jobs): its own memory, and the store's pages
	// its scans map (page cache, shared; they are in VmHWM too).
	DevicePeakAnonRSS uint64 `json:"device_peak_anon_rss_bytes,omitempty"`
	DevicePeakFileRSS uint64 `json:"device_peak_file_rss_bytes,omitempty"`
	DeviceValuePeak   uint64 `json:"device_value_peak_bytes"`
	DeviceWorkers     uint32 `json:"device_workers"`
	// LattigoHostOnlySeconds: the same query answered on the host with
	// Lattigo's evaluator reading the database from the store (both cores);
	// 0 when not run.
	LattigoHostOnlySeconds float64 `json:"lattigo_host_only_s"`
	// Batches (LWE): throughput with B queries in flight at once, each
	// checked; the device answers the scans of queries that wait together
	// with one pass.
	Batches        []BatchResult `json:"batches,omitempty"`
	LattigoCorrect bool          `json:"lattigo_correct"`
	// LattigoBytesRead is what that query read from the store: each object
	// once (checked), so the database's bytes.
	LattigoBytesRead int64  `json:"lattigo_bytes_read"`
	Provenance       string `json:"provenance"`
}

const benchDB = "bench"

// manifest records the database a store holds for the benchmark.
type manifest struct {
	Size       int64     `json:"size"`
	RecordSize int       `json:"record_size"`
	Seed       uint64    `json:"seed"`
	Preset     string    `json:"preset"`
	Shape      pir.Shape `json:"shape"`
	TileRows   int       `json:"tile_rows"`
}

// RunPIR builds (or reuses) a database of opt.Size bytes, measures a raw
// read of its files and, optionally, the Lattigo host-only query, then runs
// opt.Queries queries through a device process and checks every record.
func RunPIR(ctx context.Context, opt PIROptions) (*PIRReport, error) {
	if opt.Queries < 2 {
		return nil, fmt.Errorf("bench: %d queries (at least the first and last record)", opt.Queries)
	}
	switch opt.Scheme {
	case "", "lwe":
		return runLWE(ctx, opt)
	case "bgv":
	default:
		return nil, fmt.Errorf("bench: scheme %q (lwe or bgv)", opt.Scheme)
	}
	if opt.Preset == "" {
		opt.Preset = "bgv-13"
	}
	if opt.Queries < 2 {
		return nil, fmt.Errorf("bench: %d queries (at least the first and last record)", opt.Queries)
	}
	logf, progress := orQuiet(opt.Log, opt.Progress)
	preset, err := fhe.Lookup(opt.Preset)
	if err != nil {
		return nil, err
	}
	params, err := preset.BGVParameters()
	if err != nil {
		return nil, err
	}
	perPt := int64(2 * params.N())
	plaintexts := opt.Size / perPt
	if plaintexts < 1 || opt.RecordSize < 1 || opt.RecordSize > int(perPt) {
		return nil, fmt.Errorf("bench: a database of %d bytes with %d-byte records (a plaintext holds %d bytes)", opt.Size, opt.RecordSize, perPt)
	}
	records := int(plaintexts) * (int(perPt) / opt.RecordSize)
	shape, err := pir.NewShape(params, opt.RecordSize, records)
	if err != nil {
		return nil, err
	}
	rep := &PIRReport{Scheme: "bgv", Params: preset.Name, RecordSize: opt.RecordSize, Records: records, Rows: shape.Rows, Cols: shape.Cols,
		Queries: opt.Queries, Provenance: "measured here"}
	rep.DBBytes = int64(shape.Rows*shape.Cols) * perPt
	rep.HostOnlyBytes = rep.DBBytes

	want := manifest{Size: opt.Size, RecordSize: opt.RecordSize, Seed: opt.Seed, Preset: preset.Name, Shape: shape, TileRows: client.PIRTileRows}
	if opt.Device == "" {
		if err := buildStore(ctx, opt, want, rep, progress, logf); err != nil {
			return nil, err
		}
	} else if have, err := readManifest(opt.StoreDir); err != nil || have != want {
		return nil, fmt.Errorf("bench: with --device the store %s must already hold the database (run once without --device)", opt.StoreDir)
	}

	logf("raw sequential read of %s", opt.StoreDir)
	raw, err := ReadFilesParallel(opt.StoreDir, "ch*", rawReadStreams)
	if err != nil {
		return nil, err
	}
	rep.RawReadGBps, rep.RawReadBytes, rep.RawReadDirect, rep.RawReadInFlight = raw.GBps, raw.Bytes, raw.Direct, raw.InFlight
	logf("memory bandwidth: a STREAM triad on every core")
	if rep.MemBandwidthGBps, err = membw.Triad(ctx, 0, 0); err != nil {
		return nil, err
	}

	kg := rlwe.NewKeyGenerator(params)
	sk := kg.GenSecretKeyNew()
	rep.Indices = queryIndices(opt.Seed, records, opt.Queries)

	if opt.Lattigo && opt.Device == "" {
		if err := lattigoBaseline(ctx, opt, preset, shape, sk, rep, logf); err != nil {
			return nil, err
		}
	}

	c, _, stop, err := openDevice(ctx, opt, rep, logf)
	if err != nil {
		return nil, err
	}
	defer stop()
	s0, r0 := c.Traffic()
	sess, err := programs.NewPIRSession(ctx, c, benchDB, preset, shape, sk)
	if err != nil {
		return nil, err
	}
	s1, r1 := c.Traffic()
	rep.SetupBytes = s1 - s0 + r1 - r0
	if !sess.OnDevice() {
		return nil, fmt.Errorf("bench: the plan scans %d × %d plaintexts on the host; the benchmark measures the device", shape.Rows, shape.Cols)
	}
	rep.Correct = true
	var total, dev float64
	var traffic int64
	for qi, idx := range rep.Indices {
		a0, b0 := c.Traffic()
		q, err := sess.Get(ctx, idx)
		if err != nil {
			return nil, fmt.Errorf("bench: query %d (record %d): %w", qi, idx, err)
		}
		a1, b1 := c.Traffic()
		traffic += a1 - a0 + b1 - b0
		wantRec, err := client.SeededRecord(opt.Seed, shape, idx)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(q.Record, wantRec) {
			rep.Correct = false
			rep.Failures = append(rep.Failures, fmt.Sprintf("record %d differs", idx))
		}
		total += q.Seconds
		dev += q.Device.Seconds
		if qi == 0 || q.Seconds < rep.QueryMinSeconds {
			rep.QueryMinSeconds = q.Seconds
		}
		rep.QueryMaxSeconds = max(rep.QueryMaxSeconds, q.Seconds)
		rep.DeviceValuePeak = max(rep.DeviceValuePeak, q.Device.PeakBytes)
		progress("queries", int64(qi+1), int64(len(rep.Indices)))
		logf("query %d: record %d in %.2f s (device %.2f s), %d B", qi, idx, q.Seconds, q.Device.Seconds, a1-a0+b1-b0)
	}
	n := float64(len(rep.Indices))
	rep.QuerySeconds, rep.DeviceSeconds = total/n, dev/n
	rep.ScanGBps = float64(rep.DBBytes) / rep.QuerySeconds / 1e9
	rep.HostDeviceBytes = traffic / int64(len(rep.Indices))
	if rep.HostDeviceBytes > 0 {
		rep.Reduction = float64(rep.HostOnlyBytes) / float64(rep.HostDeviceBytes)
	}
	st, err := c.Stats(ctx, &devicepb.StatsRequest{})
	if err != nil {
		return nil, err
	}
	rep.DevicePeakRSS = st.PeakRssBytes
	cfg, err := c.Config(ctx, &devicepb.ConfigRequest{})
	if err == nil {
		rep.DeviceWorkers = cfg.Workers
	}
	return rep, nil
}

// buildStore writes the database unless the store already holds it.
func buildStore(ctx context.Context, opt PIROptions, want manifest, rep *PIRReport, progress func(string, int64, int64), logf func(string, ...any)) error {
	if err := os.MkdirAll(opt.StoreDir, 0o755); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	st, err := store.Open(opt.StoreDir, layout.Layout{Channels: 4, PageSize: 16 << 10})
	if err != nil {
		return err
	}
	defer st.Close()
	if have, err := readManifest(opt.StoreDir); err == nil && have == want {
		last, _ := client.PIRPlaintextObject(benchDB, want.Shape, want.Shape.Rows*want.Shape.Cols-1)
		if _, err := st.Stat(last); err == nil {
			rep.Reused = true
			logf("reusing the database in %s", opt.StoreDir)
			return nil
		}
	}
	os.Remove(filepath.Join(opt.StoreDir, manifestFile))
	logf("writing a %d-byte database to %s", rep.DBBytes, opt.StoreDir)
	start := time.Now()
	if _, err := client.WriteSeededPIR(ctx, storeSink(st), benchDB, want.Shape, opt.Seed,
		func(done, total int64) { progress("build", done, total) }); err != nil {
		return err
	}
	rep.BuildSeconds = time.Since(start).Seconds()
	b, _ := json.Marshal(want)
	return os.WriteFile(filepath.Join(opt.StoreDir, manifestFile), b, 0o644)
}

const manifestFile = "pir-bench.json"

// storeSink writes a database's objects straight into a store, before a
// device serves it.
func storeSink(st *store.Store) client.ObjectSink {
	return func(_ context.Context, name string, shape object.Shape, raw [][]byte) error {
		_, err := st.Put(name, object.KindPlaintext, shape, raw)
		return err
	}
}

func readManifest(dir string) (manifest, error) {
	var m manifest
	b, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		return m, err
	}
	return m, json.Unmarshal(b, &m)
}

// lattigoBaseline answers one query on the host with Lattigo's evaluator
// reading the database from the store, on every core.
func lattigoBaseline(ctx context.Context, opt PIROptions, preset fhe.Preset, shape pir.Shape, sk *rlwe.SecretKey, rep *PIRReport, logf func(string, ...any)) error {
	params, _ := preset.BGVParameters()
	st, err := store.Open(opt.StoreDir, layout.Layout{Channels: 4, PageSize: 16 << 10})
	if err != nil {
		return err
	}
	defer st.Close()
	kg := rlwe.NewKeyGenerator(params)
	var gks []*rlwe.GaloisKey
	for _, g := range shape.GaloisElements() {
		gks = append(gks, kg.GenGaloisKeyNew(g, sk))
	}
	evk := rlwe.NewMemEvaluationKeySet(kg.GenRelinearizationKeyNew(sk), gks...)
	srv, err := pir.NewServer(params, shape, evk, goruntime.NumCPU())
	if err != nil {
		return err
	}
	pc, err := pir.NewClient(params, shape, sk)
	if err != nil {
		return err
	}
	idx := rep.Indices[len(rep.Indices)-1]
	q, err := pc.Query(idx)
	if err != nil {
		return err
	}
	logf("Lattigo host-only query over the store (record %d)", idx)
	start := time.Now()
	db := newStorePlaintexts(st, benchDB, shape)
	ans, err := srv.Answer(ctx, q, db)
	if err != nil {
		return err
	}
	rep.LattigoHostOnlySeconds = time.Since(start).Seconds()
	if rep.LattigoBytesRead, err = db.scannedOnce(); err != nil {
		return err
	}
	got, err := pc.Decode(idx, ans)
	if err != nil {
		return err
	}
	want, err := client.SeededRecord(opt.Seed, shape, idx)
	if err != nil {
		return err
	}
	rep.LattigoCorrect = bytes.Equal(got, want)
	logf("Lattigo host-only: %.2f s", rep.LattigoHostOnlySeconds)
	return nil
}

// deviceProc is a device startDeviceProc started (pid 0: a running device
// opt.Device named).
type deviceProc struct {
	addr      string
	dial      []remote.Option
	transport string
	stop      func()
	pid       int
}

// freshDevice empties DIR/store and DIR/keys, makes a key set there and
// starts a device child over the empty store: the setup of the benchmarks
// that load their own data through the client library (db, vectors, kv).
func freshDevice(ctx context.Context, dir string, deviceCmd []string, plaintext bool, logf func(string, ...any)) (*client.Keys, *deviceProc, error) {
	storeDir := filepath.Join(dir, "store")
	os.RemoveAll(storeDir)
	os.RemoveAll(filepath.Join(dir, "keys"))
	keys, err := client.NewKeys(filepath.Join(dir, "keys"))
	if err != nil {
		return nil, nil, err
	}
	dp, err := startDeviceProc(ctx, PIROptions{StoreDir: storeDir, DeviceCommand: deviceCmd, Plaintext: plaintext}, logf)
	if err != nil {
		return nil, nil, err
	}
	return keys, dp, nil
}

// startDeviceProc is startDevice, with the child's process id.
func startDeviceProc(ctx context.Context, opt PIROptions, logf func(string, ...any)) (*deviceProc, error) {
	addr, dial, transport, stop, pid, err := startChild(ctx, opt, logf)
	if err != nil {
		return nil, err
	}
	return &deviceProc{addr: addr, dial: dial, transport: transport, stop: stop, pid: pid}, nil
}

func startChild(ctx context.Context, opt PIROptions, logf func(string, ...any)) (string, []remote.Option, string, func(), int, error) {
	if opt.Device != "" {
		return opt.Device, opt.Dial, "", func() {}, 0, nil
	}
	if len(opt.DeviceCommand) == 0 {
		return "", nil, "", nil, 0, errors.New("bench: no device address and no command to start one")
	}
	serveArgs, dial, transport, err := childTransport(filepath.Join(filepath.Dir(filepath.Clean(opt.StoreDir)), "certs"), opt.Plaintext)
	if err != nil {
		return "", nil, "", nil, 0, err
	}
	args := append(append(append([]string(nil), opt.DeviceCommand[1:]...), "--store", opt.StoreDir, "--listen", "127.0.0.1:0"), serveArgs...)
	cmd := exec.CommandContext(ctx, opt.DeviceCommand[0], args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, "", nil, 0, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, "", nil, 0, fmt.Errorf("bench: start device: %w", err)
	}
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if addr, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
			go io.Copy(io.Discard, out)
			logf("device process %d listening on %s (%s)", cmd.Process.Pid, addr, transport)
			return addr, dial, transport, stop, cmd.Process.Pid, nil
		}
	}
	stop()
	return "", nil, "", nil, 0, errors.New("bench: the device process exited before listening")
}

// openDevice makes the benchmark's identity the owner of the database it
// wrote (unless opt.Device names a running device), starts the device
// (startDeviceProc) and dials it; stop closes the connection and the device.
func openDevice(ctx context.Context, opt PIROptions, rep *PIRReport, logf func(string, ...any)) (*remote.Client, *deviceProc, func(), error) {
	if opt.Device == "" {
		if err := ownDatabase(opt.StoreDir, benchDB, opt.Plaintext); err != nil {
			return nil, nil, nil, err
		}
	}
	dp, err := startDeviceProc(ctx, opt, logf)
	if err != nil {
		return nil, nil, nil, err
	}
	rep.Transport = dp.transport
	c, err := remote.Dial(dp.addr, dp.dial...)
	if err != nil {
		dp.stop()
		return nil, nil, nil, err
	}
	return c, dp, func() { c.Close(); dp.stop() }, nil
}

// ParseSize reads a byte count: a number with an optional unit (B, KiB,
// MiB, GiB, TiB, or KB, MB, GB, TB in powers of ten).
func ParseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range units {
		if v, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(v), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f <= 0 || f*float64(mult) > 1<<50 {
		return 0, fmt.Errorf("bench: size %q: want a positive number with an optional unit (e.g. 4GiB)", s)
	}
	return int64(f * float64(mult)), nil
}

// orQuiet returns the caller's log and progress callbacks, with ones that
// do nothing in place of those left nil, so a run reports without checking.
func orQuiet(logf func(format string, args ...any), progress func(stage string, done, total int64)) (func(string, ...any), func(string, int64, int64)) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if progress == nil {
		progress = func(string, int64, int64) {}
	}
	return logf, progress
}

// queryIndices are the records a benchmark reads: the first, the last and
// seeded random ones.
func queryIndices(seed uint64, records, queries int) []int {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	idx := []int{0, records - 1}
	for len(idx) < queries {
		idx = append(idx, rng.IntN(records))
	}
	return idx
}

// BatchResult is the throughput of B concurrent queries.
type BatchResult struct {
	B           int     `json:"b"`
	Queries     int     `json:"queries"`
	Seconds     float64 `json:"seconds"`
	QueriesPerS float64 `json:"queries_per_s"`
	// MeanPass is the mean number of queries one scan pass answered.
	MeanPass float64 `json:"mean_pass"`
	Correct  bool    `json:"correct"`
	// DeviceCPUPerQuery and ClientCPUPerQuery are the CPU seconds the
	// device process and this one (the B clients) spent per query over the
	// batch, from /proc (0 where unknown: a device not started here). The
	// two share this machine's cores, so queries_per_s is bounded by their
	// sum; the device's share is what a device with its own cores serves.
	DeviceCPUPerQuery float64 `json:"device_cpu_s_per_query,omitempty"`
	ClientCPUPerQuery float64 `json:"client_cpu_s_per_query,omitempty"`
}
