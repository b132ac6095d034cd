package bench

import (
	"context"
	"net"
	"path/filepath"
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
	records := int(opt.Size) / opt.RecordSize
	shape, err := lwepir.NewShape(p, records, opt.RecordSize)
	if err != nil {
		t.Fatal(err)
	}
	rep := &PIRReport{}
	logf, progress := orQuiet(nil, nil)
	if _, err := buildLWEStore(ctx, opt, p, lweManifest{Size: opt.Size, RecordSize: opt.RecordSize, Seed: opt.Seed, Params: "test", Shape: shape, Records: records},
		rep, progress, logf); err != nil {
		t.Fatal(err)
	}
	if err := ownDatabase(dir, benchDB, true); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(dir, layout.Layout{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d, err := device.New(st, device.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go device.Serve(sctx, d, lis, device.WithPlaintext())
	opt.Device, opt.Dial = lis.Addr().String(), []remote.Option{remote.WithPlaintext()}
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
