package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
	"github.com/rosemary-fhe/rosemary/fhe/matvec"
	"github.com/rosemary-fhe/rosemary/internal/membw"
)

// lweManifest records the LWE database a benchmark store holds.
type lweManifest struct {
	Size       int64                 `json:"size"`
	RecordSize int                   `json:"record_size"`
	Seed       uint64                `json:"seed"`
	Params     string                `json:"params"`
	Shape      lwepir.Shape          `json:"shape"`
	Records    int                   `json:"records"`
	LWESeed    [lwepir.SeedSize]byte `json:"lwe_seed"`
	// Packed: the store holds the packer's objects too (stores built
	// before them are rebuilt).
	Packed bool `json:"packed,omitempty"`
	// Packing: the packer's version (stores of another are rebuilt).
	Packing lwepir.PackVersion `json:"packing,omitempty"`
}

const lweManifestFile = "lwe-bench.json"

// lweGen is the generation prefix of the benchmark's LWE database.
const lweGen = benchDB + "/g1"

// runLWE is RunPIR for the LWE scheme: build (or reuse) the database,
// then, each after the store's files are dropped from the page cache, a
// raw read of them and a first query (the cold scan), the warm queries
// (the store cached) and batches, a second cold query on a fresh device
// followed by a second raw read (the other order), and with opt.Compare
// SimplePIR's mode on the same database (runHintDownload).
func runLWE(ctx context.Context, opt PIROptions) (*PIRReport, error) {
	logf, _ := orQuiet(opt.Log, opt.Progress)
	if opt.Compare && opt.Device != "" {
		// The store admits one process: SimplePIR's mode reads it once
		// the device is stopped, and a device given with --device is not
		// ours to stop.
		return nil, fmt.Errorf("bench: --compare reads the store itself, which the device at %s holds: run it without --device", opt.Device)
	}
	p, want, rep, err := prepareLWE(ctx, opt)
	if err != nil {
		return nil, err
	}
	evict := func() error { return dropPageCache(opt.StoreDir) }
	logf("raw read of %s: every channel file at once, a sweep of readers × requests in flight, the page cache dropped before each", opt.StoreDir)
	before, sweep, err := RawReadSweep(opt.StoreDir, "ch*", nil, evict)
	if err != nil {
		return nil, err
	}
	rep.RawReadSweeps = append(rep.RawReadSweeps, sweep...)
	rep.RawReadBeforeGBps = before.GBps
	rep.RawReadBytes, rep.RawReadDirect = before.Bytes, before.Direct
	if err := machineCeilings(ctx, rep, logf); err != nil {
		return nil, err
	}
	rep.Indices = queryIndices(opt.Seed, rep.Records, opt.Queries)
	c, dp, stop, err := openDevice(ctx, opt, rep, logf)
	if err != nil {
		return nil, err
	}
	stopOnce := sync.OnceFunc(stop)
	defer stopOnce()
	s0, r0 := c.Traffic()
	sess, err := lweSession(ctx, c, opt, p, want)
	if err != nil {
		return nil, err
	}
	s1, r1 := c.Traffic()
	rep.SetupBytes = s1 - s0 + r1 - r0
	if err := lweQueries(ctx, c, sess, dp.pid, opt, rep, before.GBps, logf); err != nil {
		return nil, err
	}
	logf("read of the cached store, every core (%s)", opt.StoreDir)
	cached, err := ReadFilesCached(opt.StoreDir, "ch*", runtime.GOMAXPROCS(0), 3)
	if err != nil {
		return nil, err
	}
	rep.CachedReadGBps = cached.GBps
	if err := lweBatches(ctx, c, dp, opt, p, want, rep, logf); err != nil {
		return nil, err
	}
	if err := deviceStats(ctx, c, rep); err != nil {
		return nil, err
	}
	if err := secondCold(ctx, opt, p, want, rep, stopOnce, evict, logf); err != nil {
		return nil, err
	}
	if opt.Compare {
		hd, err := runHintDownload(ctx, opt, p, want, rep.Indices, logf)
		if err != nil {
			return nil, err
		}
		rep.HintDownload = hd
		rep.Correct = rep.Correct && hd.Correct
		rep.HintDownloadDeviceCPUSeconds = hd.DeviceCPUSeconds
		if hd.DeviceCPUSeconds > 0 && rep.DeviceCPUPerQuery > 0 {
			rep.HintFreeCPUOverhead = rep.DeviceCPUPerQuery / hd.DeviceCPUSeconds
		}
		if hd.DeviceCPUMedianSeconds > 0 && rep.DeviceCPUPerQueryMedian > 0 {
			rep.HintFreeCPUOverheadMedian = rep.DeviceCPUPerQueryMedian / hd.DeviceCPUMedianSeconds
		}
	}
	goalRatios(rep)
	return rep, nil
}

// goalRatios sets the ratios the report's figures are judged by: each
// cold query (a warm one left out) over the run's strongest raw read of
// the same files, and the warm queries over the run's read-only sweep.
func goalRatios(rep *PIRReport) {
	for _, r := range rep.ColdRuns {
		if !r.Warm && rep.RawReadGBps > 0 {
			rep.ColdOverBestRaw = append(rep.ColdOverBestRaw, r.ScanGBps/rep.RawReadGBps)
		}
	}
	if rep.MemReadGBps > 0 {
		rep.WarmOverReadSweep = rep.ScanGBps / rep.MemReadGBps
	}
}

// prepareLWE builds (or, with --device, finds) the database and the
// report's description of it.
func prepareLWE(ctx context.Context, opt PIROptions) (lwepir.Params, lweManifest, *PIRReport, error) {
	logf, progress := orQuiet(opt.Log, opt.Progress)
	p := lwepir.Default()
	if opt.LWEParams != "" {
		var err error
		if p, err = lwepir.ByName(opt.LWEParams); err != nil {
			return p, lweManifest{}, nil, err
		}
	}
	records := int(opt.Size / int64(opt.RecordSize))
	logCols := opt.LogCols
	if logCols == 0 {
		logCols = lwepir.TargetLogCols
		if opt.LWEPacked && p.Packing >= lwepir.PackV3 {
			logCols = lwepir.PackedTargetLogCols // the client's default for such a database
		}
	}
	// The packed mode's layout is a packed-only database's (the client's
	// default), whose rows may pass the hint's slots; the ring mode's stays
	// within them.
	maxRows := p.HintSlots()
	if opt.LWEPacked {
		maxRows = p.MaxPackedRows()
	}
	shape, err := lwepir.NewShapeRows(p, records, opt.RecordSize, logCols, maxRows)
	if err != nil {
		return p, lweManifest{}, nil, err
	}
	mode := "ring"
	if opt.LWEPacked {
		mode = "packed"
	}
	rep := &PIRReport{Scheme: "lwe", LWEMode: mode, Params: "lwe-" + p.Name(), RecordSize: opt.RecordSize, Records: records, Rows: shape.Rows, Cols: shape.Cols,
		Queries: opt.Queries, Provenance: "measured here"}
	rep.DBBytes = int64(records) * int64(opt.RecordSize)
	rep.HostOnlyBytes = rep.DBBytes
	want := lweManifest{Size: opt.Size, RecordSize: opt.RecordSize, Seed: opt.Seed, Params: p.Name(), Packing: p.Packing, Shape: shape, Records: records}
	if opt.Device == "" {
		if want, err = buildLWEStore(ctx, opt, p, want, rep, progress, logf); err != nil {
			return p, want, nil, err
		}
	} else if have, err := readLWEManifest(opt.StoreDir); err != nil || have.Shape != want.Shape || have.Seed != want.Seed {
		return p, want, nil, fmt.Errorf("bench: with --device the store %s must already hold the database (run once without --device)", opt.StoreDir)
	} else {
		want = have
	}
	rep.StoredBytes = storedBytes(opt.StoreDir)
	return p, want, rep, nil
}

// machineCeilings measures memory (a STREAM triad and a read-only sweep)
// and the scan kernel's compute roof, every core, before the device starts.
func machineCeilings(ctx context.Context, rep *PIRReport, logf func(string, ...any)) error {
	logf("memory bandwidth (STREAM triad and a read-only sweep, every core)")
	var err error
	if rep.MemBandwidthGBps, err = membw.Triad(ctx, 0, 0); err != nil {
		return err
	}
	if rep.MemReadGBps, err = membw.Read(ctx, 0, 0); err != nil {
		return err
	}
	logf("compute ceiling of the scan (the kernel's multiply-add on registers, every core)")
	roof, err := matvec.Roof(ctx, 0, time.Second)
	if err != nil {
		return err
	}
	rep.ScanRoofQueryGBps = roof / 1e9
	rep.BatchRoofQueriesPerS = roof / float64(rep.DBBytes)
	return nil
}

// lweSession opens a session of the benchmark's identity on the database.
func lweSession(ctx context.Context, c *remote.Client, opt PIROptions, p lwepir.Params, want lweManifest) (*client.LWESession, error) {
	if opt.LWEPacked {
		return client.NewPackedLWESession(c, lweGen, p, want.Shape, want.LWESeed)
	}
	var keySeed [32]byte
	rand.Read(keySeed[:])
	sk, err := lwepir.DeriveSecretKey(p, keySeed[:])
	if err != nil {
		return nil, err
	}
	return client.NewLWESession(ctx, c, lweGen, p, want.Shape, want.LWESeed, sk, objname.Keys(benchDB, benchIdentity(opt.Plaintext), "bench"))
}

// lweQueries runs the first, cold query (rawGBps: the raw read just before
// it) and the warm ones, checking every record, and measures the device's
// CPU over the warm ones (pid: the device process, 0 if not ours).
func lweQueries(ctx context.Context, c *remote.Client, sess *client.LWESession, pid int, opt PIROptions, rep *PIRReport, rawGBps float64,
	logf func(string, ...any)) error {
	_, progress := orQuiet(opt.Log, opt.Progress)
	rep.Correct = true
	var warm, dev, scanStage, ringStage, packStage float64
	var traffic int64
	var cpu0 cpuClock
	var minor0, major0 int64
	var faults0 bool
	var devCPUs []float64 // each warm query's device CPU seconds
	for qi, idx := range rep.Indices {
		a0, b0 := c.Traffic()
		if qi == 0 {
			run, err := coldQuery(ctx, sess, opt, rep.DBBytes, idx, OrderRawFirst)
			if err != nil {
				return err
			}
			run.RawReadGBps = rawGBps
			recordCold(rep, run)
			a1, b1 := c.Traffic()
			traffic += a1 - a0 + b1 - b0
			rep.QueryUpBytes, rep.QueryDownBytes = a1-a0, b1-b0
			logf("query 0: record %d in %.3f s (%s; %d of %d store bytes cached)", idx, run.QuerySeconds, run.Order, run.CachedBytes, run.StoreBytes)
			progress("queries", 1, int64(len(rep.Indices)))
			cpu0 = readCPU(pid)
			minor0, major0, faults0 = procFaults(pid)
			continue
		}
		d0, dok0 := procCPUNanos(pid)
		q, err := sess.Get(ctx, idx)
		if err != nil {
			return fmt.Errorf("bench: query %d (record %d): %w", qi, idx, err)
		}
		if d1, dok1 := procCPUNanos(pid); dok0 && dok1 {
			devCPUs = append(devCPUs, float64(d1-d0)/1e9)
		}
		a1, b1 := c.Traffic()
		traffic += a1 - a0 + b1 - b0
		if !bytes.Equal(q.Record, client.SeededLWERecord(opt.Seed, idx, opt.RecordSize)) {
			rep.Correct = false
			rep.Failures = append(rep.Failures, fmt.Sprintf("record %d differs", idx))
		}
		warm += q.Seconds
		dev += q.Device.Seconds
		for _, u := range q.Device.Cores {
			switch u.Stage {
			case "scan":
				scanStage += u.Seconds
			case "ring":
				ringStage += u.Seconds
			case "pack":
				packStage += u.Seconds
			}
		}
		if qi == 1 || q.Seconds < rep.QueryMinSeconds {
			rep.QueryMinSeconds = q.Seconds
		}
		rep.QueryMaxSeconds = max(rep.QueryMaxSeconds, q.Seconds)
		rep.QueryUpBytes, rep.QueryDownBytes = a1-a0, b1-b0
		rep.DeviceStoreBytes = max(rep.DeviceStoreBytes, int64(q.Device.StoreBytes))
		progress("queries", int64(qi+1), int64(len(rep.Indices)))
		logf("query %d: record %d in %.3f s (device %.3f s), %d B up, %d B down", qi, idx, q.Seconds, q.Device.Seconds, a1-a0, b1-b0)
	}
	n := float64(len(rep.Indices) - 1)
	if cpu1 := readCPU(pid); pid > 0 && cpu0.ok && cpu1.ok {
		rep.DeviceCPUPerQuery = (cpu1.device - cpu0.device) / n
	}
	rep.DeviceCPUPerQueryMedian = median(devCPUs)
	if minor1, major1, ok := procFaults(pid); ok && faults0 {
		rep.DeviceMinorFaultsPerQuery, rep.DeviceMajorFaultsPerQuery = float64(minor1-minor0)/n, float64(major1-major0)/n
	}
	rep.QuerySeconds, rep.DeviceSeconds = warm/n, dev/n
	rep.ScanGBps = float64(rep.DBBytes) / rep.QuerySeconds / 1e9
	rep.DeviceScanGBps = float64(rep.DBBytes) / rep.DeviceSeconds / 1e9
	rep.ScanStageSeconds, rep.RingStageSeconds, rep.PackStageSeconds = scanStage/n, ringStage/n, packStage/n
	if scanStage > 0 {
		rep.ScanStageGBps = float64(rep.DBBytes) / rep.ScanStageSeconds / 1e9
	}
	rep.HostDeviceBytes = traffic / int64(len(rep.Indices))
	if rep.HostDeviceBytes > 0 {
		rep.Reduction = float64(rep.HostOnlyBytes) / float64(rep.HostDeviceBytes)
	}
	return nil
}

// recordCold adds a cold run to the report: the first one's figures are
// the report's cold ones, or its first query's where it was warm.
func recordCold(rep *PIRReport, run ColdRun) {
	if !run.Correct {
		rep.Correct = false
		rep.Failures = append(rep.Failures, fmt.Sprintf("record %d differs (%s)", run.Record, run.Order))
	}
	if len(rep.ColdRuns) == 0 {
		if run.Warm {
			rep.ColdIsWarm = true
			rep.FirstQuerySeconds, rep.FirstScanGBps = run.QuerySeconds, run.ScanGBps
		} else {
			rep.ColdQuerySeconds, rep.ColdScanGBps = run.QuerySeconds, run.ScanGBps
		}
	}
	rep.ColdRuns = append(rep.ColdRuns, run)
}

// lweBatches runs opt.Batches: each query in flight is its own client
// (identity, keys, connection), as a device serving many users sees them.
func lweBatches(ctx context.Context, c *remote.Client, dp *deviceProc, opt PIROptions, p lwepir.Params, want lweManifest, rep *PIRReport,
	logf func(string, ...any)) error {
	var clients []*client.LWESession
	if nb := slices.Max(append([]int{0}, opt.Batches...)); nb > 0 {
		var err error
		if clients, err = batchClients(ctx, c, dp.addr, dp.dial, opt, p, want, nb); err != nil {
			return err
		}
	}
	for _, b := range opt.Batches {
		br, err := lweBatch(ctx, clients[:b], opt, rep.Records, dp.pid)
		if err != nil {
			return err
		}
		rep.Correct = rep.Correct && br.Correct
		rep.Batches = append(rep.Batches, br)
		logf("batch %d: %d queries in %.2f s, %.2f queries/s, %.1f queries per scan pass, CPU per query %.3f s device, %.3f s clients",
			b, br.Queries, br.Seconds, br.QueriesPerS, br.MeanPass, br.DeviceCPUPerQuery, br.ClientCPUPerQuery)
	}
	return nil
}

// deviceStats records the device's memory and workers.
func deviceStats(ctx context.Context, c *remote.Client, rep *PIRReport) error {
	st, err := c.Stats(ctx, &devicepb.StatsRequest{})
	if err != nil {
		return err
	}
	rep.DevicePeakRSS = st.PeakRssBytes
	rep.DevicePeakAnonRSS, rep.DevicePeakFileRSS = st.PeakAnonRssBytes, st.PeakFileRssBytes
	if cfg, err := c.Config(ctx, &devicepb.ConfigRequest{}); err == nil {
		rep.DeviceWorkers = cfg.Workers
	}
	return nil
}

// secondCold runs the other order: a cold query, then the raw read. Our
// device, whose mappings kept the store's pages through every drop since
// its first scan, is stopped (stop) and a fresh one started for the query;
// a device given with --device cannot be, and its query is labelled by
// what stayed cached. The device is stopped before the raw read.
func secondCold(ctx context.Context, opt PIROptions, p lwepir.Params, want lweManifest, rep *PIRReport, stop func(), evict func() error,
	logf func(string, ...any)) error {
	c, stopAgain := (*remote.Client)(nil), func() {}
	if opt.Device == "" {
		stop()
		logf("a fresh device for the second cold query (the first one's mappings keep the store cached)")
		var err error
		if c, _, stopAgain, err = openDevice(ctx, opt, &PIRReport{}, logf); err != nil {
			return err
		}
	} else {
		var err error
		if c, err = remote.Dial(opt.Device, opt.Dial...); err != nil {
			return err
		}
		stopAgain = func() { c.Close() }
	}
	stopAgain = sync.OnceFunc(stopAgain)
	defer stopAgain()
	sess, err := lweSession(ctx, c, opt, p, want)
	if err != nil {
		return err
	}
	idx := rep.Indices[len(rep.Indices)-1]
	run, err := coldQuery(ctx, sess, opt, rep.DBBytes, idx, OrderQueryFirst)
	if err != nil {
		return err
	}
	stopAgain()
	stop()
	logf("second cold query: record %d in %.3f s (%d of %d store bytes cached); raw read of %s again", idx, run.QuerySeconds, run.CachedBytes, run.StoreBytes, opt.StoreDir)
	after, sweep, err := RawReadSweep(opt.StoreDir, "ch*", nil, evict)
	if err != nil {
		return err
	}
	run.RawReadGBps = after.GBps
	recordCold(rep, run)
	rep.RawReadSweeps = append(rep.RawReadSweeps, sweep...)
	rep.RawReadAfterGBps = after.GBps
	for _, r := range rep.RawReadSweeps {
		if r.GBps > rep.RawReadGBps {
			rep.RawReadGBps, rep.RawReadInFlight, rep.RawReadDirect = r.GBps, r.InFlight, r.Direct
		}
	}
	return nil
}

// buildLWEStore writes the database (tiles and hint) unless the store holds it.
func buildLWEStore(ctx context.Context, opt PIROptions, p lwepir.Params, want lweManifest, rep *PIRReport,
	progress func(string, int64, int64), logf func(string, ...any)) (lweManifest, error) {
	if err := os.MkdirAll(opt.StoreDir, 0o755); err != nil {
		return want, fmt.Errorf("bench: %w", err)
	}
	st, err := store.Open(opt.StoreDir, layout.Layout{Channels: 4, PageSize: 16 << 10})
	if err != nil {
		return want, err
	}
	defer st.Close()
	if have, err := readLWEManifest(opt.StoreDir); err == nil && have.Shape == want.Shape && have.Seed == want.Seed && have.Params == want.Params && have.Packed && have.Packing == want.Packing {
		rep.Reused = true
		logf("reusing the database in %s", opt.StoreDir)
		return have, nil
	}
	os.Remove(filepath.Join(opt.StoreDir, lweManifestFile))
	// The generation is rewritten under its own name: objects of the old
	// one that the new does not overwrite (a packer of another version has
	// another count) would otherwise stay behind it.
	if err := deleteUnder(st, lweGen+"/"); err != nil {
		return want, err
	}
	if _, err := rand.Read(want.LWESeed[:]); err != nil {
		return want, err
	}
	logf("writing a %d-byte LWE database (%d × %d) to %s", rep.DBBytes, want.Shape.Rows, want.Shape.Cols, opt.StoreDir)
	start := time.Now()
	if _, _, err := client.WriteSeededLWE(ctx, storeSink(st), lweGen, p, want.Shape.Rows, want.Records, opt.RecordSize, opt.Seed, want.LWESeed,
		func(done, total int64) { progress("build", done, total) }); err != nil {
		return want, err
	}
	rep.BuildSeconds = time.Since(start).Seconds()
	want.Packed = true
	b, _ := json.Marshal(want)
	return want, os.WriteFile(filepath.Join(opt.StoreDir, lweManifestFile), b, 0o644)
}

// deleteUnder deletes the store's objects whose names begin with prefix.
func deleteUnder(st *store.Store, prefix string) error {
	infos, err := st.List()
	if err != nil {
		return err
	}
	for _, in := range infos {
		if strings.HasPrefix(in.Name, prefix) {
			if err := st.Delete(in.Name); err != nil {
				return fmt.Errorf("bench: deleting %s: %w", in.Name, err)
			}
		}
	}
	return nil
}

func readLWEManifest(dir string) (lweManifest, error) {
	var m lweManifest
	b, err := os.ReadFile(filepath.Join(dir, lweManifestFile))
	if err != nil {
		return m, err
	}
	return m, json.Unmarshal(b, &m)
}

// storedBytes is the size of the store's channel files.
func storedBytes(dir string) int64 {
	files, _ := filepath.Glob(filepath.Join(dir, "ch*"))
	var n int64
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// batchClients makes n clients of the database: with TLS, each its own
// identity (a certificate issued for the run, granted reading by the
// owner); plaintext has one identity, whose per-caller queue then bounds
// the batch.
func batchClients(ctx context.Context, owner api.Device, addr string, dial []remote.Option, opt PIROptions, p lwepir.Params, m lweManifest, n int) ([]*client.LWESession, error) {
	if n > 256 {
		return nil, fmt.Errorf("bench: batch of %d queries (at most 256)", n)
	}
	certDir := filepath.Join(filepath.Dir(filepath.Clean(opt.StoreDir)), "certs")
	out := make([]*client.LWESession, n)
	for i := range out {
		id := fmt.Sprintf("bench-client-%d", i)
		d := dial
		if !opt.Plaintext && opt.Device == "" {
			if err := certs.Issue(certDir, id, certs.RoleUser, nil); err != nil {
				return nil, err
			}
			cfg, err := certs.ClientConfig(certs.InDir(certDir, id))
			if err != nil {
				return nil, err
			}
			d = []remote.Option{remote.WithTLS(cfg)}
			if _, err := owner.Grant(ctx, &devicepb.GrantRequest{Database: benchDB, Identity: id, Role: api.RoleReader}); err != nil {
				return nil, err
			}
		} else {
			id = benchIdentity(opt.Plaintext)
		}
		c, err := remote.Dial(addr, d...)
		if err != nil {
			return nil, err
		}
		context.AfterFunc(ctx, func() { c.Close() })
		if opt.LWEPacked {
			if out[i], err = client.NewPackedLWESession(c, lweGen, p, m.Shape, m.LWESeed); err != nil {
				return nil, err
			}
			continue
		}
		var keySeed [32]byte
		rand.Read(keySeed[:])
		sk, err := lwepir.DeriveSecretKey(p, keySeed[:])
		if err != nil {
			return nil, err
		}
		if out[i], err = client.NewLWESession(ctx, c, lweGen, p, m.Shape, m.LWESeed, sk, objname.Keys(benchDB, id, "bench")); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// lweBatch runs two waves of len(clients) concurrent queries, one per
// client (at seeded random records, each checked), and measures the
// throughput and the CPU the device process (pid, 0 if not ours) and the
// clients spent per query.
func lweBatch(ctx context.Context, clients []*client.LWESession, opt PIROptions, records int, pid int) (BatchResult, error) {
	b := len(clients)
	idx := queryIndices(opt.Seed+uint64(b), records, max(2, 2*b))
	res := BatchResult{B: b, Queries: len(idx), Correct: true}
	type outcome struct {
		ok   bool
		pass uint64
		err  error
	}
	cpu0 := readCPU(pid)
	start := time.Now()
	var passes float64
	for wave := 0; wave < len(idx); wave += b {
		part := idx[wave:min(len(idx), wave+b)]
		out := make(chan outcome, len(part))
		for j, i := range part {
			go func(sess *client.LWESession, i int) {
				q, err := sess.Get(ctx, i)
				if err != nil {
					out <- outcome{err: err}
					return
				}
				out <- outcome{ok: bytes.Equal(q.Record, client.SeededLWERecord(opt.Seed, i, opt.RecordSize)), pass: scanBatch(q.Device)}
			}(clients[j], i)
		}
		for range part {
			o := <-out
			if o.err != nil {
				return res, fmt.Errorf("bench: batch of %d: %w", b, o.err)
			}
			res.Correct = res.Correct && o.ok
			passes += float64(o.pass)
		}
	}
	res.Seconds = time.Since(start).Seconds()
	res.QueriesPerS = float64(len(idx)) / res.Seconds
	res.MeanPass = passes / float64(len(idx))
	if cpu1 := readCPU(pid); pid > 0 && cpu0.ok && cpu1.ok {
		res.DeviceCPUPerQuery = (cpu1.device - cpu0.device) / float64(len(idx))
		res.ClientCPUPerQuery = (cpu1.client - cpu0.client) / float64(len(idx))
	}
	return res, nil
}

// scanBatch is how many queries the pass that scanned for a query
// answered (its scan stage's batch), 0 if the device did not say.
func scanBatch(r *devicepb.RunStreamResponse) uint64 {
	for _, u := range r.Cores {
		if u.Stage == "scan" {
			return u.Batch
		}
	}
	return 0
}
