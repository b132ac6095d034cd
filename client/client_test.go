package client_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/client/programs"
	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// records makes n seeded records of size bytes, back to back.
func records(seed uint64, n, size int) []byte {
	b := make([]byte, n*size)
	r := rand.New(rand.NewPCG(seed, 9))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

type env struct {
	dir  string
	keys *client.Keys
	c    *client.Client
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	keys, err := client.NewKeys(filepath.Join(dir, "keys"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := openStore(filepath.Join(dir, "store"), keys)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &env{dir: dir, keys: keys, c: c.Client}
}

// storeClient is a client of a device in this process over a store
// directory; Close closes the store too.
type storeClient struct {
	*client.Client
	st *store.Store
}

func openStore(dir string, keys *client.Keys) (*storeClient, error) {
	st, err := store.Open(dir, layout.Layout{})
	if err != nil {
		return nil, err
	}
	d, err := device.New(st, device.DefaultLimits())
	if err != nil {
		st.Close()
		return nil, err
	}
	return &storeClient{Client: client.New(d, keys).WithPrograms(programs.New()), st: st}, nil
}

func (c *storeClient) Close() error { return errors.Join(c.Client.Close(), c.st.Close()) }

// A user's own records, loaded from a file of fixed-size records into a
// database the plan scans on the device, come back byte for byte; a second
// load replaces them atomically and removes the first generation.
func TestLoadGetReload(t *testing.T) {
	for _, c := range []struct {
		scheme     client.PIRScheme
		rows, cols int
	}{
		// LWE: 64-byte records sealed to 92, one per column of 128 rows.
		{client.SchemeLWE, 128, 256 * 1024},
		// BGV: sealed to 80: 2048 plaintexts, 8 × 256.
		{client.SchemeBGV, 8, 256},
	} {
		t.Run(string(c.scheme), func(t *testing.T) { testLoadGetReload(t, c.scheme, c.rows, c.cols) })
	}
}

func testLoadGetReload(t *testing.T, scheme client.PIRScheme, rows, cols int) {
	ctx := context.Background()
	e := newEnv(t)
	const size, n = 64, 256 * 1024
	if _, err := e.c.CreatePIR(ctx, "db", size, client.PIROptions{Scheme: scheme}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.CreatePIR(ctx, "db", size, client.PIROptions{Scheme: scheme}); !errors.Is(err, client.ErrExists) {
		t.Fatalf("second create: %v, want ErrExists", err)
	}
	if _, err := e.c.Get(ctx, "db", 0); !errors.Is(err, client.ErrEmpty) {
		t.Fatalf("get before load: %v, want ErrEmpty", err)
	}
	data := records(1, n, size)
	in, err := e.c.Load(ctx, "db", bytes.NewReader(data), client.LoadOptions{Records: dataset.FixedSize})
	if err != nil {
		t.Fatal(err)
	}
	if in.Records != n || in.Generation != 1 || in.Matrix().Rows != rows || in.Matrix().Cols != cols || !in.Sealed {
		t.Fatalf("loaded %+v", in)
	}
	for _, i := range []int{0, n - 1, 777, 65536} {
		q, err := e.c.GetQuery(ctx, "db", i)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(q.Record, data[i*size:(i+1)*size]) {
			t.Fatalf("record %d differs", i)
		}
		if q.Device == nil {
			t.Fatalf("record %d: the plan scanned on the host", i)
		}
	}
	if _, err := e.c.Get(ctx, "db", n); !errors.Is(err, client.ErrIndexOutOfRange) {
		t.Fatalf("index past the end: %v", err)
	}
	keysBefore := countObjects(t, e.c, "db/keys/")

	data2 := records(2, n/2, size)
	in, err = e.c.Load(ctx, "db", bytes.NewReader(data2), client.LoadOptions{Records: dataset.FixedSize})
	if err != nil {
		t.Fatal(err)
	}
	if in.Generation != 2 || in.Records != n/2 {
		t.Fatalf("reloaded %+v", in)
	}
	got, err := e.c.Get(ctx, "db", 1234)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data2[1234*size:1235*size]) {
		t.Fatal("record 1234 of the second load differs")
	}
	if n := countObjects(t, e.c, "db/g1"); n != 0 {
		t.Fatalf("%d objects of generation 1 left after generation 2 was published", n)
	}
	if after := countObjects(t, e.c, "db/keys/"); after != keysBefore {
		t.Fatalf("evaluation keys: %d objects, then %d (uploaded again)", keysBefore, after)
	}
	if err := e.c.Drop(ctx, "db"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Info(ctx, "db"); !errors.Is(err, client.ErrNoDatabase) {
		t.Fatalf("info after drop: %v", err)
	}
	if n := countObjects(t, e.c, "db/"); n != 0 {
		t.Fatalf("%d objects left after drop", n)
	}
}

func countObjects(t *testing.T, c *client.Client, prefix string) int {
	t.Helper()
	resp, err := c.Device().List(context.Background(), &devicepb.ListRequest{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return len(resp.Objects)
}

// Records one per line: a line longer than the record size is an error
// naming the line, and the database keeps its previous generation.
func TestLoadLinesTooLong(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	if _, err := e.c.CreatePIR(ctx, "w", 8, client.PIROptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Load(ctx, "w", strings.NewReader("one\ntwo\nthree\n"), client.LoadOptions{Records: dataset.Lines}); err != nil {
		t.Fatal(err)
	}
	_, err := e.c.Load(ctx, "w", strings.NewReader("four\nfive\nseventeen-letters\n"), client.LoadOptions{Records: dataset.Lines})
	if !errors.Is(err, dataset.ErrRecordTooLong) || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("load of a long line: %v, want ErrRecordTooLong naming line 3", err)
	}
	// Fixed-size records: a file that is not a whole number of them.
	_, err = e.c.Load(ctx, "w", bytes.NewReader(make([]byte, 8*5+3)), client.LoadOptions{Records: dataset.FixedSize})
	if !errors.Is(err, dataset.ErrPartialRecord) || !strings.Contains(err.Error(), "record 5") {
		t.Fatalf("load of 5 records and 3 bytes: %v, want ErrPartialRecord naming record 5", err)
	}
	got, err := e.c.Get(ctx, "w", 1)
	if err != nil {
		t.Fatal(err)
	}
	if string(bytes.TrimRight(got, "\x00")) != "two" {
		t.Fatalf("record 1 after failed loads: %q", got)
	}
	if _, err := e.c.CreatePIR(ctx, "x", 0, client.PIROptions{}); err == nil {
		t.Fatal("a database of 0-byte records was created")
	}
	if _, err := e.c.CreatePIR(ctx, "bad/name", 8, client.PIROptions{}); !errors.Is(err, client.ErrName) {
		t.Fatalf("a database named bad/name: %v", err)
	}
}

// Secret keys: readable by others, or made for other parameters — each a
// named error.
func TestKeysChecked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "k")
	if _, err := client.NewKeys(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := client.NewKeys(dir); err == nil {
		t.Fatal("NewKeys over existing keys succeeded")
	}
	if _, err := client.LoadKeys(dir); err != nil {
		t.Fatal(err)
	}
	sk := filepath.Join(dir, "bgv-13.sk")
	if err := os.Chmod(sk, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := client.LoadKeys(dir); !errors.Is(err, client.ErrKeyPermissions) || !strings.Contains(err.Error(), "bgv-13.sk") {
		t.Fatalf("world-readable key: %v, want ErrKeyPermissions naming the file", err)
	}
	os.Chmod(sk, 0o600)
	// Put the CKKS key where the BGV key belongs.
	raw, _ := os.ReadFile(filepath.Join(dir, "hevec.sk"))
	os.WriteFile(sk, raw, 0o600)
	if _, err := client.LoadKeys(dir); !errors.Is(err, client.ErrKeyParameters) {
		t.Fatalf("key of other parameters: %v, want ErrKeyParameters", err)
	}
	if _, err := client.LoadKeys(t.TempDir()); !errors.Is(err, client.ErrNoKeys) {
		t.Fatalf("empty key directory: %v, want ErrNoKeys", err)
	}
}

// A load killed with SIGKILL halfway leaves the previous generation intact
// and queryable; the next load cleans up after it.
func TestLoadKilled(t *testing.T) {
	if os.Getenv("ROSEMARY_CLIENT_LOADER") != "" {
		return // the helper process (see loaderProcess)
	}
	ctx := context.Background()
	dir := t.TempDir()
	keys, err := client.NewKeys(filepath.Join(dir, "keys"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := openStore(filepath.Join(dir, "store"), keys)
	if err != nil {
		t.Fatal(err)
	}
	const size = 64
	first := records(3, 256*1024, size)
	if _, err := c.CreatePIR(ctx, "db", size, client.PIROptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Load(ctx, "db", bytes.NewReader(first), client.LoadOptions{Records: dataset.FixedSize}); err != nil {
		t.Fatal(err)
	}
	c.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestLoaderProcess$")
	cmd.Env = append(os.Environ(), "ROSEMARY_CLIENT_LOADER="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once it has written part of the new generation.
	sc := bufio.NewScanner(out)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "halfway") {
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	c, err = openStore(filepath.Join(dir, "store"), keys)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	in, err := c.Info(ctx, "db")
	if err != nil {
		t.Fatal(err)
	}
	if in.Generation != 1 {
		t.Fatalf("after the killed load the database is at generation %d, want 1", in.Generation)
	}
	if countObjects(t, c.Client, "db/g2") == 0 {
		t.Fatal("the killed load wrote nothing: the test did not interrupt it")
	}
	got, err := c.Get(ctx, "db", 4321)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, first[4321*size:4322*size]) {
		t.Fatal("record 4321 of generation 1 differs after the killed load")
	}
	in, err = c.Load(ctx, "db", bytes.NewReader(first[:1000*size]), client.LoadOptions{Records: dataset.FixedSize})
	if err != nil {
		t.Fatal(err)
	}
	if n := countObjects(t, c.Client, "db/g1"); n != 0 {
		t.Fatalf("%d objects of generation 1 left", n)
	}
	// What the killed load wrote (generation 2 under its own token) is
	// gone too: all data is the new generation's.
	all, own := countObjects(t, c.Client, "db/g"), countObjects(t, c.Client, fmt.Sprintf("db/g%d.%s/", in.Generation, in.Token))
	if in.Generation != 2 || all != own || own == 0 {
		t.Fatalf("generation %d: %d data objects, %d of them its own", in.Generation, all, own)
	}
}

// TestLoaderProcess is the process TestLoadKilled kills: it loads a large
// database slowly and says when it is halfway.
func TestLoaderProcess(t *testing.T) {
	dir := os.Getenv("ROSEMARY_CLIENT_LOADER")
	if dir == "" {
		t.Skip("a helper process of TestLoadKilled")
	}
	ctx := context.Background()
	keys, err := client.LoadKeys(filepath.Join(dir, "keys"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := openStore(filepath.Join(dir, "store"), keys)
	if err != nil {
		t.Fatal(err)
	}
	total := int64(4 * 512 * 1024 * 64) // four tiles of plaintexts: the first two are written by halfway
	said := false
	r := io.LimitReader(rand.NewChaCha8([32]byte{4}), total)
	_, err = c.Load(ctx, "db", &readerOf{r}, client.LoadOptions{Records: dataset.FixedSize, Progress: func(done int64) {
		if !said && done > total/2 {
			said = true
			fmt.Println("halfway")
			select {} // wait to be killed
		}
	}})
	t.Fatalf("the load was not killed: %v", err)
}

type readerOf struct{ r io.Reader }

func (r *readerOf) Read(p []byte) (int, error) { return r.r.Read(p) }

// A database loaded from a stream (no size: a pipe, as each cluster shard
// gets) is laid out for the records it holds, exactly as if its size had
// been given — not in the 8192-row matrix a stream used to get, which
// stored 272 MiB for any small database — and reads back byte for byte.
func TestStreamLoadIsSizedByItsRecords(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	p := lwepir.Default()
	for _, c := range []struct{ n, size int }{{1, 1}, {256, 256}, {777, 100}} {
		t.Run(fmt.Sprintf("%dx%dB", c.n, c.size), func(t *testing.T) {
			name := fmt.Sprintf("db%d", c.n)
			if _, err := e.c.CreatePIR(ctx, name, c.size, client.PIROptions{Scheme: client.SchemeLWE}); err != nil {
				t.Fatal(err)
			}
			data := records(uint64(c.n), c.n, c.size)
			// io.MultiReader hides bytes.Reader's Seek: the load cannot
			// measure the input.
			in, err := e.c.Load(ctx, name, io.MultiReader(bytes.NewReader(data)), client.LoadOptions{Records: dataset.FixedSize})
			if err != nil {
				t.Fatal(err)
			}
			want, err := lwepir.NewShape(p, c.n, in.StoredRecordSize())
			if err != nil {
				t.Fatal(err)
			}
			// The default (packed) mode stores the tiles and the packer,
			// no hint diagonals.
			packer, err := lwepir.PackerStoredBytes(p, want)
			if err != nil {
				t.Fatal(err)
			}
			wantBytes := want.TileBytesTotal(p) + packer
			if in.Records != c.n || in.Matrix().Rows != want.Rows || in.Matrix().Cols != want.Cols || in.Bytes != wantBytes {
				t.Fatalf("loaded %d records in %d × %d, %d bytes; want %d × %d, %d bytes", in.Records, in.Matrix().Rows, in.Matrix().Cols, in.Bytes,
					want.Rows, want.Cols, wantBytes)
			}
			if in.Bytes > 32<<20 {
				t.Fatalf("%d bytes stored for %d records of %d bytes", in.Bytes, c.n, c.size)
			}
			for _, i := range []int{0, c.n - 1} {
				got, err := e.c.Get(ctx, name, i)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, data[i*c.size:(i+1)*c.size]) {
					t.Fatalf("record %d differs", i)
				}
			}
		})
	}
}
