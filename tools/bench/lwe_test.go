package bench

import (
	"context"
	"net"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
	"github.com/rosemary-fhe/rosemary/fhe/matvec"
)

// The LWE benchmark on a small database (test parameters) through a device
// over gRPC: every record it reads is checked, each query reads every tile
// and every hint diagonal exactly once, and the bytes on the connection are
// those of the query and the answer.
func TestLWEBenchmarkSmall(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	opt := PIROptions{Scheme: "lwe", LWEParams: "test", Size: 1 << 20, RecordSize: 64, Queries: 4, Seed: 7, StoreDir: dir, Plaintext: true,
		Batches: []int{1, 3}}
	p := lwepir.Test()
	shape := serveLWEStore(t, ctx, &opt)
	got, err := RunPIR(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Correct || len(got.Failures) > 0 {
		t.Fatalf("records wrong: %v", got.Failures)
	}
	// Batches: two waves of B queries each, every record checked; a pass
	// answers between one and B of them; the device was not started here,
	// so its CPU is not read.
	if len(got.Batches) != 2 {
		t.Fatalf("%d batch results, want 2", len(got.Batches))
	}
	for i, b := range []int{1, 3} {
		br := got.Batches[i]
		if br.B != b || br.Queries != max(2, 2*b) || !br.Correct || br.MeanPass < 1 || br.MeanPass > float64(b) || br.QueriesPerS <= 0 {
			t.Fatalf("batch %d: %+v", b, br)
		}
		if br.DeviceCPUPerQuery != 0 {
			t.Fatalf("batch %d: device CPU %v read from a device not started here", b, br.DeviceCPUPerQuery)
		}
	}
	// The compute ceiling is measured where a vector kernel runs.
	if (got.ScanRoofQueryGBps > 0) != (matvec.Kernel() != "purego") || (got.BatchRoofQueriesPerS > 0) != (got.ScanRoofQueryGBps > 0) {
		t.Fatalf("kernel %s: compute ceiling %v query-GB/s, %v queries/s", matvec.Kernel(), got.ScanRoofQueryGBps, got.BatchRoofQueriesPerS)
	}
	l := shape.Layout(p)
	want := int64(shape.Tiles(p)*shape.TileBytes(p)) + int64(l.Diagonals()*lwepir.DiagonalWords(p)*8)
	if got.DeviceStoreBytes != want {
		t.Fatalf("the device read %d bytes per query, want %d (tiles and diagonals once)", got.DeviceStoreBytes, want)
	}
	// Up: the query vector (4 bytes an entry) and the encrypted secret;
	// down: the column (4 bytes a row) and one level-0 hint ciphertext per
	// output; each plus the protocol's framing, so at least these and not
	// far above.
	n := p.HintSlots()
	up := 4*int64(shape.Cols) + 2*int64(len(p.HintLogQ))*int64(n)*8
	down := 4*int64(shape.Rows) + int64(l.Outputs)*2*int64(n)*8
	if got.QueryUpBytes < up || got.QueryUpBytes > up+up/20 || got.QueryDownBytes < down || got.QueryDownBytes > down+down/20+4096 {
		t.Fatalf("%d B up, %d B down; the payload is %d and %d", got.QueryUpBytes, got.QueryDownBytes, up, down)
	}
}

// The LWE benchmark in the packed mode: every record right, single and
// batched; the device reads the tiles alone; up the query vector and the
// packing keys, down the packed answer, each plus the framing.
func TestLWEBenchmarkSmallPacked(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	opt := PIROptions{Scheme: "lwe", LWEParams: "test", LWEPacked: true, Size: 1 << 20, RecordSize: 64, Queries: 4, Seed: 7, StoreDir: dir,
		Plaintext: true, Batches: []int{2}}
	p := lwepir.Test()
	shape := serveLWEStore(t, ctx, &opt)
	got, err := RunPIR(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Correct || len(got.Failures) > 0 || got.LWEMode != "packed" {
		t.Fatalf("mode %q, records wrong: %v", got.LWEMode, got.Failures)
	}
	if len(got.Batches) != 1 || !got.Batches[0].Correct {
		t.Fatalf("batches: %+v", got.Batches)
	}
	if want := int64(shape.Tiles(p) * shape.TileBytes(p)); got.DeviceStoreBytes != want {
		t.Fatalf("the device read %d bytes per query, want the tiles' %d", got.DeviceStoreBytes, want)
	}
	up := 7*int64(shape.Cols)/2 + int64(lwepir.PackingKeysBytes(p)) // 28-bit words
	down := int64(lwepir.PackedAnswerBytes(p, shape))
	if got.QueryUpBytes < up || got.QueryUpBytes > up+up/20 || got.QueryDownBytes < down || got.QueryDownBytes > down+down/20+4096 {
		t.Fatalf("%d B up, %d B down; the payload is %d and %d", got.QueryUpBytes, got.QueryDownBytes, up, down)
	}
}

// The LWE benchmark's cold figures through a device it did not start: two
// cold runs, one in each order beside a raw read; the device's mappings
// keep the store's pages through the drop once it has scanned, so the
// second is labelled warm, never reported as cold; the raw read is a sweep
// of both orders, its best the report's. --compare cannot read a store
// such a device holds, and says so before any work.
func TestLWEBenchmarkColdThroughADevice(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	opt := PIROptions{Scheme: "lwe", LWEParams: "test", Size: 1 << 20, RecordSize: 64, Queries: 3, Seed: 9, StoreDir: dir, Plaintext: true}
	serveLWEStore(t, ctx, &opt)
	if _, err := RunPIR(ctx, PIROptions{Scheme: "lwe", LWEParams: "test", Size: opt.Size, RecordSize: 64, Queries: 3, StoreDir: dir, Device: opt.Device, Compare: true}); err == nil {
		t.Fatal("--compare ran beside a device holding the store")
	}
	got, err := RunPIR(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Correct || len(got.ColdRuns) != 2 || got.ColdRuns[0].Order != OrderRawFirst || got.ColdRuns[1].Order != OrderQueryFirst {
		t.Fatalf("correct %v, cold runs %+v", got.Correct, got.ColdRuns)
	}
	for _, run := range got.ColdRuns {
		if !run.Correct || run.StoreBytes < got.StoredBytes || run.RawReadGBps <= 0 || run.Warm != (run.CachedBytes*100 > run.StoreBytes) {
			t.Fatalf("cold run %+v (store %d bytes)", run, got.StoredBytes)
		}
	}
	if second := got.ColdRuns[1]; !second.Warm || second.CachedBytes == 0 {
		t.Fatalf("after the device's scans the drop left %d of %d bytes cached, labelled warm %v", second.CachedBytes, second.StoreBytes, second.Warm)
	}
	// The first run's figure is the report's cold one only where it was cold.
	if first := got.ColdRuns[0]; first.Warm != got.ColdIsWarm || (got.ColdScanGBps > 0) == first.Warm || (got.FirstScanGBps > 0) != first.Warm {
		t.Fatalf("first run %+v reported as cold %v / first %v (cold_is_warm %v)", first, got.ColdScanGBps, got.FirstScanGBps, got.ColdIsWarm)
	}
	if len(got.RawReadSweeps) != 2*len(rawSweep) || got.RawReadBytes != got.StoredBytes {
		t.Fatalf("%d raw read passes of %d bytes, want %d of %d", len(got.RawReadSweeps), got.RawReadBytes, 2*len(rawSweep), got.StoredBytes)
	}
	// The report's raw read is its best pass, whichever configuration that
	// was on this machine at this moment (not asserted: a timing).
	best, bestInFlight := 0.0, 0
	for _, r := range got.RawReadSweeps {
		if r.GBps > best {
			best, bestInFlight = r.GBps, r.InFlight
		}
	}
	if got.RawReadGBps != best || got.RawReadGBps != max(got.RawReadBeforeGBps, got.RawReadAfterGBps) || got.RawReadInFlight != bestInFlight {
		t.Fatalf("raw read %v GB/s (%d in flight), passes' best %v, before %v, after %v", got.RawReadGBps, got.RawReadInFlight, best, got.RawReadBeforeGBps, got.RawReadAfterGBps)
	}
	if got.DeviceCPUPerQuery != 0 || got.HintDownload != nil {
		t.Fatalf("device CPU %v read from a device not started here; hint download %+v not asked", got.DeviceCPUPerQuery, got.HintDownload)
	}
	// The goals' ratios: one for each cold run that was cold (not the
	// second, warm), over the best raw read; the warm scan over the sweep.
	var want []float64
	for _, run := range got.ColdRuns {
		if !run.Warm {
			want = append(want, run.ScanGBps/got.RawReadGBps)
		}
	}
	if !slices.Equal(got.ColdOverBestRaw, want) {
		t.Fatalf("cold over the best raw read %v, want %v", got.ColdOverBestRaw, want)
	}
	if got.MemReadGBps <= 0 || got.WarmOverReadSweep != got.ScanGBps/got.MemReadGBps {
		t.Fatalf("warm over the read sweep %v: scan %v GB/s, sweep %v", got.WarmOverReadSweep, got.ScanGBps, got.MemReadGBps)
	}
}

// SimplePIR's mode on a benchmark store: the hint computed from the
// store's tiles, each answer decoded with it matches the seeded record
// byte for byte (and a different seed's records do not: the check is
// real); the sizes are the layout's.
func TestHintDownloadOnAStore(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	opt := PIROptions{Scheme: "lwe", LWEParams: "test", Size: 1 << 20, RecordSize: 64, Queries: 4, Seed: 5, StoreDir: dir}
	p := lwepir.Test()
	records := int(opt.Size) / opt.RecordSize
	shape, err := lwepir.NewShape(p, records, opt.RecordSize)
	if err != nil {
		t.Fatal(err)
	}
	logf, progress := orQuiet(nil, nil)
	m, err := buildLWEStore(ctx, opt, p, lweManifest{Size: opt.Size, RecordSize: opt.RecordSize, Seed: opt.Seed, Params: "test", Shape: shape, Records: records},
		&PIRReport{}, progress, logf)
	if err != nil {
		t.Fatal(err)
	}
	idx := queryIndices(opt.Seed, records, opt.Queries)
	hd, err := runHintDownload(ctx, opt, p, m, idx, logf)
	if err != nil {
		t.Fatal(err)
	}
	if !hd.Correct || len(hd.Failures) != 0 || hd.Queries != len(idx) {
		t.Fatalf("%+v", hd)
	}
	if hd.HintBytes != int64(4*shape.Rows*p.N()) || hd.QueryUpBytes != int64(4*shape.Cols) || hd.QueryDownBytes != int64(4*shape.Rows) {
		t.Fatalf("hint %d B, %d B up, %d B down for a %d × %d matrix", hd.HintBytes, hd.QueryUpBytes, hd.QueryDownBytes, shape.Rows, shape.Cols)
	}
	if hd.DeviceCPUSeconds <= 0 || hd.ScanSeconds <= 0 {
		t.Fatalf("scan %v s, %v CPU-s: not measured", hd.ScanSeconds, hd.DeviceCPUSeconds)
	}
	opt.Seed++
	wrong, err := runHintDownload(ctx, opt, p, m, idx, logf)
	if err != nil {
		t.Fatal(err)
	}
	if wrong.Correct || len(wrong.Failures) != len(idx) {
		t.Fatalf("checked against another seed's records: correct %v, %d failures", wrong.Correct, len(wrong.Failures))
	}
}

// A query's upload, from the layout code and a real query's wire form: at
// 8 GiB (the largest matrix NewShape makes: 8192 rows × 2^20 columns) it
// is 4 MiB of LWE vector and a 256 KiB encrypted secret, 4,456,448 bytes
// (4.25 MiB) of payload; at 1 GiB 2,359,296 (2.25 MiB). README and
// docs/databases.md state these.
func TestLWEUploadFromTheLayout(t *testing.T) {
	p := lwepir.Default()
	small, err := lwepir.NewShape(p, 4096, 256)
	if err != nil {
		t.Fatal(err)
	}
	sk, _, err := lwepir.GenerateKeys(p, small)
	if err != nil {
		t.Fatal(err)
	}
	var seed [lwepir.SeedSize]byte
	cl, err := lwepir.NewClient(p, small, seed, sk)
	if err != nil {
		t.Fatal(err)
	}
	q, _, err := cl.Query(0)
	if err != nil {
		t.Fatal(err)
	}
	secret := int64(len(lwepir.MarshalCiphertext(q.Secret)))
	if vec := int64(len(lwepir.MarshalWords(q.Vector))); vec+secret != lweQueryUpBytes(p, small) {
		t.Fatalf("a real query is %d + %d bytes, the layout says %d", vec, secret, lweQueryUpBytes(p, small))
	}
	for _, c := range []struct {
		size int64
		rows int
		cols int
		up   int64
	}{{1 << 30, 2048, 1 << 19, 2359296}, {8 << 30, 8192, 1 << 20, 4456448}} {
		shape, err := lwepir.NewShape(p, int(c.size/256), 256)
		if err != nil {
			t.Fatal(err)
		}
		if shape.Rows != c.rows || shape.Cols != c.cols || lweQueryUpBytes(p, shape) != c.up {
			t.Fatalf("%d bytes: a %d × %d matrix, %d bytes up; want %d × %d, %d", c.size, shape.Rows, shape.Cols, lweQueryUpBytes(p, shape), c.rows, c.cols, c.up)
		}
	}
	if _, err := lwepir.NewShape(p, int((8<<30)/256)+1, 256); err == nil {
		t.Fatal("a matrix past 8 GiB of 256-byte records")
	}
}

// A packed query's upload (the default mode), from the layout code and a
// real query's wire form: its vector in 28-bit words and its packing keys
// (PackV3: 26,624 bytes of keys). At 1 GiB 1,861,632 bytes of payload
// (2^19 columns), with --log-cols 18 944,128 (4096 rows), with 17 485,376;
// at 8 GiB 3,696,640 (8192 rows of 2^20 columns), or 1,861,632 in a
// packed-only generation's 16,384 rows.
func TestPackedUploadFromTheLayout(t *testing.T) {
	p := lwepir.Default()
	small, err := lwepir.NewShape(p, 4096, 256)
	if err != nil {
		t.Fatal(err)
	}
	var seed [lwepir.SeedSize]byte
	cl, err := lwepir.NewPackedClient(p, small, seed)
	if err != nil {
		t.Fatal(err)
	}
	q, _, err := cl.PackedQuery(0)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := lwepir.MarshalPackingKeys(p, q.Keys)
	if err != nil {
		t.Fatal(err)
	}
	if got := int64(len(lwepir.MarshalQuery(p, q.Vector)) + len(keys)); got != packedUpBytes(p, small) {
		t.Fatalf("a real packed query is %d bytes, the layout says %d", got, packedUpBytes(p, small))
	}
	for _, c := range []struct {
		size             int64
		logCols, maxRows int
		up               int64
	}{{1 << 30, 19, 8192, 1861632}, {1 << 30, 18, 8192, 944128}, {1 << 30, 17, 8192, 485376}, {8 << 30, 19, 8192, 3696640}, {8 << 30, 19, 16384, 1861632}} {
		shape, err := lwepir.NewShapeRows(p, int(c.size/256), 256, c.logCols, c.maxRows)
		if err != nil {
			t.Fatal(err)
		}
		if got := packedUpBytes(p, shape); got != c.up {
			t.Fatalf("%d bytes below 2^%d columns: a %d × %d matrix, %d bytes up; want %d", c.size, c.logCols, shape.Rows, shape.Cols, got, c.up)
		}
	}
}

// packedUpBytes is a packed query's payload up: its vector's words
// (lwepir.QueryBytes) and its packing keys.
func packedUpBytes(p lwepir.Params, shape lwepir.Shape) int64 {
	return int64(lwepir.QueryBytes(p, shape.Cols) + lwepir.PackingKeysBytes(p))
}

// lweQueryUpBytes is a hint-free query's payload up (its wire form,
// lwepir.MarshalWords and MarshalCiphertext): 4 bytes a column of LWE
// vector and the encrypted secret, one ring ciphertext of degree 1 at
// every ciphertext prime.
func lweQueryUpBytes(p lwepir.Params, shape lwepir.Shape) int64 {
	return 4*int64(shape.Cols) + 2*int64(len(p.HintLogQ))*int64(p.HintSlots())*8
}

// serveLWEStore builds opt's database (test parameters) in opt.StoreDir,
// serves it from a plaintext device in this process until the test ends,
// points opt at that device and returns the database's shape.
func serveLWEStore(t *testing.T, ctx context.Context, opt *PIROptions) lwepir.Shape {
	t.Helper()
	p := lwepir.Test()
	records := int(opt.Size) / opt.RecordSize
	shape, err := lwepir.NewShape(p, records, opt.RecordSize)
	if err != nil {
		t.Fatal(err)
	}
	logf, progress := orQuiet(nil, nil)
	if _, err := buildLWEStore(ctx, *opt, p, lweManifest{Size: opt.Size, RecordSize: opt.RecordSize, Seed: opt.Seed, Params: "test", Shape: shape, Records: records},
		&PIRReport{}, progress, logf); err != nil {
		t.Fatal(err)
	}
	if err := ownDatabase(opt.StoreDir, benchDB, true); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(opt.StoreDir, layout.Layout{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	d, err := device.New(st, device.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() { device.Serve(sctx, d, lis, device.WithPlaintext()); close(served) }()
	// Stop serving before the store closes (cleanups run last first).
	t.Cleanup(func() { stop(); <-served })
	opt.Device, opt.Dial = lis.Addr().String(), []remote.Option{remote.WithPlaintext()}
	return shape
}

// A store rebuilt for another packing version holds what a fresh build
// of that version holds, object for object: the old version's packer had
// more objects, and none of them stays behind the new generation.
func TestRebuiltStoreDropsTheOldPacker(t *testing.T) {
	ctx := context.Background()
	names := func(dir string, versions ...lwepir.PackVersion) []string {
		t.Helper()
		opt := PIROptions{Scheme: "lwe", LWEParams: "test", Size: 1 << 20, RecordSize: 1024, Seed: 5, StoreDir: dir} // four packs: 3064 polynomials in PackV1, 2044 in PackV2
		for _, v := range versions {
			p, err := lwepir.Test().WithPacking(v)
			if err != nil {
				t.Fatal(err)
			}
			records := int(opt.Size) / opt.RecordSize
			shape, err := lwepir.NewShape(p, records, opt.RecordSize)
			if err != nil {
				t.Fatal(err)
			}
			logf, progress := orQuiet(nil, nil)
			want := lweManifest{Size: opt.Size, RecordSize: opt.RecordSize, Seed: opt.Seed, Params: "test", Packing: v, Shape: shape, Records: records}
			if _, err := buildLWEStore(ctx, opt, p, want, &PIRReport{}, progress, logf); err != nil {
				t.Fatal(err)
			}
		}
		st, err := store.Open(dir, layout.Layout{Channels: 4, PageSize: 16 << 10})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		infos, err := st.List()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, in := range infos {
			out = append(out, in.Name)
		}
		return out
	}
	v1 := names(filepath.Join(t.TempDir(), "v1"), lwepir.PackV1)
	fresh := names(filepath.Join(t.TempDir(), "fresh"), lwepir.PackV2)
	rebuilt := names(filepath.Join(t.TempDir(), "rebuilt"), lwepir.PackV1, lwepir.PackV2)
	if len(v1) <= len(fresh) {
		t.Fatalf("PackV1's store has %d objects, PackV2's %d: the test needs more in the first", len(v1), len(fresh))
	}
	if !slices.Equal(rebuilt, fresh) {
		t.Fatalf("rebuilt: %d objects, fresh: %d", len(rebuilt), len(fresh))
	}
}
