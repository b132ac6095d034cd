package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/device/store/layout"
	bolt "go.etcd.io/bbolt"
)

func TestPutGetRoundTrip(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	for v := uint64(0); v < 72; v++ { // every shape of shapeFor
		name := "obj" + string(rune('a'+v%26)) + string(rune('a'+v/26))
		g := mustPut(t, s, name, v)
		if err := checkContent(s, name, v); err != nil {
			t.Fatal(err)
		}
		info, err := s.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		sh := shapeFor(v)
		if info.Generation != g || info.Kind != KindCiphertext || info.Bytes != sh.Bytes() ||
			info.Pages != testLayout.PagesPerObject(sh) {
			t.Fatalf("Stat = %+v (gen %d, shape %s)", info, g, sh)
		}
		// Single-limb reads agree with the generator.
		want := content(name, v, sh)
		for poly := 0; poly < sh.Polys; poly++ {
			for limb := 0; limb < sh.Limbs; limb++ {
				b, err := s.ReadLimb(name, poly, limb)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(b, want[poly*sh.Limbs+limb]) {
					t.Fatalf("%s limb (%d,%d) differs", name, poly, limb)
				}
			}
		}
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 72 {
		t.Fatalf("List has %d objects, want 72", len(list))
	}
	for i := 1; i < len(list); i++ {
		if list[i-1].Name >= list[i].Name {
			t.Fatalf("List not sorted: %q before %q", list[i-1].Name, list[i].Name)
		}
	}
}

func TestGenerationsAndReopen(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	g1 := mustPut(t, s, "ct", 1)
	g2 := mustPut(t, s, "ct", 2)
	if g2 <= g1 {
		t.Fatalf("generation %d after %d", g2, g1)
	}
	mustPut(t, s, "key", 7)
	if err := s.Delete("key"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat("key"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Stat after Delete: %v, want ErrNotFound", err)
	}
	if err := s.Delete("key"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Delete: %v, want ErrNotFound", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat("ct"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Stat after Close: %v, want ErrClosed", err)
	}
	s = mustOpen(t, dir)
	if err := checkContent(s, "ct", 2); err != nil {
		t.Fatal(err)
	}
	info, err := s.Stat("ct")
	if err != nil || info.Generation != g2 {
		t.Fatalf("after reopen: %+v, %v; want generation %d", info, err, g2)
	}
	if g := mustPut(t, s, "ct", 3); g <= g2 {
		t.Fatalf("generation %d after reopen, not above %d", g, g2)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, layout.Layout{Channels: 4, PageSize: 64}); err == nil || !strings.Contains(err.Error(), "opened with") {
		t.Fatalf("Open with another layout: %v, want a layout mismatch", err)
	}
	s = mustOpen(t, dir)
	defer s.Close()
	if err := checkContent(s, "ct", 3); err != nil {
		t.Fatal(err)
	}
}

// TestPinnedGenerationSurvivesReplacement: a reader holding a generation can
// read it after the object is replaced and deleted; its rows are reused only
// after Release.
func TestPinnedGenerationSurvivesReplacement(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	mustPut(t, s, "x", 5)
	o, err := s.Acquire("x")
	if err != nil {
		t.Fatal(err)
	}
	old := o.Info()
	mustPut(t, s, "x", 6)
	if err := s.Delete("x"); err != nil {
		t.Fatal(err)
	}
	for v := uint64(10); v < 20; v++ { // churn: these must not land on x's pinned rows
		mustPut(t, s, "y", v)
	}
	st, err := s.GC()
	if err != nil {
		t.Fatal(err)
	}
	if st.Pinned != 1 {
		t.Fatalf("GC kept %d pinned generations, want 1", st.Pinned)
	}
	limbs, err := o.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := content("x", 5, shapeFor(5))
	for i := range want {
		if !bytes.Equal(limbs[i], want[i]) {
			t.Fatalf("pinned limb %d changed", i)
		}
	}
	if got := s.pinned(); len(got) != 1 || got[0] != old.Generation {
		t.Fatalf("pinned = %v, want [%d]", got, old.Generation)
	}
	o.Release()
	o.Release() // idempotent
	if _, err := o.ReadLimb(0, 0); !errors.Is(err, ErrReleased) {
		t.Fatalf("read after Release: %v", err)
	}
	st, err = s.GC()
	if err != nil {
		t.Fatal(err)
	}
	ext, _ := testLayout.Extents(old.Descriptor)
	var rows int64
	for _, e := range ext {
		rows += int64(e.Rows)
	}
	if st.Reclaimed != 1 || st.Pinned != 0 || st.Rows != rows {
		t.Fatalf("GC after release = %+v, want 1 reclaimed generation of %d rows", st, rows)
	}
}

// TestSpaceReuse: replacing an object repeatedly does not grow the files
// beyond a few object sizes, because freed rows are reused.
func TestSpaceReuse(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	defer s.Close()
	for i := 0; i < 50; i++ {
		mustPut(t, s, "a", 0) // same shape every time
		mustPut(t, s, "b", 0)
	}
	rows := testLayout.PartRows(shapeFor(0))
	per := (rows[0] + rows[1]) * slotSize(testLayout)
	for ch := 0; ch < testLayout.Channels; ch++ {
		fi, err := os.Stat(filepath.Join(dir, "ch0"+string(rune('0'+ch))))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 4*per {
			t.Fatalf("ch%02d is %d bytes after 100 puts of two %d-byte objects: space not reused", ch, fi.Size(), per)
		}
	}
}

func TestISPMode(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	mustPut(t, s, "a", 1)
	s.SetISP(true)
	if !s.ISP() {
		t.Fatal("ISP() false after SetISP(true)")
	}
	sh := shapeFor(2)
	if _, err := s.Put("b", KindKey, sh, content("b", 2, sh)); !errors.Is(err, ErrISPMode) {
		t.Fatalf("Put in ISP mode: %v, want ErrISPMode", err)
	}
	if err := s.Delete("a"); !errors.Is(err, ErrISPMode) || !strings.Contains(err.Error(), "ISP mode") {
		t.Fatalf("Delete in ISP mode: %v", err)
	}
	if err := checkContent(s, "a", 1); err != nil { // reads continue
		t.Fatal(err)
	}
	s.SetISP(false)
	mustPut(t, s, "b", 2)
	if _, err := s.Stat("b"); err != nil {
		t.Fatal(err)
	}
}

func TestPutRejectsBadInput(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	sh := Shape{Polys: 2, Limbs: 2, LogN: 4, WordSize: 8}
	good := content("n", 0, sh)
	cases := []struct {
		name  string
		kind  Kind
		sh    Shape
		limbs [][]byte
		want  string
	}{
		{"", KindKey, sh, good, "invalid object name"},
		{strings.Repeat("x", 256), KindKey, sh, good, "invalid object name"},
		{"\xff", KindKey, sh, good, "invalid object name"},
		{"n", 0, sh, good, "unknown object kind"},
		{"n", KindKey, sh, good[:3], "3 limbs given"},
		{"n", KindKey, sh, append(good[:3:3], make([]byte, 127)), "is 127 bytes, want 128"},
		{"n", KindKey, Shape{Polys: 0, Limbs: 1, LogN: 1, WordSize: 1}, nil, "polys out of range"},
	}
	for _, tc := range cases {
		_, err := s.Put(tc.name, tc.kind, tc.sh, tc.limbs)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Put(%.10q, %v, %v): %v, want error containing %q", tc.name, tc.kind, tc.sh, err, tc.want)
		}
	}
	if l, _ := s.List(); len(l) != 0 {
		t.Fatalf("rejected puts left %d objects", len(l))
	}
	mustPut(t, s, "ok", 3)
	if _, err := s.ReadLimb("ok", 5, 0); err == nil {
		t.Fatal("ReadLimb of poly 5 succeeded")
	}
	if _, err := s.ReadLimb("missing", 0, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("ReadLimb of missing object: %v", err)
	}
	o, err := s.Acquire("ok")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Release()
	osh := o.Info().Shape
	if err := o.ReadLimbInto(make([]byte, osh.LimbBytes()-1), 0, 0); err == nil {
		t.Fatal("ReadLimbInto accepted a short buffer")
	}
	if err := o.ReadAllInto(make([][]byte, osh.NumLimbs()-1)); err == nil {
		t.Fatal("ReadAllInto accepted too few buffers")
	}
	bufs := make([][]byte, osh.NumLimbs())
	for i := range bufs {
		bufs[i] = make([]byte, osh.LimbBytes())
	}
	bufs[len(bufs)-1] = bufs[len(bufs)-1][:1]
	if err := o.ReadAllInto(bufs); err == nil {
		t.Fatal("ReadAllInto accepted a short limb buffer")
	}
}

func TestKindsAndClosedHandles(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	sh := Shape{Polys: 1, Limbs: 2, LogN: 5, WordSize: 8}
	for _, k := range []Kind{KindCiphertext, KindPlaintext, KindKey} {
		name := k.String()
		if _, err := s.Put(name, k, sh, content(name, 0, sh)); err != nil {
			t.Fatal(err)
		}
	}
	o, err := s.Acquire("key")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := o.ReadLimb(0, 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("read through a handle after Close: %v, want ErrClosed", err)
	}
	if _, err := s.Put("x", KindKey, sh, content("x", 0, sh)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Put after Close: %v, want ErrClosed", err)
	}
	o.Release()
	s = mustOpen(t, dir)
	defer s.Close()
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Kind{"ciphertext": KindCiphertext, "plaintext": KindPlaintext, "key": KindKey}
	if len(list) != 3 {
		t.Fatalf("List = %+v", list)
	}
	for _, in := range list {
		if want[in.Name] != in.Kind || in.Shape != sh {
			t.Fatalf("after reopen %q has kind %v shape %s", in.Name, in.Kind, in.Shape)
		}
	}
}

// The zero Layout opens a store with its own layout and makes a new one
// with DefaultLayout.
func TestOpenAdoptsLayout(t *testing.T) {
	dir := t.TempDir()
	want := layout.Layout{Channels: 3, PageSize: 8192}
	s, err := Open(dir, want)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(dir, layout.Layout{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Layout() != want {
		t.Fatalf("reopened with layout %v, want %v", s.Layout(), want)
	}
	s.Close()
	s, err = Open(t.TempDir(), layout.Layout{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Layout() != DefaultLayout {
		t.Fatalf("new store with layout %v, want %v", s.Layout(), DefaultLayout)
	}
}

// A one-page object is written to the one channel file that holds its
// page; the other channels' files are not touched (nor synced).
func TestSmallPutWritesOneChannel(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	defer s.Close()
	sh := Shape{Polys: 1, Limbs: 1, LogN: 3, WordSize: 8} // 64 bytes: one page
	if _, err := s.Put("one", KindCiphertext, sh, content("one", 1, sh)); err != nil {
		t.Fatal(err)
	}
	written := 0
	for ch := 0; ch < testLayout.Channels; ch++ {
		fi, err := os.Stat(channelPath(dir, ch))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 0 {
			written++
		}
	}
	if written != 1 {
		t.Fatalf("%d channel files written for a one-page object, want 1", written)
	}
	_, limbs, err := s.Get("one")
	if err != nil || !bytes.Equal(limbs[0], content("one", 1, sh)[0]) {
		t.Fatalf("read back: %v", err)
	}
}

// deadGenerations lists the catalog's dead generations.
func deadGenerations(t *testing.T, s *Store) []Generation {
	t.Helper()
	var out []Generation
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketDead).ForEach(func(k, v []byte) error {
			r, err := decodeRecord(v)
			out = append(out, r.gen)
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWriteIsOneCommit: a write publishes and reclaims what the write
// before it retired in one catalog commit (one fsync); what the last write
// retired is reclaimed once writes pause, and a reader's pin holds it.
func TestWriteIsOneCommit(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	setIdle := func(d time.Duration) {
		s.wmu.Lock()
		s.idleDelay = d
		s.wmu.Unlock()
	}
	setIdle(time.Hour) // no idle collection until asked for
	g1 := mustPut(t, s, "x", 1)
	c := s.commits.Load()
	g2 := mustPut(t, s, "x", 2)
	if n := s.commits.Load() - c; n != 1 {
		t.Fatalf("replacing an object took %d catalog commits, want 1", n)
	}
	if d := deadGenerations(t, s); !slices.Equal(d, []Generation{g1}) {
		t.Fatalf("dead after the replacement: %v, want [%d]", d, g1)
	}
	o, err := s.Acquire("x") // pins g2 across the next replacement
	if err != nil {
		t.Fatal(err)
	}
	c = s.commits.Load()
	g3 := mustPut(t, s, "x", 3)
	if n := s.commits.Load() - c; n != 1 {
		t.Fatalf("replacing an object took %d catalog commits, want 1", n)
	}
	if d := deadGenerations(t, s); !slices.Equal(d, []Generation{g2}) {
		t.Fatalf("dead after the second replacement: %v, want [%d] (g%d reclaimed in its commit)", d, g2, g1)
	}
	c = s.commits.Load()
	if err := s.Delete("x"); err != nil {
		t.Fatal(err)
	}
	if n := s.commits.Load() - c; n != 1 {
		t.Fatalf("a delete took %d catalog commits, want 1", n)
	}
	if d := deadGenerations(t, s); !slices.Equal(d, []Generation{g2, g3}) {
		t.Fatalf("dead after the delete: %v, want [%d %d] (g%d pinned)", d, g2, g3, g2)
	}
	// A write of another object reclaims g3 in its commit, not pinned g2.
	setIdle(10 * time.Millisecond)
	mustPut(t, s, "y", 4)
	waitDead := func(want []Generation) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !slices.Equal(deadGenerations(t, s), want) {
			if time.Now().After(deadline) {
				t.Fatalf("dead generations %v, want %v once writes pause", deadGenerations(t, s), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitDead([]Generation{g2})
	limbs, err := o.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range content("x", 2, shapeFor(2)) {
		if !bytes.Equal(limbs[i], want) {
			t.Fatalf("pinned limb %d changed", i)
		}
	}
	o.Release()
	// Its commit reclaims g2; writes pause and the idle collection reclaims
	// the generation it retired (y's v4).
	mustPut(t, s, "y", 5)
	waitDead(nil)
}

// TestLargeWriteFlushesAsItGoes: a write of more than flushChunk per
// channel file flushes its chunks as it writes them (so a small writer's
// fsync of the same file does not wait for all of it); a one-page write
// flushes nothing apart from its fsync; both read back exactly.
func TestLargeWriteFlushesAsItGoes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("sync_file_range is Linux's")
	}
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	small := Shape{Polys: 1, Limbs: 1, LogN: 3, WordSize: 8}
	if _, err := s.Put("small", KindCiphertext, small, content("small", 1, small)); err != nil {
		t.Fatal(err)
	}
	if n := s.rangeFlushes.Load(); n != 0 {
		t.Fatalf("a one-page write flushed %d chunks", n)
	}
	large := Shape{Polys: 2, Limbs: 1, LogN: 20, WordSize: 8} // 16 MiB over the channels
	want := content("large", 2, large)
	if _, err := s.Put("large", KindCiphertext, large, want); err != nil {
		t.Fatal(err)
	}
	perChannel := int64(2<<20*8) / int64(testLayout.Channels)
	if n := s.rangeFlushes.Load(); n < perChannel/flushChunk {
		t.Fatalf("a %d MiB write flushed %d chunks, want ≥ %d", 16, n, perChannel/flushChunk)
	}
	_, limbs, err := s.Get("large")
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if !bytes.Equal(limbs[i], want[i]) {
			t.Fatalf("limb %d read back differs", i)
		}
	}
}
