package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// loadPIR creates and loads an LWE PIR database of n random records of
// size bytes (test parameters) and returns the records.
func loadPIR(t *testing.T, c *client.Client, name string, n, size int, opt client.PIROptions) [][]byte {
	t.Helper()
	ctx := context.Background()
	opt.LWEParams, opt.InsecureParams = "test", true
	if _, err := c.CreatePIR(ctx, name, size, opt); err != nil {
		t.Fatal(err)
	}
	data := records(uint64(n), n, size)
	if _, err := c.Load(ctx, name, bytes.NewReader(data), client.LoadOptions{Records: dataset.FixedSize}); err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, n)
	for i := range out {
		out[i] = data[i*size : (i+1)*size]
	}
	return out
}

// checkRecords reads every record of want with Get (a sample) and all of
// them with GetMany, byte for byte, and checks the manifest's count.
func checkRecords(t *testing.T, c *client.Client, name string, want [][]byte, sample ...int) {
	t.Helper()
	ctx := context.Background()
	in, err := c.Info(ctx, name)
	if err != nil || in.Records != len(want) {
		t.Fatalf("info: %v records, %v; want %d", in.Records, err, len(want))
	}
	for _, i := range sample {
		got, err := c.Get(ctx, name, i)
		if err != nil || !bytes.Equal(got, want[i]) {
			t.Fatalf("get %d: %q, %v; want %q", i, got, err, want[i])
		}
	}
	idx := make([]int, len(want))
	for i := range idx {
		idx[i] = i
	}
	recs, err := c.GetMany(ctx, name, idx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if !bytes.Equal(recs[i], want[i]) {
			t.Fatalf("GetMany: record %d is %q, want %q", i, recs[i], want[i])
		}
	}
	if _, err := c.Get(ctx, name, len(want)); !errors.Is(err, client.ErrIndexOutOfRange) {
		t.Fatalf("get past the end (%d): %v", len(want), err)
	}
}

// Records appended to a PIR database without a reload take the next
// indices, visible to Get and GetMany at once (short ones zero-padded);
// an appended record can be set; Compact folds them into a generation
// that holds them; appends go on after it. Bad appends are refused with
// named errors and change nothing.
func TestPIRAppend(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	const size, n = 40, 90
	want := loadPIR(t, e.c, "db", n, size, client.PIROptions{})
	pad := func(b string) []byte { return append([]byte(b), make([]byte, size-len(b))...) }

	a, err := e.c.Append(ctx, "db", []byte("first appended"), bytes.Repeat([]byte("z"), size))
	if err != nil {
		t.Fatal(err)
	}
	if a.First != n || a.Records != n+2 || a.DeltaOps != 2 {
		t.Fatalf("append: %+v, want first %d, %d records, 2 operations", a, n, n+2)
	}
	want = append(want, pad("first appended"), bytes.Repeat([]byte("z"), size))
	if a, err = e.c.Append(ctx, "db", []byte("third")); err != nil || a.First != n+2 {
		t.Fatalf("append: %+v, %v", a, err)
	}
	want = append(want, pad("third"))
	if _, err := e.c.Set(ctx, "db", n+1, []byte("set after append")); err != nil {
		t.Fatal(err)
	}
	want[n+1] = pad("set after append")
	if _, err := e.c.Set(ctx, "db", 3, []byte("main set")); err != nil {
		t.Fatal(err)
	}
	want[3] = pad("main set")
	checkRecords(t, e.c, "db", want, 0, 3, n-1, n, n+1, n+2)

	// Refused, nothing changed.
	for _, c := range []struct {
		what string
		err  error
		want error
	}{
		{"a record too long", func() error { _, err := e.c.Append(ctx, "db", []byte("ok"), make([]byte, size+1)); return err }(), client.ErrRecordTooLarge},
		{"no record", func() error { _, err := e.c.Append(ctx, "db"); return err }(), nil},
	} {
		if c.err == nil || (c.want != nil && !errors.Is(c.err, c.want)) {
			t.Errorf("%s: %v, want %v", c.what, c.err, c.want)
		}
	}
	if _, err := e.c.CreatePIR(ctx, "empty", size, client.PIROptions{LWEParams: "test", InsecureParams: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Append(ctx, "empty", []byte("x")); !errors.Is(err, client.ErrEmpty) {
		t.Errorf("append to a database never loaded: %v, want ErrEmpty", err)
	}
	if _, err := e.c.CreateKV(ctx, "kv", kvOpts); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Append(ctx, "kv", []byte("x")); !errors.Is(err, client.ErrKind) {
		t.Errorf("append to a kv database: %v, want ErrKind", err)
	}
	checkRecords(t, e.c, "db", want, n+2)

	in, err := e.c.Compact(ctx, "db")
	if err != nil {
		t.Fatal(err)
	}
	if in.Records != n+3 || in.Delta != nil || in.Generation != 2 {
		t.Fatalf("after compaction: %d records, delta %+v, generation %d", in.Records, in.Delta, in.Generation)
	}
	checkRecords(t, e.c, "db", want, n+1, n+2)
	if a, err = e.c.Append(ctx, "db", []byte("after compaction")); err != nil || a.First != n+3 {
		t.Fatalf("append after compaction: %+v, %v", a, err)
	}
	want = append(want, pad("after compaction"))
	checkRecords(t, e.c, "db", want, n+3)
}

// Appends are bounded by the delta's bound: past it Append fails with
// ErrDeltaFull and appends nothing; after a compaction it goes on.
func TestPIRAppendBound(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	const size, bound = 200, 4 << 10
	want := loadPIR(t, e.c, "db", 20, size, client.PIROptions{DeltaMax: bound})
	var err error
	for i := 0; ; i++ {
		rec := bytes.Repeat([]byte{byte(i)}, size)
		if _, err = e.c.Append(ctx, "db", rec); err != nil {
			break
		}
		want = append(want, rec)
	}
	// Each append is an operation of 1+4+8+4+200 bytes after the count.
	if !errors.Is(err, client.ErrDeltaFull) || len(want) != 20+(bound-4)/(1+4+8+4+size) {
		t.Fatalf("after %d appends: %v, want ErrDeltaFull", len(want)-20, err)
	}
	checkRecords(t, e.c, "db", want, len(want)-1)
	if _, err := e.c.Compact(ctx, "db"); err != nil {
		t.Fatal(err)
	}
	rec := bytes.Repeat([]byte("n"), size)
	if _, err := e.c.Append(ctx, "db", rec); err != nil {
		t.Fatal(err)
	}
	checkRecords(t, e.c, "db", append(want, rec), len(want))
}

// appendDuring appends one record through b the first time the
// compaction writes a tile of the new generation.
type appendDuring struct {
	api.Device
	once sync.Once
	b    *client.Client
	err  error
}

func (d *appendDuring) Put(ctx context.Context, req *devicepb.PutRequest) (*devicepb.PutResponse, error) {
	if strings.HasPrefix(req.Name, "db/g2.") {
		d.once.Do(func() { _, d.err = d.b.Append(ctx, "db", []byte("during")) })
	}
	return d.Device.Put(ctx, req)
}

// A record appended while a compaction runs is kept: the new generation
// holds the records appended before, its delta the one appended during.
func TestPIRAppendDuringCompaction(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	const size, n = 40, 50
	want := loadPIR(t, e.c, "db", n, size, client.PIROptions{})
	if _, err := e.c.Append(ctx, "db", []byte("before")); err != nil {
		t.Fatal(err)
	}
	d := &appendDuring{Device: e.c.Device(), b: e.c}
	in, err := client.New(d, e.keys).Compact(ctx, "db")
	if err != nil || d.err != nil {
		t.Fatalf("compaction: %v; append during it: %v", err, d.err)
	}
	if in.Records != n+2 || in.Delta == nil || in.Delta.Appended != 1 || in.Delta.Ops != 1 {
		t.Fatalf("after compaction: %d records, delta %+v", in.Records, in.Delta)
	}
	pad := func(b string) []byte { return append([]byte(b), make([]byte, size-len(b))...) }
	checkRecords(t, e.c, "db", append(want, pad("before"), pad("during")), n, n+1)
}

// The device sees the same requests, of the same sizes, for a Get of an
// appended record, of a record set in the delta and of a record of the
// generation.
func TestPIRAppendWireShape(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	rec := &recorder{Device: e.c.Device()}
	c := client.New(rec, e.keys)
	const size, n = 40, 60
	want := loadPIR(t, c, "db", n, size, client.PIROptions{})
	if _, err := c.Append(ctx, "db", []byte("appended one"), []byte("appended two")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set(ctx, "db", 7, []byte("set")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "db", 0); err != nil { // the session is set up
		t.Fatal(err)
	}
	rec.take()
	seen := map[int][]string{}
	for _, i := range []int{n, 7, 30, n + 1, 0} {
		got, err := c.Get(ctx, "db", i)
		if err != nil {
			t.Fatal(err)
		}
		if i == 30 || i == 0 {
			if !bytes.Equal(got, want[i]) {
				t.Fatalf("get %d: %q", i, got)
			}
		}
		calls := rec.take()
		slicesSort(calls)
		seen[i] = calls
	}
	runs := 0
	for _, s := range seen[30] {
		if strings.HasPrefix(s, "query ") {
			runs++
		}
	}
	if runs == 0 {
		t.Fatalf("a Get asked no query: %v", seen[30])
	}
	for i, calls := range seen {
		if fmt.Sprint(calls) != fmt.Sprint(seen[30]) {
			t.Errorf("get %d:\n%v\nget of a generation's record:\n%v", i, strings.Join(calls, "\n"), strings.Join(seen[30], "\n"))
		}
	}
}

// Through a remote device over TLS, another identity may not append; a
// reader granted the database reads appended records but may not append.
func TestPIRAppendOtherIdentityRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs := tlsUsers(t, "alice", "bob")
	alice, bob := cs["alice"], cs["bob"]
	const size = 40
	want := loadPIR(t, alice, "db", 30, size, client.PIROptions{})
	if _, err := alice.Append(ctx, "db", bytes.Repeat([]byte("a"), size)); err != nil {
		t.Fatal(err)
	}
	want = append(want, bytes.Repeat([]byte("a"), size))
	denied := func(what string, err error) { t.Helper(); wantDenied(t, what, err) }
	_, err := bob.Append(ctx, "db", []byte("bob's"))
	denied("bob's append before a grant", err)
	_, err = bob.Get(ctx, "db", 30)
	denied("bob's get before a grant", err)
	trust(t, bob, alice)
	if err := alice.Grant(ctx, "db", "bob", client.RoleReader, bob.Keys().MemberPublicKey()); err != nil {
		t.Fatal(err)
	}
	if got, err := bob.Get(ctx, "db", 30); err != nil || !bytes.Equal(got, want[30]) {
		t.Fatalf("reader's get of the appended record: %q, %v", got, err)
	}
	_, err = bob.Append(ctx, "db", []byte("bob's"))
	denied("reader's append", err)
	checkRecords(t, alice, "db", want, 30)
}

// wantDenied fails the test unless err is the device's PermissionDenied.
func wantDenied(t *testing.T, what string, err error) {
	t.Helper()
	// The device refuses, or the client first: a reader's key set makes
	// no generation of another's database.
	if err == nil || !strings.Contains(err.Error(), "PermissionDenied") && !errors.Is(err, client.ErrNotKeyOwner) {
		t.Errorf("%s: %v, want PermissionDenied or ErrNotKeyOwner", what, err)
	}
}

// A database created with a column target below the default is laid out
// taller (and so every generation after it), reads back byte for byte, and
// a target outside what decodes is refused at creation.
func TestPIRLogCols(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const n, size = 1024, 64
	for _, c := range []struct {
		name             string
		logCols, written int // asked; recorded in the manifest
		rows, cols       int
	}{ // 80-byte stored records (the seal); a packed-only database of PackV3
		// records lwepir.PackedTargetLogCols for 0.
		{"default", 0, lwepir.PackedTargetLogCols, 128, 1024}, {"tall", 8, 8, 512, 256}} {
		want := loadPIR(t, e.c, c.name, n, size, client.PIROptions{LogCols: c.logCols})
		in, err := e.c.Info(ctx, c.name)
		if err != nil || in.PIR.Rows != c.rows || in.PIR.Cols != c.cols || in.PIR.LogCols != c.written {
			t.Fatalf("%s: %d × %d (log_cols %d), %v; want %d × %d", c.name, in.PIR.Rows, in.PIR.Cols, in.PIR.LogCols, err, c.rows, c.cols)
		}
		checkRecords(t, e.c, c.name, want, 0, 500, n-1)
		// A reload keeps the layout.
		if _, err := e.c.Load(ctx, c.name, bytes.NewReader(records(9, n, size)), client.LoadOptions{Records: dataset.FixedSize}); err != nil {
			t.Fatal(err)
		}
		if in, err := e.c.Info(ctx, c.name); err != nil || in.PIR.Rows != c.rows || in.PIR.Cols != c.cols {
			t.Fatalf("%s reloaded: %d × %d, %v", c.name, in.PIR.Rows, in.PIR.Cols, err)
		}
	}
	// Past the hint's slots (1024 rows at the test parameters) only for a
	// generation without diagonals (the packed mode's default), not for
	// one the ring stage answers.
	const big = 4096 // 320 KiB of stored records: 2^8 columns hold it in 2048 rows
	for _, c := range []struct {
		name       string
		mode       client.LWEMode
		rows, cols int
	}{{"packed-tall", client.LWEPacked, 2048, 256}, {"ring-tall", client.LWERing, 1024, 512}} {
		want := loadPIR(t, e.c, c.name, big, size, client.PIROptions{LogCols: 8, LWEMode: c.mode})
		in, err := e.c.Info(ctx, c.name)
		if err != nil || in.PIR.Rows != c.rows || in.PIR.Cols != c.cols {
			t.Fatalf("%s: %d × %d, %v; want %d × %d", c.name, in.PIR.Rows, in.PIR.Cols, err, c.rows, c.cols)
		}
		for _, i := range []int{0, big/2 + 7, big - 1} {
			if got, err := e.c.Get(ctx, c.name, i); err != nil || !bytes.Equal(got, want[i]) {
				t.Fatalf("%s: get %d: %q, %v; want %q", c.name, i, got, err, want[i])
			}
		}
	}
	for _, logCols := range []int{7, 21} {
		if _, err := e.c.CreatePIR(ctx, "bad", size, client.PIROptions{LWEParams: "test", InsecureParams: true, LogCols: logCols}); !errors.Is(err, lwepir.ErrParams) {
			t.Errorf("a target of 2^%d columns: %v", logCols, err)
		}
	}
}
