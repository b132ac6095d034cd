package programs

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/client/internal/session"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/fhe/pir"
	"github.com/rosemary-fhe/rosemary/internal/fhetest"
)

// pirDB is a seeded PIR database in a fresh store behind an in-process
// device, with a session on it.
type pirDB struct {
	st    *store.Store
	dev   *device.Device
	sess  *PIRSession
	shape pir.Shape
	seed  uint64
	bytes int64
}

func newPIRDB(t *testing.T, recordSize, records int, seed uint64) *pirDB {
	t.Helper()
	return newPIRDBWith(t, recordSize, records, seed, session.Options{})
}

// storeSink writes objects straight into a store, before its device
// serves.
func storeSink(st *store.Store) session.ObjectSink {
	return func(_ context.Context, name string, shape object.Shape, raw [][]byte) error {
		_, err := st.Put(name, object.KindPlaintext, shape, raw)
		return err
	}
}

// openTestStore opens a store of 4 channels of 4 KiB pages in a temporary
// directory, closed when the test ends.
func openTestStore(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(t.TempDir(), layout.Layout{Channels: 4, PageSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newPIRDBWith(t *testing.T, recordSize, records int, seed uint64, opt session.Options) *pirDB {
	t.Helper()
	preset, params := fhetest.BGVParams(t, "bgv-13")
	shape, err := pir.NewShape(params, recordSize, records)
	if err != nil {
		t.Fatal(err)
	}
	st := openTestStore(t)
	ctx := context.Background()
	n, err := session.WritePIRDatabase(ctx, storeSink(st), "db", shape, session.SeededRecords(seed), nil)
	if err != nil {
		t.Fatal(err)
	}
	lim := device.DefaultLimits()
	lim.Workers = 2
	dev, err := device.New(st, lim)
	if err != nil {
		t.Fatal(err)
	}
	sk := rlwe.NewKeyGenerator(params).GenSecretKeyNew()
	sess, err := NewPIRSessionWith(ctx, dev, "db", preset, shape, sk, opt)
	if err != nil {
		t.Fatal(err)
	}
	return &pirDB{st: st, dev: dev, sess: sess, shape: shape, seed: seed, bytes: n}
}

func (db *pirDB) check(t *testing.T, index int) *session.PIRQuery {
	t.Helper()
	q, err := db.sess.Get(context.Background(), index)
	if err != nil {
		t.Fatal(err)
	}
	want, err := session.SeededRecord(db.seed, db.shape, index)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(q.Record, want) {
		t.Fatalf("record %d: got %x…, want %x…", index, q.Record[:8], want[:8])
	}
	return q
}

// A database in the store answers PIR queries through the compiled Plan's
// device segment, on 128-bit parameters: records come back exactly, the
// device reads every plaintext once per query, and only one query and one
// answer ciphertext cross.
func TestPIRDeviceRecords(t *testing.T) {
	db := newPIRDB(t, 100, 163*1000, 7) // 163 records per plaintext: 1000 plaintexts, 4 × 256 padded
	if !db.sess.OnDevice() {
		t.Fatalf("the plan scans %d × %d plaintexts on the host", db.shape.Rows, db.shape.Cols)
	}
	for _, i := range []int{0, db.shape.Records - 1, 12345, 163, 162} {
		q := db.check(t, i)
		if int(q.Device.Stored) != db.shape.Rows*db.shape.Cols {
			t.Fatalf("query read %d stored plaintexts, the database has %d", q.Device.Stored, db.shape.Rows*db.shape.Cols)
		}
		if q.Device.StoreBytes < uint64(db.bytes) {
			t.Fatalf("query read %d bytes from the store, the database has %d", q.Device.StoreBytes, db.bytes)
		}
		if want := int64(2 * 3 * 8 * db.shape.N); q.QueryBytes != want {
			t.Fatalf("query of %d bytes, want one level-2 ciphertext (%d)", q.QueryBytes, want)
		}
	}
	if _, err := db.sess.Get(context.Background(), db.shape.Records); !errors.Is(err, session.ErrIndex) {
		t.Fatalf("index past the end: %v, want session.ErrIndex", err)
	}
}

// A database so small that the plan keeps the scan on the host (the
// SHARP-class host's wide base-conversion units beat the SSD engine on 123
// plaintexts) still answers when the session follows the plan: the host
// pulls its plaintexts from the device. By default the same database is
// scanned on the device, where it lives.
func TestPIRHostPlan(t *testing.T) {
	db := newPIRDBWith(t, 100, 20000, 9, session.Options{FollowPlan: true}) // 123 plaintexts: 1 × 128
	if db.sess.OnDevice() {
		t.Fatal("the plan scans a 123-plaintext database on the device; this test needs one it keeps on the host")
	}
	for _, i := range []int{0, db.shape.Records - 1, 777} {
		q := db.check(t, i)
		if q.PulledBytes != db.bytes*4 {
			t.Fatalf("pulled %d bytes, want the database's %d 2-byte words as 8-byte ones", q.PulledBytes, db.bytes/2)
		}
	}
	def := newPIRDB(t, 100, 20000, 9)
	if !def.sess.OnDevice() {
		t.Fatal("by default the scan runs where the database lives, on the device")
	}
	def.check(t, 777)
}

// The device's answer is bit for bit the answer of the Lattigo reference
// server reading the same store (package pir).
func TestPIRDeviceMatchesLattigo(t *testing.T) {
	db := newPIRDB(t, 64, 4*256*256, 3) // 4 × 256 plaintexts
	ctx := context.Background()
	q, err := db.sess.Query(777)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := db.sess.Answer(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := pir.NewServer(db.sess.Params, db.shape, db.sess.EvaluationKeys(), 2)
	if err != nil {
		t.Fatal(err)
	}
	want, err := srv.Answer(ctx, q, &devicePlaintexts{dev: db.dev, prefix: session.PIRPlaintextPrefix("db"), shape: db.shape, objs: map[int64][][]uint64{}})
	if err != nil {
		t.Fatal(err)
	}
	for p := range want.Value {
		for i := range want.Value[p].Coeffs {
			for j, c := range want.Value[p].Coeffs[i] {
				if got.Value[p].Coeffs[i][j] != c {
					t.Fatalf("poly %d limb %d coefficient %d: device %d, Lattigo %d", p, i, j, got.Value[p].Coeffs[i][j], c)
				}
			}
		}
	}
}

// Device memory does not grow with the database: a run over four times the
// plaintexts holds the same value memory (the held column selections, the
// expansion paths, the accumulators), within 10%.
func TestPIRDeviceMemoryIndependentOfSize(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 320 MiB of store")
	}
	small := newPIRDB(t, 2*8192, 4096, 1)   // 64 MiB: 16 × 256
	large := newPIRDB(t, 2*8192, 4*4096, 2) // 256 MiB: 64 × 256
	qs := small.check(t, 4095)
	ql := large.check(t, 4*4096-1)
	ps, pl := float64(qs.Device.PeakBytes), float64(ql.Device.PeakBytes)
	t.Logf("peak value memory: %.1f MiB over %d MiB, %.1f MiB over %d MiB", ps/(1<<20), small.bytes>>20, pl/(1<<20), large.bytes>>20)
	if pl > 1.1*ps {
		t.Fatalf("value memory grew from %.0f to %.0f bytes with the database", ps, pl)
	}
}

// Bad input: a key the device does not hold, a corrupt page met mid-scan,
// a client that goes away mid-query — each a named error; the device keeps
// answering and nothing stored changes.
func TestPIRDeviceBadInput(t *testing.T) {
	db := newPIRDB(t, 256, 2*256*64, 5) // 2 × 256 plaintexts
	ctx := context.Background()

	// A cancelled query stops with the context's error.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := db.sess.Get(cctx, 3); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled query: %v", err)
	}
	db.check(t, 3)

	// Flip a byte in the middle of the database's pages.
	dir := db.st.Dir()
	ch := filepath.Join(dir, "ch01")
	f, err := os.OpenFile(ch, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	off := db.bytes / 4 / 2 // the database was written first: its share of ch01 starts the file
	b := []byte{0}
	f.ReadAt(b, off)
	b[0] ^= 0x40
	f.WriteAt(b, off)
	_, err = db.sess.Get(ctx, 1)
	if !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("query over a corrupt page: %v, want store.ErrCorrupt", err)
	}
	b[0] ^= 0x40
	f.WriteAt(b, off)
	f.Close()
	db.check(t, 1)
	db.check(t, db.shape.Records-1)

	// A key the device does not hold.
	if err := db.st.Delete("db/keys/rlk"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.sess.Get(ctx, 2); !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("query without the relinearization key: %v, want api.ErrNotFound", err)
	}
}

// A client that goes away mid-query over gRPC: the device stops the run,
// keeps serving, and the next query is answered.
func TestPIRClientGoesAway(t *testing.T) {
	preset, params := fhetest.BGVParams(t, "bgv-13")
	shape, err := pir.NewShape(params, 2*8192, 8*256) // 8 × 256 plaintexts
	if err != nil {
		t.Fatal(err)
	}
	st := openTestStore(t)
	lim := device.DefaultLimits()
	c, d, err := device.InProcess(st, lim)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := session.WritePIRDatabase(ctx, session.DeviceSink(c), "db", shape, session.SeededRecords(4), nil); err != nil {
		t.Fatal(err)
	}
	sess, err := NewPIRSession(ctx, c, "db", preset, shape, rlwe.NewKeyGenerator(params).GenSecretKeyNew())
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := sess.Get(short, 5); err == nil {
		t.Skip("the query finished within 20 ms: nothing to interrupt on this machine")
	}
	q, err := sess.Get(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := session.SeededRecord(4, shape, 5)
	if !bytes.Equal(q.Record, want) {
		t.Fatal("record 5 differs after an interrupted query")
	}
	if st, err := d.Stats(ctx, &devicepb.StatsRequest{}); err != nil || st.Jobs < 2 {
		t.Fatalf("device stats after the interrupted query: %+v, %v", st, err)
	}
}

// A vector database written through the loader (streamed, objects shared by
// the interleaved stored nodes) gives exact-enough inner products on the
// device: every score within 1e-3 of the plaintext one.
func TestVectorSessionScores(t *testing.T) {
	ctx := context.Background()
	const n, dim = 700, 24 // 700 vectors in 22 plaintexts of 32-coefficient slots
	shape, err := VectorShape("hevec", n, dim)
	if err != nil {
		t.Fatal(err)
	}
	st := openTestStore(t)
	dev, err := device.New(st, device.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewVectorLoader(storeSink(st), "v", shape, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	vecs := make([][]float64, n)
	for i := range vecs {
		vecs[i] = make([]float64, dim)
		for k := range vecs[i] {
			vecs[i][k] = r.Float64()*2 - 1
		}
		if err := l.Add(ctx, vecs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	_, params := fhetest.CKKSParams(t, "hevec")
	sess, err := NewVectorSession(ctx, dev, "v", shape, rlwe.NewKeyGenerator(params).GenSecretKeyNew(), session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q := make([]float64, dim)
	for k := range q {
		q[k] = (r.Float64()*2 - 1) / 8
	}
	got, resp, err := sess.Scores(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		var want float64
		for k := range v {
			want += v[k] * q[k]
		}
		if d := got[i] - want; d > 1e-3 || d < -1e-3 {
			t.Fatalf("score %d: %g, want %g", i, got[i], want)
		}
	}
	if resp.Stored == 0 {
		t.Fatal("the device read no stored plaintexts")
	}
}

// A BGV PIR database is stored in tiles of the device's
// multiply-accumulate lanes (session.PIRTileRows, a constant of the
// loader, which links no code generator): the two agree.
func TestPIRTileRowsAreTheMACLanes(t *testing.T) {
	if session.PIRTileRows != lower.MACLanes {
		t.Fatalf("tiles of %d rows, %d MAC lanes", session.PIRTileRows, lower.MACLanes)
	}
}
