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
}

const lweManifestFile = "lwe-bench.json"

// lweGen is the generation prefix of the benchmark's LWE database.
const lweGen = benchDB + "/g1"

// runLWE is RunPIR for the LWE scheme: build (or reuse) the database,
// read its files raw, then query it through a device process. The first
// query runs after the store's files are dropped from the page cache (the
// cold scan); the rest find them cached (the warm scan).
func runLWE(ctx context.Context, opt PIROptions) (*PIRReport, error) {
	logf, progress := orQuiet(opt.Log, opt.Progress)
	p := lwepir.Default()
	if opt.LWEParams != "" {
		var err error
		if p, err = lwepir.ByName(opt.LWEParams); err != nil {
			return nil, err
		}
	}
	records := int(opt.Size / int64(opt.RecordSize))
	shape, err := lwepir.NewShape(p, records, opt.RecordSize)
	if err != nil {
		return nil, err
	}
	rep := &PIRReport{Scheme: "lwe", Params: "lwe-" + p.Name(), RecordSize: opt.RecordSize, Records: records, Rows: shape.Rows, Cols: shape.Cols,
		Queries: opt.Queries, Provenance: "measured here"}
	rep.DBBytes = int64(records) * int64(opt.RecordSize)
	rep.HostOnlyBytes = rep.DBBytes
	want := lweManifest{Size: opt.Size, RecordSize: opt.RecordSize, Seed: opt.Seed, Params: p.Name(), Shape: shape, Records: records}
	if opt.Device == "" {
		if want, err = buildLWEStore(ctx, opt, p, want, rep, progress, logf); err != nil {
			return nil, err
		}
	} else if have, err := readLWEManifest(opt.StoreDir); err != nil || have.Shape != want.Shape || have.Seed != want.Seed {
		return nil, fmt.Errorf("bench: with --device the store %s must already hold the database (run once without --device)", opt.StoreDir)
	} else {
		want = have
	}
	rep.StoredBytes = storedBytes(opt.StoreDir)

	logf("raw read of %s (every channel file at once, %d streams each)", opt.StoreDir, rawReadStreams)
	if err := dropPageCache(opt.StoreDir); err != nil {
		return nil, err
	}
	raw, err := ReadFilesParallel(opt.StoreDir, "ch*", rawReadStreams)
	if err != nil {
		return nil, err
	}
	rep.RawReadGBps, rep.RawReadBytes, rep.RawReadDirect, rep.RawReadInFlight = raw.GBps, raw.Bytes, raw.Direct, raw.InFlight
	rep.RawReadBeforeGBps = raw.GBps
	rep.ColdIsWarm = opt.Device != ""

	logf("memory bandwidth (STREAM triad and a read-only sweep, every core)")
	if rep.MemBandwidthGBps, err = membw.Triad(ctx, 0, 0); err != nil {
		return nil, err
	}
	if rep.MemReadGBps, err = membw.Read(ctx, 0, 0); err != nil {
		return nil, err
	}
	logf("compute ceiling of the scan (the kernel's multiply-add on registers, every core)")
	roof, err := matvec.Roof(ctx, 0, time.Second)
	if err != nil {
		return nil, err
	}
	rep.ScanRoofQueryGBps = roof / 1e9
	rep.BatchRoofQueriesPerS = roof / float64(rep.DBBytes)
	rep.Indices = queryIndices(opt.Seed, records, opt.Queries)
	c, dp, stop, err := openDevice(ctx, opt, rep, logf)
	if err != nil {
		return nil, err
	}
	defer stop()
	var keySeed [32]byte
	rand.Read(keySeed[:])
	sk, err := lwepir.DeriveSecretKey(p, keySeed[:])
	if err != nil {
		return nil, err
	}
	s0, r0 := c.Traffic()
	sess, err := client.NewLWESession(ctx, c, lweGen, p, want.Shape, want.LWESeed, sk, objname.Keys(benchDB, benchIdentity(opt.Plaintext), "bench"))
	if err != nil {
		return nil, err
	}
	s1, r1 := c.Traffic()
	rep.SetupBytes = s1 - s0 + r1 - r0

	rep.Correct = true
	var warm, dev, scanStage, ringStage float64
	var traffic int64
	for qi, idx := range rep.Indices {
		if qi == 0 {
			// The cold query: nothing of the store in the page cache.
			if err := dropPageCache(opt.StoreDir); err != nil {
				return nil, err
			}
		}
		a0, b0 := c.Traffic()
		q, err := sess.Get(ctx, idx)
		if err != nil {
			return nil, fmt.Errorf("bench: query %d (record %d): %w", qi, idx, err)
		}
		a1, b1 := c.Traffic()
		traffic += a1 - a0 + b1 - b0
		if !bytes.Equal(q.Record, client.SeededLWERecord(opt.Seed, idx, opt.RecordSize)) {
			rep.Correct = false
			rep.Failures = append(rep.Failures, fmt.Sprintf("record %d differs", idx))
		}
		if qi == 0 {
			rep.ColdQuerySeconds = q.Seconds
		} else {
			warm += q.Seconds
			dev += q.Device.Seconds
			for _, u := range q.Device.Cores {
				switch u.Stage {
				case "scan":
					scanStage += u.Seconds
				case "ring":
					ringStage += u.Seconds
				}
			}
			if qi == 1 || q.Seconds < rep.QueryMinSeconds {
				rep.QueryMinSeconds = q.Seconds
			}
			rep.QueryMaxSeconds = max(rep.QueryMaxSeconds, q.Seconds)
		}
		rep.QueryUpBytes, rep.QueryDownBytes = a1-a0, b1-b0
		rep.DeviceStoreBytes = max(rep.DeviceStoreBytes, int64(q.Device.StoreBytes))
		progress("queries", int64(qi+1), int64(len(rep.Indices)))
		logf("query %d: record %d in %.3f s (device %.3f s), %d B up, %d B down", qi, idx, q.Seconds, q.Device.Seconds, a1-a0, b1-b0)
	}
	n := float64(len(rep.Indices) - 1)
	rep.QuerySeconds, rep.DeviceSeconds = warm/n, dev/n
	rep.ScanGBps = float64(rep.DBBytes) / rep.QuerySeconds / 1e9
	rep.DeviceScanGBps = float64(rep.DBBytes) / rep.DeviceSeconds / 1e9
	rep.ColdScanGBps = float64(rep.DBBytes) / rep.ColdQuerySeconds / 1e9
	rep.ScanStageSeconds, rep.RingStageSeconds = scanStage/n, ringStage/n
	if scanStage > 0 {
		rep.ScanStageGBps = float64(rep.DBBytes) / rep.ScanStageSeconds / 1e9
	}
	logf("raw read of %s again, the page cache dropped", opt.StoreDir)
	if err := dropPageCache(opt.StoreDir); err != nil {
		return nil, err
	}
	after, err := ReadFilesParallel(opt.StoreDir, "ch*", rawReadStreams)
	if err != nil {
		return nil, err
	}
	rep.RawReadAfterGBps = after.GBps
	rep.RawReadGBps = max(rep.RawReadGBps, after.GBps)
	logf("read of the cached store, every core (%s)", opt.StoreDir)
	cached, err := ReadFilesCached(opt.StoreDir, "ch*", runtime.GOMAXPROCS(0), 3)
	if err != nil {
		return nil, err
	}
	rep.CachedReadGBps = cached.GBps
	rep.HostDeviceBytes = traffic / int64(len(rep.Indices))
	if rep.HostDeviceBytes > 0 {
		rep.Reduction = float64(rep.HostOnlyBytes) / float64(rep.HostDeviceBytes)
	}
	// Batches: each query in flight is its own client (identity, keys,
	// connection), as a device serving many users sees them.
	var clients []*client.LWESession
	if nb := slices.Max(append([]int{0}, opt.Batches...)); nb > 0 {
		if clients, err = batchClients(ctx, c, dp.addr, dp.dial, opt, p, want, nb); err != nil {
			return nil, err
		}
	}
	for _, b := range opt.Batches {
		br, err := lweBatch(ctx, clients[:b], opt, records, dp.pid)
		if err != nil {
			return nil, err
		}
		rep.Correct = rep.Correct && br.Correct
		rep.Batches = append(rep.Batches, br)
		logf("batch %d: %d queries in %.2f s, %.2f queries/s, %.1f queries per scan pass, CPU per query %.3f s device, %.3f s clients",
			b, br.Queries, br.Seconds, br.QueriesPerS, br.MeanPass, br.DeviceCPUPerQuery, br.ClientCPUPerQuery)
	}
	st, err := c.Stats(ctx, &devicepb.StatsRequest{})
	if err != nil {
		return nil, err
	}
	rep.DevicePeakRSS = st.PeakRssBytes
	rep.DevicePeakAnonRSS, rep.DevicePeakFileRSS = st.PeakAnonRssBytes, st.PeakFileRssBytes
	if cfg, err := c.Config(ctx, &devicepb.ConfigRequest{}); err == nil {
		rep.DeviceWorkers = cfg.Workers
	}
	return rep, nil
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
	if have, err := readLWEManifest(opt.StoreDir); err == nil && have.Shape == want.Shape && have.Seed == want.Seed && have.Params == want.Params {
		rep.Reused = true
		logf("reusing the database in %s", opt.StoreDir)
		return have, nil
	}
	os.Remove(filepath.Join(opt.StoreDir, lweManifestFile))
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
	b, _ := json.Marshal(want)
	return want, os.WriteFile(filepath.Join(opt.StoreDir, lweManifestFile), b, 0o644)
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
