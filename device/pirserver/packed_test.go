package pirserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/device/admit"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// packedDB is a generation stored for the packed mode only: its tiles and
// its packer's objects, laid out as objname.LWEPacker says (the client's
// loader writes the same; its tests query through a device).
type packedDB struct {
	p     lwepir.Params
	shape lwepir.Shape
	gen   string
	tiles [][]byte
	seed  [lwepir.SeedSize]byte
	st    *store.Store
	srv   *Server
	dir   string // the store's
}

func newPackedDB(t *testing.T, limbsPerObject int) *packedDB {
	t.Helper()
	return newPackedDBOn(t, limbsPerObject, layout.Layout{Channels: 1, PageSize: 4096})
}

// newPackedDBOn is newPackedDB on a store of layout lay.
func newPackedDBOn(t *testing.T, limbsPerObject int, lay layout.Layout) *packedDB {
	t.Helper()
	p := lwepir.Test()
	n := p.N()
	shape := lwepir.Shape{Rows: 2 * n, Cols: 2 * n, RecordSize: 8}
	dir := t.TempDir()
	db := &packedDB{p: p, shape: shape, gen: "db/g1.ab", dir: dir}
	rand.Read(db.seed[:])
	st, err := store.Open(dir, lay)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	db.st = st
	mem := make(lwepir.MemTiles, shape.Tiles(p))
	for k := range mem {
		mem[k] = make([]byte, shape.TileBytes(p))
		rand.Read(mem[k])
		sh := object.Shape{Polys: 1, Limbs: 1, LogN: uint8(bits.Len(uint(len(mem[k])/8)) - 1), WordSize: 8}
		if _, err := st.Put(objname.Stored(objname.LWETiles(db.gen), int64(k)), object.KindPlaintext, sh, [][]byte{mem[k]}); err != nil {
			t.Fatal(err)
		}
	}
	db.tiles = mem
	h, err := lwepir.ComputeHint(context.Background(), p, shape, db.seed, mem)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := lwepir.NewPacker(context.Background(), p, shape, db.seed, h)
	if err != nil {
		t.Fatal(err)
	}
	var polys [][]byte
	j := int64(0)
	flush := func() {
		if len(polys) == 0 {
			return
		}
		sh := object.Shape{Polys: 1, Limbs: len(polys), LogN: uint8(bits.Len(uint(n)) - 1), WordSize: 8}
		if _, err := st.Put(objname.Stored(objname.LWEPacker(db.gen), j), object.KindPlaintext, sh, polys); err != nil {
			t.Fatal(err)
		}
		j++
		polys = nil
	}
	add := func(w func(c int) uint64) {
		b := make([]byte, 8*n)
		for c := range n {
			binary.LittleEndian.PutUint64(b[8*c:], w(c))
		}
		polys = append(polys, b)
		if len(polys) == limbsPerObject {
			flush()
		}
	}
	for k := range pk.Packs() {
		f := pk.Factors(k)
		for off := 0; off < len(f); off += n {
			add(func(c int) uint64 { return f[off+c] })
		}
		a := pk.AParts(k)
		add(func(c int) uint64 { return uint64(a[c]) })
	}
	flush()
	db.srv = New(Config{Store: st, Runs: admit.New(admit.Limits{Slots: 2}), Cores: admit.NewCores(2), Workers: 2,
		RunTimeout: time.Minute, EnterISP: func() {}, LeaveISP: func() {}})
	return db
}

func (db *packedDB) request(t *testing.T, col int) (*devicepb.LWEQueryRequest, *lwepir.Client, *lwepir.State) {
	t.Helper()
	return db.requestWith(t, db.p, col)
}

// packingKeys are a fresh query's packing keys for column col.
func (db *packedDB) packingKeys(t *testing.T, col int) *lwepir.PackingKeys {
	t.Helper()
	cl, err := lwepir.NewPackedClient(db.p, db.shape, db.seed)
	if err != nil {
		t.Fatal(err)
	}
	q, _, err := cl.PackedQuery(col)
	if err != nil {
		t.Fatal(err)
	}
	return q.Keys
}

// queryColumn asks the device for column col in one packed query and
// checks that the answer decodes to it; it returns the request.
func (db *packedDB) queryColumn(t *testing.T, col int) *devicepb.LWEQueryRequest {
	t.Helper()
	req, cl, st := db.request(t, col)
	resp, err := db.srv.Query(context.Background(), "alice", req)
	if err != nil {
		t.Fatal(err)
	}
	ans, err := lwepir.UnmarshalPackedAnswer(db.p, db.shape, resp.GetPacked())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := cl.DecodePacked(st, ans); err != nil || !bytes.Equal(got, db.column(col)) {
		t.Fatalf("column %d does not decode (%v)", col, err)
	}
	return req
}

// requestWith is request under parameters p (another packing version).
func (db *packedDB) requestWith(t *testing.T, p lwepir.Params, col int) (*devicepb.LWEQueryRequest, *lwepir.Client, *lwepir.State) {
	t.Helper()
	cl, err := lwepir.NewPackedClient(p, db.shape, db.seed)
	if err != nil {
		t.Fatal(err)
	}
	q, st, err := cl.PackedQuery(col)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := lwepir.MarshalPackingKeys(p, q.Keys)
	if err != nil {
		t.Fatal(err)
	}
	return &devicepb.LWEQueryRequest{Params: p.Name(), Rows: uint32(db.shape.Rows), Cols: uint64(db.shape.Cols),
		RecordSize: uint32(db.shape.RecordSize), Generation: db.gen, Query: lwepir.MarshalQuery(p, q.Vector), PackingKeys: keys,
		Packing: uint32(p.Packing)}, cl, st
}

// column is column col of the stored matrix.
func (db *packedDB) column(col int) []byte {
	n := db.p.N()
	out := make([]byte, db.shape.Rows)
	for r := range out {
		out[r] = db.tiles[col/n][r*n+col%n]
	}
	return out
}

// A packed query through the device decodes to the stored column, with the
// packer read from objects of several sizes (a last object shorter), and
// reused from the cache for the next query.
func TestQueryPackedDecodesColumns(t *testing.T) {
	for _, limbs := range []int{objname.LWEPackerLimbs, 7} {
		db := newPackedDB(t, limbs)
		for _, col := range []int{0, 3, db.shape.Cols - 1} {
			req, cl, st := db.request(t, col)
			resp, err := db.srv.Query(context.Background(), "alice", req)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.GetColumn()) != 0 || len(resp.GetHint()) != 0 {
				t.Fatal("a packed answer carries a column or a hint")
			}
			if len(resp.GetPacked()) != lwepir.PackedAnswerBytes(db.p, db.shape) {
				t.Fatalf("a packed answer of %d bytes", len(resp.GetPacked()))
			}
			ans, err := lwepir.UnmarshalPackedAnswer(db.p, db.shape, resp.GetPacked())
			if err != nil {
				t.Fatal(err)
			}
			got, err := cl.DecodePacked(st, ans)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, db.column(col)) {
				t.Fatalf("column %d differs", col)
			}
		}
		if len(db.srv.packers.m) != 1 {
			t.Fatalf("%d packers kept, want 1", len(db.srv.packers.m))
		}
	}
}

// Malformed packed requests are refused as invalid (gRPC InvalidArgument)
// before any key is decoded or object read; a generation without packer
// objects is NotFound.
func TestQueryPackedRefusesMalformed(t *testing.T) {
	db := newPackedDB(t, objname.LWEPackerLimbs)
	ctx := context.Background()
	for name, edit := range map[string]func(r *devicepb.LWEQueryRequest){
		"short keys": func(r *devicepb.LWEQueryRequest) { r.PackingKeys = r.PackingKeys[:len(r.PackingKeys)-1] },
		"long keys":  func(r *devicepb.LWEQueryRequest) { r.PackingKeys = append(r.PackingKeys, 0) },
		"keys of ones": func(r *devicepb.LWEQueryRequest) {
			r.PackingKeys = bytes.Repeat([]byte{0xff}, len(r.PackingKeys))
		},
		"with galois keys":  func(r *devicepb.LWEQueryRequest) { r.Keys = "db/members/a/keys/k/lwe-ab/" },
		"with a secret":     func(r *devicepb.LWEQueryRequest) { r.Secret = []byte{1, 2, 3} },
		"short query":       func(r *devicepb.LWEQueryRequest) { r.Query = r.Query[:len(r.Query)-4] },
		"packing version 4": func(r *devicepb.LWEQueryRequest) { r.Packing = 4 },
		// 259 would read as 3 if it were truncated to a byte.
		"packing version 259": func(r *devicepb.LWEQueryRequest) { r.Packing = 259 },
	} {
		req, _, _ := db.request(t, 1)
		edit(req)
		_, err := db.srv.Query(ctx, "alice", req)
		if !errors.Is(err, api.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	// A request of another packing version, well formed for it: its keys
	// are of PackV1's or PackV2's size, the stored packer is PackV3's.
	for _, v := range []lwepir.PackVersion{lwepir.PackV1, lwepir.PackV2} {
		pv, err := db.p.WithPacking(v)
		if err != nil {
			t.Fatal(err)
		}
		reqV, _, _ := db.requestWith(t, pv, 1)
		_, err = db.srv.Query(ctx, "alice", reqV)
		t.Logf("a PackV%d request on a PackV3 packer: %v", v, err)
		if !errors.Is(err, api.ErrInvalid) {
			t.Errorf("a PackV%d request on a PackV3 packer: %v, want ErrInvalid", v, err)
		}
	}
	// The device keeps serving the right version.
	req := db.queryColumn(t, 1)
	req.Generation = "db/g2.cd"
	if _, err := db.srv.Query(ctx, "alice", req); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("a generation without objects: %v, want ErrNotFound", err)
	}
	// Tiles there, packer objects not: NotFound too, and nothing kept.
	for k, tile := range db.tiles {
		sh := object.Shape{Polys: 1, Limbs: 1, LogN: uint8(bits.Len(uint(len(tile)/8)) - 1), WordSize: 8}
		if _, err := db.st.Put(objname.Stored(objname.LWETiles("db/g3.ef"), int64(k)), object.KindPlaintext, sh, [][]byte{tile}); err != nil {
			t.Fatal(err)
		}
	}
	req.Generation = "db/g3.ef"
	if _, err := db.srv.Query(ctx, "alice", req); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("a generation without packer objects: %v, want ErrNotFound", err)
	}
	if len(db.srv.packers.m) != 1 {
		t.Fatalf("%d packers kept, want the one that opened", len(db.srv.packers.m))
	}
}

// FuzzCheckPackedRequest: whatever the bytes of a packed request's keys,
// the device's check refuses them as invalid or decodes keys of the
// parameters' size, and never panics.
func FuzzCheckPackedRequest(f *testing.F) {
	p := lwepir.Test()
	n := p.N()
	shape := lwepir.Shape{Rows: n, Cols: n, RecordSize: 8}
	var seed [lwepir.SeedSize]byte
	cl, err := lwepir.NewPackedClient(p, shape, seed)
	if err != nil {
		f.Fatal(err)
	}
	q, _, err := cl.PackedQuery(0)
	if err != nil {
		f.Fatal(err)
	}
	good, err := lwepir.MarshalPackingKeys(p, q.Keys)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good, "", []byte(nil))
	f.Add(good[:10], "", []byte(nil))
	f.Add(bytes.Repeat([]byte{0xff}, len(good)), "", []byte(nil))
	f.Add(good, "k/", []byte{1})
	f.Fuzz(func(t *testing.T, keys []byte, galois string, secret []byte) {
		req := &devicepb.LWEQueryRequest{PackingKeys: keys, Keys: galois, Secret: secret}
		k, err := checkPackedRequest(p, req)
		if err != nil {
			if !errors.Is(err, api.ErrInvalid) {
				t.Fatalf("refused with %v, not ErrInvalid", err)
			}
			return
		}
		if k == nil || len(keys) != lwepir.PackingKeysBytes(p) || galois != "" || len(secret) != 0 {
			t.Fatal("accepted a request it should refuse")
		}
	})
}

// The cache keeps at most maxPackers generations, dropping the oldest, and
// trimming by bytes never drops the one just loaded.
func TestPackerCacheBounded(t *testing.T) {
	db := newPackedDB(t, objname.LWEPackerLimbs)
	ctx := context.Background()
	pk, done, err := db.srv.packer(ctx, db.gen, db.p, db.shape)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	if pk.PrecomputedBytes() <= 0 {
		t.Fatal("a loaded packer of no bytes")
	}
	c := &db.srv.packers
	for i := range maxPackers + 2 {
		key := string(rune('a' + i))
		c.mu.Lock()
		c.add(key, &packerEntry{ready: make(chan struct{}), pk: pk})
		c.trim(key)
		c.mu.Unlock()
	}
	if len(c.m) != maxPackers || len(c.order) != maxPackers {
		t.Fatalf("%d packers kept (%d in order), want %d", len(c.m), len(c.order), maxPackers)
	}
}

// A packer is used in place from the store's mappings where the pages cut
// its polynomials in whole pieces (several channels: a polynomial's pages
// lie in different files), read into memory where they do not; either way
// its queries decode. A mapped packer that leaves the cache while a query
// holds it keeps its mappings until that query is done.
func TestPackerInPlace(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		lay    layout.Layout
		mapped bool
	}{
		{layout.Layout{Channels: 4, PageSize: 512}, true},   // 4 pages a polynomial (N = 256)
		{layout.Layout{Channels: 3, PageSize: 2048}, true},  // one
		{layout.Layout{Channels: 1, PageSize: 4096}, false}, // a page larger than a polynomial
	} {
		db := newPackedDBOn(t, 7, tc.lay)
		for _, col := range []int{0, db.shape.Cols - 1} {
			db.queryColumn(t, col)
		}
		pk, done, err := db.srv.packer(ctx, db.gen, db.p, db.shape)
		if err != nil {
			t.Fatal(err)
		}
		c := &db.srv.packers
		c.mu.Lock()
		var e *packerEntry
		for _, v := range c.m {
			e = v
		}
		mapped := e.unmap != nil
		c.mu.Unlock()
		if mapped != tc.mapped || (pk.Factors(0) == nil) != tc.mapped {
			t.Fatalf("%+v: mapped %v (factors in memory %v), want %v", tc.lay, mapped, pk.Factors(0) != nil, tc.mapped)
		}
		// Pushed out of the cache while held: still mapped, and usable.
		for i := range maxPackers {
			c.mu.Lock()
			c.add(string(rune('a'+i)), &packerEntry{ready: make(chan struct{})})
			c.mu.Unlock()
		}
		c.mu.Lock()
		held, dropped := e.unmap != nil, e.dropped
		c.mu.Unlock()
		if !dropped || held != tc.mapped {
			t.Fatalf("%+v: out of the cache: dropped %v, mappings kept %v", tc.lay, dropped, held)
		}
		if _, err := pk.Prepare(ctx, []*lwepir.PackingKeys{db.packingKeys(t, 1)}, 1, nil); err != nil {
			t.Fatal(err)
		}
		done()
		done() // once only
		c.mu.Lock()
		left := e.unmap != nil
		c.mu.Unlock()
		if left {
			t.Fatalf("%+v: the mappings outlive the last query", tc.lay)
		}
	}
}

// A store file cut short under a packer used in place: the packing's
// reads fault on its workers' goroutines, and each fault is a named error
// (store.ErrCorrupt), not a crash of the device.
func TestPackerInPlaceFileCutShort(t *testing.T) {
	ctx := context.Background()
	db := newPackedDBOn(t, 7, layout.Layout{Channels: 2, PageSize: 512})
	pk, done, err := db.srv.packer(ctx, db.gen, db.p, db.shape)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	if pk.Factors(0) != nil {
		t.Fatal("the packer is not used in place")
	}
	keys := db.packingKeys(t, 1)
	for ch := range 2 {
		if err := os.Truncate(filepath.Join(db.dir, fmt.Sprintf("ch%02d", ch)), 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, workers := range []int{1, 2} {
		if _, err := pk.Prepare(ctx, []*lwepir.PackingKeys{keys, keys, keys}, workers, nil); !errors.Is(err, store.ErrCorrupt) {
			t.Fatalf("%d workers: %v, want store.ErrCorrupt", workers, err)
		}
	}
}

// Queries that open, use and release a packer in place while others push
// it out of the cache and it is opened again: every query's packing is
// the same, and none reads a packer after its mappings are gone (a read
// of unmapped pages would fault: the test fails with the fault's error or
// crashes).
func TestPackerInPlaceEvictedUnderQueries(t *testing.T) {
	ctx := context.Background()
	db := newPackedDBOn(t, 7, layout.Layout{Channels: 2, PageSize: 512})
	keys := db.packingKeys(t, 1)
	pk, done, err := db.srv.packer(ctx, db.gen, db.p, db.shape)
	if err != nil {
		t.Fatal(err)
	}
	want, err := pk.Prepare(ctx, []*lwepir.PackingKeys{keys}, 1, nil)
	done()
	if err != nil {
		t.Fatal(err)
	}
	wantAns, err := pk.Finish(want[0], 0, make([]uint32, db.shape.Rows))
	if err != nil {
		t.Fatal(err)
	}
	c := &db.srv.packers
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			c.mu.Lock()
			c.add(fmt.Sprint("evict", i), &packerEntry{ready: make(chan struct{})})
			c.mu.Unlock()
		}
	})
	errs := make(chan error, 4)
	var queries sync.WaitGroup
	for range 4 {
		queries.Go(func() {
			for range 8 {
				pk, done, err := db.srv.packer(ctx, db.gen, db.p, db.shape)
				if err != nil {
					errs <- err
					return
				}
				err = faultsAsErrors(func() error {
					got, err := pk.Prepare(ctx, []*lwepir.PackingKeys{keys}, 2, nil)
					if err != nil {
						return err
					}
					ans, err := pk.Finish(got[0], 0, make([]uint32, db.shape.Rows))
					if err != nil {
						return err
					}
					if fmt.Sprint(ans.B) != fmt.Sprint(wantAns.B) {
						return fmt.Errorf("a packing differs")
					}
					return nil
				})
				done()
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	queries.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// A kept packer whose generation is deleted (a compaction, a drop) is
// dropped at the next lookup and its mappings released, so that the store
// can reclaim its pages; a query using it meanwhile keeps it to its end.
func TestPackerDroppedWithItsGeneration(t *testing.T) {
	db := newPackedDBOn(t, 7, layout.Layout{Channels: 4, PageSize: 512}) // mapped: 4 pages a polynomial
	ctx := context.Background()
	req, _, _ := db.request(t, 3)
	if _, err := db.srv.Query(ctx, "alice", req); err != nil {
		t.Fatal(err)
	}
	if len(db.srv.packers.m) != 1 {
		t.Fatalf("%d packers kept, want 1", len(db.srv.packers.m))
	}
	var kept *packerEntry
	for _, e := range db.srv.packers.m {
		kept = e
	}
	if kept.unmap == nil {
		t.Fatal("the packer was read, not mapped")
	}
	// A query holds the packer while its generation is deleted.
	pk, done, err := db.srv.packer(ctx, db.gen, db.p, db.shape)
	if err != nil || pk == nil {
		t.Fatal(err)
	}
	infos, err := db.st.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if strings.HasPrefix(in.Name, db.gen+"/") {
			if err := db.st.Delete(in.Name); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The next lookup (here the deleted generation's own, which fails)
	// drops the stale packer; its mappings wait for the query holding it.
	if _, err := db.srv.Query(ctx, "alice", req); !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("a query of the deleted generation: %v, want ErrNotFound", err)
	}
	db.srv.packers.mu.Lock()
	n, dropped, mapped := len(db.srv.packers.m), kept.dropped, kept.unmap != nil
	db.srv.packers.mu.Unlock()
	if n != 0 || !dropped || !mapped {
		t.Fatalf("after the deletion: %d packers kept, dropped %v, still mapped %v; want 0, true, true", n, dropped, mapped)
	}
	// The query still using it reads every factor from its pages, and
	// then releases it.
	if ps, err := pk.Prepare(ctx, []*lwepir.PackingKeys{db.packingKeys(t, 3)}, 1, nil); err != nil || len(ps) != 1 {
		t.Fatalf("packing from the dropped packer: %v", err)
	}
	done()
	db.srv.packers.mu.Lock()
	mapped = kept.unmap != nil
	db.srv.packers.mu.Unlock()
	if mapped {
		t.Fatal("the dropped packer stays mapped after its last query")
	}
}
