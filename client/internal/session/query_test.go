package session

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// Records come back byte for byte through the device's LWE program, and
// every query reads every stored tile and diagonal once.
func TestLWESessionRecords(t *testing.T) {
	const records, size = 3000, 48
	s, recs, _ := lweDB(t, records, size)
	tileBytes := int64(s.Shape.TileBytes(s.Params))
	diagBytes := int64(s.Shape.Layout(s.Params).Diagonals()) * int64(lwepir.DiagonalWords(s.Params)) * 8
	for _, i := range []int{0, 1, 41, records / 2, records - 1} {
		q, err := s.Get(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(q.Record, recs[i]) {
			t.Fatalf("record %d differs", i)
		}
		if want := int64(s.Shape.Tiles(s.Params))*tileBytes + diagBytes; int64(q.Device.StoreBytes) != want {
			t.Fatalf("read %d bytes from the store, want %d (tiles and diagonals once)", q.Device.StoreBytes, want)
		}
	}
	if _, err := s.Get(context.Background(), s.Shape.Records()); !errors.Is(err, lwepir.ErrIndex) {
		t.Fatalf("record past the end: %v", err)
	}
}

// goodQuery is a valid QueryLWE request of s for record 0.
func goodQuery(t testing.TB, s *LWESession) *devicepb.LWEQueryRequest {
	t.Helper()
	q, _, err := s.client.Query(0)
	if err != nil {
		t.Fatal(err)
	}
	return &devicepb.LWEQueryRequest{Params: s.Params.Name(), Rows: uint32(s.Shape.Rows), Cols: uint64(s.Shape.Cols),
		RecordSize: uint32(s.Shape.RecordSize), Generation: s.gen, Keys: s.keyDir,
		Query: lwepir.MarshalWords(q.Vector), Secret: lwepir.MarshalCiphertext(q.Secret)}
}

// A typed query of another parameter set, an invalid shape or one of
// another database, bytes of the wrong length or out of range, or prefixes
// that name no such objects is refused with a named error; the device
// keeps answering.
func TestLWEQueryRefusesBadRequests(t *testing.T) {
	s, recs, dev := lweDB(t, 200, 32)
	ctx := context.Background()
	if _, err := dev.QueryLWE(ctx, goodQuery(t, s)); err != nil {
		t.Fatalf("a good query: %v", err)
	}
	for name, mutate := range map[string]func(r *devicepb.LWEQueryRequest){
		"unknown parameters": func(r *devicepb.LWEQueryRequest) { r.Params = "fast" },
		"other parameters":   func(r *devicepb.LWEQueryRequest) { r.Params = "default" },
		"rows not a shape":   func(r *devicepb.LWEQueryRequest) { r.Rows = 3 },
		// Twice the rows: a valid shape of another database, not this one's
		// objects.
		"another database's shape": func(r *devicepb.LWEQueryRequest) { r.Rows *= 2 },
		"columns too many":         func(r *devicepb.LWEQueryRequest) { r.Cols *= 2 },
		"no shape":                 func(r *devicepb.LWEQueryRequest) { r.Rows, r.Cols, r.RecordSize = 0, 0, 0 },
		"huge shape":               func(r *devicepb.LWEQueryRequest) { r.Cols = 1 << 40 },
		"no such generation":       func(r *devicepb.LWEQueryRequest) { r.Generation = "db/g9" },
		"no generation":            func(r *devicepb.LWEQueryRequest) { r.Generation = "" },
		"keys as generation":       func(r *devicepb.LWEQueryRequest) { r.Generation = s.keyDir },
		"no such keys":             func(r *devicepb.LWEQueryRequest) { r.Keys = "db/members/me/keys/k/lwe-00/" },
		"tiles as keys":            func(r *devicepb.LWEQueryRequest) { r.Keys = LWETilePrefix(s.gen) },
		"no query":                 func(r *devicepb.LWEQueryRequest) { r.Query = nil },
		"short query":              func(r *devicepb.LWEQueryRequest) { r.Query = r.Query[:len(r.Query)-1] },
		"long query":               func(r *devicepb.LWEQueryRequest) { r.Query = append(r.Query, 0, 0, 0, 0) },
		"no secret":                func(r *devicepb.LWEQueryRequest) { r.Secret = nil },
		"short secret":             func(r *devicepb.LWEQueryRequest) { r.Secret = r.Secret[:len(r.Secret)-8] },
		"secret out of range":      func(r *devicepb.LWEQueryRequest) { copy(r.Secret, bytes.Repeat([]byte{0xff}, 8)) },
	} {
		r := goodQuery(t, s)
		mutate(r)
		_, err := dev.QueryLWE(ctx, r)
		if !errors.Is(err, api.ErrInvalid) && !errors.Is(err, api.ErrNotFound) {
			t.Fatalf("%s: %v, want invalid or not found", name, err)
		}
	}
	if q, err := s.Get(ctx, 7); err != nil || !bytes.Equal(q.Record, recs[7]) {
		t.Fatalf("after bad queries: %v", err)
	}
}

// FuzzLWEQuery mutates a valid query (its bytes, lengths, shape and
// prefixes): the device answers or refuses with a named error, never
// panics, and keeps answering.
func FuzzLWEQuery(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3})
	f.Add([]byte{9, 200, 17, 4, 4, 4})
	f.Add([]byte{255, 0, 255, 0, 128})
	s, recs, dev := lweDB(f, 100, 32)
	f.Fuzz(func(t *testing.T, ops []byte) {
		ctx := context.Background()
		r := goodQuery(t, s)
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i], int(ops[i+1])
			switch op % 8 {
			case 0: // change a query byte
				if len(r.Query) > 0 {
					r.Query[arg*31%len(r.Query)] ^= byte(arg) | 1
				}
			case 1: // change a secret byte
				if len(r.Secret) > 0 {
					r.Secret[arg*131%len(r.Secret)] ^= byte(arg) | 1
				}
			case 2: // shorten the query
				r.Query = r.Query[:len(r.Query)*arg/256]
			case 3: // shorten the secret
				r.Secret = r.Secret[:len(r.Secret)*arg/256]
			case 4: // another shape
				r.Rows, r.Cols = r.Rows<<(arg%3), r.Cols>>(arg%2)
			case 5: // rebind a prefix
				r.Generation = []string{LWETilePrefix(s.gen), s.gen, "db/g1/", "db/members/me/keys/k"}[arg%4]
			case 6: // another record size
				r.RecordSize = uint32(arg)
			case 7: // another key prefix
				r.Keys = []string{s.keyDir, s.gen + "/", "", "db/"}[arg%4]
			}
		}
		if _, err := dev.QueryLWE(ctx, r); err != nil && !errors.Is(err, api.ErrInvalid) && !errors.Is(err, api.ErrNotFound) {
			t.Fatalf("unexpected error: %v", err)
		}
		got, err := s.Get(ctx, 3)
		if err != nil || !bytes.Equal(got.Record, recs[3]) {
			t.Fatalf("after a fuzzed request: %v", err)
		}
	})
}

// tamperDevice rewrites the device's QueryLWE answers.
type tamperDevice struct {
	api.Device
	edit func(*devicepb.LWEQueryResponse)
}

func (d *tamperDevice) QueryLWE(ctx context.Context, req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
	resp, err := d.Device.QueryLWE(ctx, req)
	if err == nil && d.edit != nil {
		d.edit(resp)
	}
	return resp, err
}

// In the packed mode, records come back byte for byte from the loader's
// packer objects through an in-process device, with no key stored on it
// and a packed answer of PackedAnswerBytes; an answer of the wrong size or
// with a column is a malformed answer, never decoded. (An altered packed
// answer of the right size decodes to other bytes: the client's seal
// catches it, client's TestAdversarialDevicePackedAnswer.)
func TestPackedLWESessionRecords(t *testing.T) {
	const records, size = 3000, 48
	p := lwepir.Test()
	want, err := lwepir.NewShape(p, records, size)
	if err != nil {
		t.Fatal(err)
	}
	ring, recs, dev, l := loadLWEDB(t, records, size, func(sink ObjectSink, seed [lwepir.SeedSize]byte) (*LWELoader, error) {
		l, err := NewLWELoader(sink, "db/g1", p, want.Rows, size, seed)
		if err == nil {
			l.StorePacker()
		}
		return l, err
	})
	if l.PackerWritten() == 0 {
		t.Fatal("the loader stored no packer")
	}
	td := &tamperDevice{Device: dev}
	s, err := NewPackedLWESession(td, "db/g1", p, ring.Shape, l.seed)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Packed() || !s.Ready() {
		t.Fatal("a packed session that is not ready")
	}
	ctx := context.Background()
	tileBytes := int64(s.Shape.Tiles(p)) * int64(s.Shape.TileBytes(p))
	for _, i := range []int{0, 1, 41, records / 2, records - 1} {
		q, err := s.Get(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(q.Record, recs[i]) {
			t.Fatalf("record %d differs", i)
		}
		if q.AnswerBytes != int64(lwepir.PackedAnswerBytes(p, s.Shape)) || q.QueryBytes != int64(7*s.Shape.Cols/2+lwepir.PackingKeysBytes(p)) { // 28-bit query words
			t.Fatalf("%d bytes up, %d down", q.QueryBytes, q.AnswerBytes)
		}
		if int64(q.Device.StoreBytes) != tileBytes {
			t.Fatalf("read %d bytes from the store, want the tiles' %d", q.Device.StoreBytes, tileBytes)
		}
	}
	// Both modes answer the same generation.
	if q, err := ring.Get(ctx, 7); err != nil || !bytes.Equal(q.Record, recs[7]) {
		t.Fatalf("the ring stage on a generation with a packer: %v", err)
	}
	for name, edit := range map[string]func(*devicepb.LWEQueryResponse){
		"short":       func(r *devicepb.LWEQueryResponse) { r.Packed = r.Packed[:len(r.Packed)-1] },
		"long":        func(r *devicepb.LWEQueryResponse) { r.Packed = append(r.Packed, 0) },
		"none":        func(r *devicepb.LWEQueryResponse) { r.Packed = nil },
		"with column": func(r *devicepb.LWEQueryResponse) { r.Column = []byte{1, 2, 3, 4} },
	} {
		td.edit = edit
		if _, err := s.Get(ctx, 3); !errors.Is(err, ErrMalformedAnswer) {
			t.Errorf("%s: %v, want ErrMalformedAnswer", name, err)
		}
	}
	td.edit = nil
	if q, err := s.Get(ctx, 3); err != nil || !bytes.Equal(q.Record, recs[3]) {
		t.Fatalf("after bad answers: %v", err)
	}
}
