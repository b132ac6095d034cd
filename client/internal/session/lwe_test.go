package session

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// lweDB loads random records into a store through LWELoader and opens a
// session on them behind an in-process device.
func lweDB(t testing.TB, records, size int) (*LWESession, [][]byte, *device.Device) {
	t.Helper()
	p := lwepir.Test()
	want, err := lwepir.NewShape(p, records, size)
	if err != nil {
		t.Fatal(err)
	}
	s, recs, dev, _ := loadLWEDB(t, records, size, func(sink ObjectSink, seed [lwepir.SeedSize]byte) (*LWELoader, error) {
		return NewLWELoader(sink, "db/g1", p, want.Rows, size, seed)
	})
	return s, recs, dev
}

// loadLWEDB loads random records through the loader newLoader makes and
// opens a session on them behind an in-process device; it returns the
// loader too.
func loadLWEDB(t testing.TB, records, size int, newLoader func(ObjectSink, [lwepir.SeedSize]byte) (*LWELoader, error)) (*LWESession, [][]byte, *device.Device, *LWELoader) {
	t.Helper()
	p := lwepir.Test()
	st := openTestStore(t)
	ctx := context.Background()
	var seed [lwepir.SeedSize]byte
	rand.Read(seed[:])
	l, err := newLoader(storeSink(st), seed)
	if err != nil {
		t.Fatal(err)
	}
	recs := make([][]byte, records)
	for i := range recs {
		recs[i] = make([]byte, size)
		rand.Read(recs[i])
		if err := l.Add(ctx, recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	shape, err := l.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lim := device.DefaultLimits()
	lim.Workers = 2
	dev, err := device.New(st, lim)
	if err != nil {
		t.Fatal(err)
	}
	sk, err := lwepir.DeriveSecretKey(p, bytes.Repeat([]byte{3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewLWESession(ctx, dev, "db/g1", p, shape, seed, sk, "db/members/me/keys/k", false)
	if err != nil {
		t.Fatal(err)
	}
	return s, recs, dev, l
}

// A loader that is not told the database's size (a stream) lays it out as
// one that is: NewShape's rows for the records it got, stored bytes exactly
// those of that shape, every record read back. Past its pending bound it
// takes the rows of its estimate, or without one those of the largest
// databases, and the records still come back.
func TestLWELoaderOfUnknownSize(t *testing.T) {
	p := lwepir.Test()
	for _, c := range []struct{ records, size, pending, estimate, pastRows int }{
		{1, 48, MaxPendingBytes, 0, 0},
		{7, 5, MaxPendingBytes, 0, 0},
		{300, 48, MaxPendingBytes, 0, 0},
		{3000, 48, MaxPendingBytes, 0, 0},
		{300, 48, 100 * 48, 0, p.HintSlots()}, // past the bound at record 101
		{3000, 48, 100 * 48, 200000, 128},     // NewShape's rows for 200000 records, not 3000's 64
	} {
		t.Run(fmt.Sprintf("%dx%dB/%d/%d", c.records, c.size, c.pending, c.estimate), func(t *testing.T) {
			s, recs, _, l := loadLWEDB(t, c.records, c.size, func(sink ObjectSink, seed [lwepir.SeedSize]byte) (*LWELoader, error) {
				l, err := NewSizedLWELoader(sink, "db/g1", p, c.size, seed, 0, c.estimate)
				if l != nil {
					l.maxPending = c.pending
				}
				return l, err
			})
			want, err := lwepir.NewShape(p, c.records, c.size)
			if err != nil {
				t.Fatal(err)
			}
			if c.pastRows > 0 {
				want.Rows = c.pastRows
			}
			if s.Shape.Rows != want.Rows || l.Records() != c.records {
				t.Fatalf("shape %+v, %d records; want %d rows, %d records", s.Shape, l.Records(), want.Rows, c.records)
			}
			if got := l.Written(); got != s.Shape.StoredBytes(p) {
				t.Fatalf("wrote %d bytes, the shape %+v stores %d", got, s.Shape, s.Shape.StoredBytes(p))
			}
			for _, i := range []int{0, c.records / 2, c.records - 1} {
				q, err := s.Get(context.Background(), i)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(q.Record, recs[i]) {
					t.Fatalf("record %d differs", i)
				}
			}
		})
	}
}

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

// The program the device runs is lower.LWEProgram of the database's shape,
// and it is byte for byte the device segment the compiler plans for the
// same answer (so simulate and reproduce model what runs): the scan and
// the ring stage all in that segment; records come back through it. The
// same program changed (its shape or its nodes) is refused by the device
// with a named error, and the session still answers.
func TestLWEDeviceRunsThePlan(t *testing.T) {
	s, recs, dev := lweDB(t, 300, 48)
	ctx := context.Background()
	prog, err := workload.LWEPIR{Name: "lwepir", Params: s.Params, Shape: s.Shape}.Program()
	if err != nil {
		t.Fatal(err)
	}
	plan, err := compileForRosemary(prog)
	if err != nil {
		t.Fatal(err)
	}
	plan, segIdx := plan.AllOnDevice()
	logN, q, pp, tt, err := s.Params.HintRing()
	if err != nil {
		t.Fatal(err)
	}
	planned, err := plan.StreamSegment(segIdx, lower.Ring{LogN: logN, Q: q, P: pp}, fhe.BGV, tt)
	if err != nil {
		t.Fatal(err)
	}
	seg := plan.Segments[segIdx]
	ops := map[ir.Op]int{}
	for _, v := range seg.Nodes {
		n := plan.Program.Nodes[v]
		ops[n.Op]++
		if n.Op == ir.OpLWEScan && *n.LWE != (ir.LWESpec{Params: "test", Rows: s.Shape.Rows, Cols: s.Shape.Cols, RecordSize: 48}) {
			t.Fatalf("the plan scans database %+v, the session's is %+v", *n.LWE, s.Shape)
		}
	}
	if !seg.OnSSD() || ops[ir.OpLWEScan] != 1 || ops[ir.OpPMult] != s.Shape.Layout(s.Params).R || ops[ir.OpRescale] != 1 {
		t.Fatalf("device segment %v of %v", seg.Device, ops)
	}
	planned.Segment = 0
	plannedRaw, _ := planned.MarshalBinary()
	if sent, _ := s.Stream.MarshalBinary(); !bytes.Equal(sent, plannedRaw) {
		t.Fatalf("the session sends\n%s\nthe compiler plans\n%s", sent, plannedRaw)
	}
	want, err := lower.LWEProgram("lwepir", s.Params, s.Shape)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := s.Stream.MarshalBinary()
	if exp, _ := want.MarshalBinary(); !bytes.Equal(got, exp) {
		t.Fatalf("the session runs\n%s\nnot the answer program\n%s", got, exp)
	}
	for _, i := range []int{0, 151, 299} {
		if q, err := s.Get(ctx, i); err != nil || !bytes.Equal(q.Record, recs[i]) {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	cases := map[string]func(sp *lower.StreamProgram){
		"more rows":     func(sp *lower.StreamProgram) { sp.LWE.Rows = 2 * s.Params.HintSlots() }, // two hint ciphertexts
		"fewer columns": func(sp *lower.StreamProgram) { sp.LWE.Cols -= s.Params.N() },
		"a tile more":   func(sp *lower.StreamProgram) { sp.Nodes[lower.LWETiles].Count++ },
		"no hint":       func(sp *lower.StreamProgram) { sp.Nodes = sp.Nodes[:lower.LWEHint] },
		"hint args": func(sp *lower.StreamProgram) {
			sp.Nodes[lower.LWEHint].Args = []int{lower.LWEQuery, lower.LWEDiagonals}
		},
		"column held":  func(sp *lower.StreamProgram) { sp.Nodes[lower.LWEColumn].Cache = true },
		"another ring": func(sp *lower.StreamProgram) { sp.Ring.Q = sp.Ring.Q[:1] },
	}
	for name, tamper := range cases {
		var sp lower.StreamProgram
		if err := sp.UnmarshalBinary(got); err != nil {
			t.Fatal(err)
		}
		tamper(&sp)
		raw, _ := sp.MarshalBinary()
		_, err := dev.SetStream(ctx, &api.SetStreamRequest{Name: "stream/lwe/" + name, Program: raw})
		if !errors.Is(err, api.ErrInvalid) || !errors.Is(err, lower.ErrStreamProgram) {
			t.Fatalf("%s: %v, want invalid stream program", name, err)
		}
	}
	// Twice the rows keeps this database's node counts: a valid shape of
	// another database, but a query of it over this one's objects refused.
	s.Shape.Rows *= 2
	_, err = s.Get(ctx, 7)
	s.Shape.Rows /= 2
	if !errors.Is(err, api.ErrInvalid) {
		t.Fatalf("a query of another shape over this database: %v, want invalid", err)
	}
	if q, err := s.Get(ctx, 7); err != nil || !bytes.Equal(q.Record, recs[7]) {
		t.Fatalf("after the tampered programs: %v", err)
	}
}

// lweRun is the RunStream form of s's queries (what the device builds
// for QueryLWE): the answer program set on dev, and its key bindings.
func lweRun(t testing.TB, dev api.Device, s *LWESession) (string, []api.KeyBinding) {
	t.Helper()
	name, _, err := setStream(context.Background(), dev, "lwe", s.Stream)
	if err != nil {
		t.Fatal(err)
	}
	var keys []api.KeyBinding
	for _, r := range s.Shape.Layout(s.Params).Rotations() {
		keys = append(keys, api.KeyBinding{Key: lower.LWEKey(r), Object: s.keyDir + lower.LWEKey(r)})
	}
	return name, keys
}

// A typed query of another parameter set, an invalid shape, or prefixes
// that name no such objects is refused with a named error; the device
// keeps answering.
func TestLWEQueryRefusesBadRequests(t *testing.T) {
	s, recs, dev := lweDB(t, 200, 32)
	ctx := context.Background()
	good := func() *api.LWEQueryRequest {
		q, _, err := s.client.Query(0)
		if err != nil {
			t.Fatal(err)
		}
		r := &api.LWEQueryRequest{Params: s.Params.Name(), Rows: s.Shape.Rows, Cols: s.Shape.Cols, RecordSize: s.Shape.RecordSize,
			Generation: s.gen, Keys: s.keyDir, Secret: lwepir.Limbs(q.Secret)}
		for _, w := range lwepir.PackWords(q.Vector, s.Params.HintSlots()) {
			r.Query = append(r.Query, [][]uint64{w})
		}
		return r
	}
	if _, err := dev.QueryLWE(ctx, good()); err != nil {
		t.Fatalf("a good query: %v", err)
	}
	for name, mutate := range map[string]func(r *api.LWEQueryRequest){
		"unknown parameters": func(r *api.LWEQueryRequest) { r.Params = "fast" },
		"other parameters":   func(r *api.LWEQueryRequest) { r.Params = "default" },
		"rows not a shape":   func(r *api.LWEQueryRequest) { r.Rows = 3 },
		"columns too many":   func(r *api.LWEQueryRequest) { r.Cols *= 2 },
		"no such generation": func(r *api.LWEQueryRequest) { r.Generation = "db/g9" },
		"no such keys":       func(r *api.LWEQueryRequest) { r.Keys = "db/members/me/keys/k/lwe-00/" },
		"no query":           func(r *api.LWEQueryRequest) { r.Query = nil },
		"short limb":         func(r *api.LWEQueryRequest) { r.Query[0][0] = r.Query[0][0][:5] },
		"no secret":          func(r *api.LWEQueryRequest) { r.Secret = nil },
	} {
		r := good()
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

// Malformed requests to an LWE program are refused with ErrInvalid and
// the device keeps answering.
func TestLWEDeviceRefusesBadRequests(t *testing.T) {
	s, recs, dev := lweDB(t, 200, 32)
	ctx := context.Background()
	prog, keys := lweRun(t, dev, s)
	good := func() *api.RunStreamRequest {
		q, _, err := s.client.Query(0)
		if err != nil {
			t.Fatal(err)
		}
		qv := []api.StreamValues{{Node: lower.LWEQuery}}
		for _, w := range lwepir.PackWords(q.Vector, s.Params.HintSlots()) {
			qv[0].Instances = append(qv[0].Instances, [][]uint64{w})
		}
		qv = append(qv, api.StreamValues{Node: lower.LWESecret, Instances: [][][]uint64{lwepir.Limbs(q.Secret)}})
		return &api.RunStreamRequest{Program: prog, Inputs: qv,
			Stored: []api.StoredBinding{{Node: lower.LWETiles, Prefix: LWETilePrefix(s.gen), PerObject: 1},
				{Node: lower.LWEDiagonals, Prefix: LWEDiagonalPrefix(s.gen), PerObject: 1}},
			Keys: append([]api.KeyBinding(nil), keys...)}
	}
	cases := map[string]func(r *api.RunStreamRequest){
		"short query":    func(r *api.RunStreamRequest) { r.Inputs[0].Instances = r.Inputs[0].Instances[:0] },
		"short limb":     func(r *api.RunStreamRequest) { r.Inputs[0].Instances[0][0] = r.Inputs[0].Instances[0][0][:5] },
		"secret too big": func(r *api.RunStreamRequest) { r.Inputs[1].Instances[0][0][0] = ^uint64(0) },
		"secret missing": func(r *api.RunStreamRequest) { r.Inputs = r.Inputs[:1] },
		"wrong node":     func(r *api.RunStreamRequest) { r.Inputs[1].Node = lower.LWEColumn },
		"per object":     func(r *api.RunStreamRequest) { r.Stored[0].PerObject = 2 },
		"tiles as diags": func(r *api.RunStreamRequest) { r.Stored[1].Prefix = LWETilePrefix(s.gen) },
		"unknown key":    func(r *api.RunStreamRequest) { r.Keys[0].Key = "gal:5" },
		"swapped keys":   func(r *api.RunStreamRequest) { r.Keys[0].Object, r.Keys[1].Object = r.Keys[1].Object, r.Keys[0].Object },
		"tile as key":    func(r *api.RunStreamRequest) { r.Keys[0].Object = api.StoredObjectName(LWETilePrefix(s.gen), 0) },
		"no such prefix": func(r *api.RunStreamRequest) { r.Stored[0].Prefix = "db/g9/lwe/t" },
	}
	for name, mutate := range cases {
		r := good()
		mutate(r)
		_, err := dev.RunStream(ctx, r)
		if err == nil {
			t.Fatalf("%s: accepted", name)
		}
		if !errors.Is(err, api.ErrInvalid) && !errors.Is(err, api.ErrNotFound) {
			t.Fatalf("%s: %v, want invalid or not found", name, err)
		}
	}
	q, err := s.Get(ctx, 7)
	if err != nil || !bytes.Equal(q.Record, recs[7]) {
		t.Fatalf("after bad requests: %v", err)
	}
}

// FuzzLWERequest mutates a valid LWE answer request (values, lengths, node
// numbers, key names, prefixes): the device answers or refuses with a named
// error, never panics, and keeps answering.
func FuzzLWERequest(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3})
	f.Add([]byte{9, 200, 17, 4, 4, 4})
	f.Add([]byte{255, 0, 255, 0, 128})
	s, recs, dev := lweDB(f, 100, 32)
	prog, keys := lweRun(f, dev, s)
	f.Fuzz(func(t *testing.T, ops []byte) {
		ctx := context.Background()
		q, _, err := s.client.Query(1)
		if err != nil {
			t.Fatal(err)
		}
		r := &api.RunStreamRequest{Program: prog,
			Inputs: []api.StreamValues{{Node: lower.LWEQuery}, {Node: lower.LWESecret, Instances: [][][]uint64{lwepir.Limbs(q.Secret)}}},
			Stored: []api.StoredBinding{{Node: lower.LWETiles, Prefix: LWETilePrefix(s.gen), PerObject: 1},
				{Node: lower.LWEDiagonals, Prefix: LWEDiagonalPrefix(s.gen), PerObject: 1}},
			Keys: append([]api.KeyBinding(nil), keys...)}
		for _, w := range lwepir.PackWords(q.Vector, s.Params.HintSlots()) {
			r.Inputs[0].Instances = append(r.Inputs[0].Instances, [][]uint64{w})
		}
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i], int(ops[i+1])
			in := &r.Inputs[int(op)%len(r.Inputs)]
			switch op % 8 {
			case 0: // change a value
				if len(in.Instances) > 0 && len(in.Instances[0]) > 0 && len(in.Instances[0][0]) > arg {
					in.Instances[0][0][arg] = uint64(arg) << (arg % 64)
				}
			case 1: // drop instances
				in.Instances = in.Instances[:min(len(in.Instances), arg%3)]
			case 2: // shorten a limb
				if len(in.Instances) > 0 && len(in.Instances[0]) > 0 {
					in.Instances[0][0] = in.Instances[0][0][:min(len(in.Instances[0][0]), arg)]
				}
			case 3: // renumber a node
				in.Node = arg % 8
			case 4: // rename a key
				if len(r.Keys) > 0 {
					r.Keys[arg%len(r.Keys)].Key = lower.LWEKey(arg)
				}
			case 5: // rebind a stored node
				r.Stored[arg%2].Prefix = []string{LWETilePrefix(s.gen), LWEDiagonalPrefix(s.gen), "db/g1/", "db/members/me/keys/k"}[arg%4]
			case 6: // drop limbs of an instance
				if len(in.Instances) > 0 {
					in.Instances[0] = in.Instances[0][:min(len(in.Instances[0]), arg%5)]
				}
			case 7: // duplicate an input
				r.Inputs = append(r.Inputs, *in)
			}
		}
		if _, err := dev.RunStream(ctx, r); err != nil && !errors.Is(err, api.ErrInvalid) && !errors.Is(err, api.ErrNotFound) {
			t.Fatalf("unexpected error: %v", err)
		}
		got, err := s.Get(ctx, 3)
		if err != nil || !bytes.Equal(got.Record, recs[3]) {
			t.Fatalf("after a fuzzed request: %v", err)
		}
	})
}
