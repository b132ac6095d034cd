package store

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/device/store/layout"
)

// gate holds the Puts of chosen objects once their pages are written,
// before they publish, until the test lets them go (store.written).
type gate struct {
	mu      sync.Mutex
	held    map[string]chan error // name → its release (nil: not held)
	reached map[string]chan struct{}
	log     []string
}

// holdPuts holds the Puts of names; when the test ends they go (a test
// failing while one is held does not hang).
func holdPuts(t *testing.T, s *Store, names ...string) *gate {
	g := &gate{held: map[string]chan error{}, reached: map[string]chan struct{}{}}
	for _, n := range names {
		g.held[n] = make(chan error)
		g.reached[n] = make(chan struct{}, 8)
		t.Cleanup(func() { close(g.held[n]) })
	}
	s.written = func(name string) error {
		g.add("written " + name)
		g.mu.Lock()
		release, reached := g.held[name], g.reached[name]
		g.mu.Unlock()
		if release == nil {
			return nil
		}
		reached <- struct{}{}
		return <-release
	}
	return g
}

func (g *gate) add(s string) { g.mu.Lock(); g.log = append(g.log, s); g.mu.Unlock() }
func (g *gate) events() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.log)
}

// wait returns once a Put of name is held (it has written its pages).
func (g *gate) wait(t *testing.T, name string) {
	t.Helper()
	select {
	case <-g.reached[name]:
	case <-time.After(10 * time.Second):
		t.Fatalf("the Put of %q never wrote its pages", name)
	}
}

// openHeld opens a store closed when the test ends, after the Puts it
// holds went (t.Cleanup runs last in, first out).
func openHeld(t *testing.T, dir string) *Store {
	s := mustOpen(t, dir)
	t.Cleanup(func() { s.Close() })
	return s
}

// done waits for a Put or Delete run on another goroutine; a write stuck
// behind a held one never returns (no assertion on how long it takes).
func done(t *testing.T, what string, errc <-chan error) {
	t.Helper()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s never returned: it waits behind the held write", what)
	}
}

func goPut(s *Store, name string, v uint64) <-chan error {
	errc := make(chan error, 1)
	go func() {
		sh := shapeFor(v)
		_, err := s.Put(name, KindCiphertext, sh, content(name, v, sh))
		errc <- err
	}()
	return errc
}

// A small write of one object does not wait for a large write of
// another: with the large one's pages written and not yet published, the
// small one is put, published and read back, and the large object still
// shows its previous generation (nothing half-published). The large one
// then publishes, and the catalog still tiles its rows (checked by Open).
func TestSmallPutPassesLargeOne(t *testing.T) {
	dir := t.TempDir()
	s := openHeld(t, dir)
	mustPut(t, s, "big", 1)
	g := holdPuts(t, s, "big")
	bigc := goPut(s, "big", 71) // 3 polys × 4 limbs of 640 bytes
	g.wait(t, "big")
	done(t, "the small Put beside the held large one", goPut(s, "small", 0))
	g.add("small published")
	if err := checkContent(s, "small", 0); err != nil {
		t.Fatal(err)
	}
	if err := checkContent(s, "big", 1); err != nil {
		t.Fatalf("the held Put is visible before it published: %v", err)
	}
	done(t, "a delete beside the held Put", func() <-chan error {
		errc := make(chan error, 1)
		go func() { errc <- s.Delete("small") }()
		return errc
	}())
	g.held["big"] <- nil
	done(t, "the large Put", bigc)
	if err := checkContent(s, "big", 71); err != nil {
		t.Fatal(err)
	}
	want := []string{"written big", "written small", "small published"}
	if got := g.events(); !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	s.Close()
	s = openHeld(t, dir)
	if err := checkContent(s, "big", 71); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat("small"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted object after reopen: %v", err)
	}
}

// Writers of one object go one at a time, in order: the second Put of an
// object writes its pages only once the first has published, and gets
// the higher generation.
func TestPutsOfOneObjectGoInTurn(t *testing.T) {
	s := openHeld(t, t.TempDir())
	g := holdPuts(t, s, "x")
	first := goPut(s, "x", 1)
	g.wait(t, "x")
	second := make(chan error, 1)
	go func() {
		sh := shapeFor(2)
		_, err := s.Put("x", KindCiphertext, sh, content("x", 2, sh))
		second <- err
	}()
	// Another object's Put passes both.
	done(t, "a Put of another object", goPut(s, "y", 3))
	g.add("y published")
	g.held["x"] <- nil
	done(t, "the first Put", first)
	g.add("x first published")
	g.wait(t, "x")
	g.held["x"] <- nil
	done(t, "the second Put", second)
	if err := checkContent(s, "x", 2); err != nil {
		t.Fatal(err)
	}
	want := []string{"written x", "written y", "y published", "x first published", "written x"}
	if got := g.events(); !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

// Rows planned by a Put still writing are not planned again; a Put that
// publishes rows above the high-water mark first frees the gap below
// them, which the earlier Put takes when it publishes — or, if it fails,
// the next Put reuses.
func TestPutsPublishOutOfOrder(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprintf("fail=%v", fail), func(t *testing.T) { putsOutOfOrder(t, fail) })
	}
}

func putsOutOfOrder(t *testing.T, fail bool) {
	dir := t.TempDir()
	s := openHeld(t, dir)
	g := holdPuts(t, s, "a")
	ac := goPut(s, "a", 70)
	g.wait(t, "a")
	done(t, "the Put beside the held one", goPut(s, "b", 71))
	s.wmu.Lock()
	ia := slices.Clone(s.puts.rows)
	s.wmu.Unlock()
	ib := mustStat(t, s, "b")
	if len(ia) == 0 || ib.Descriptor.Base[0] < uint32(ia[len(ia)-1].End()) {
		t.Fatalf("b planned at %v, a holds %v", ib.Descriptor.Base, ia)
	}
	if fail {
		g.held["a"] <- errors.New("injected")
		if err := <-ac; err == nil {
			t.Fatal("the failed Put published")
		}
		if _, err := s.Stat("a"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("failed Put: %v", err)
		}
		// Its rows, freed by b's publication, are the first fit.
		mustPut(t, s, "c", 70)
		if got := mustStat(t, s, "c").Descriptor.Base[0]; got != ia[0].Start {
			t.Fatalf("c at row %d, the failed Put's rows begin at %d", got, ia[0].Start)
		}
	} else {
		g.held["a"] <- nil
		done(t, "the held Put", ac)
		if err := checkContent(s, "a", 70); err != nil {
			t.Fatal(err)
		}
	}
	s.wmu.Lock()
	left := s.puts.rows
	s.wmu.Unlock()
	if len(left) != 0 {
		t.Fatalf("rows still reserved: %v", left)
	}
	s.Close()
	s = openHeld(t, dir) // the catalog tiles the rows
	if err := checkContent(s, "b", 71); err != nil {
		t.Fatal(err)
	}
}

func mustStat(t *testing.T, s *Store, name string) Info {
	t.Helper()
	in, err := s.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// PutIf and DeleteIf write only over the generation they were given.
func TestConditionalWrites(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	put := func(want Generation, v uint64) (Generation, error) {
		sh := shapeFor(v)
		return s.PutIf("x", want, KindCiphertext, sh, content("x", v, sh))
	}
	if _, err := put(5, 1); !errors.Is(err, ErrStale) {
		t.Fatalf("PutIf over a missing object at 5: %v", err)
	}
	g1, err := put(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := put(0, 2); !errors.Is(err, ErrStale) {
		t.Fatalf("PutIf(0) over an existing object: %v", err)
	}
	g2, err := put(g1, 2)
	if err != nil || g2 <= g1 {
		t.Fatalf("PutIf over generation %d: %d, %v", g1, g2, err)
	}
	if err := s.DeleteIf("x", g1); !errors.Is(err, ErrStale) {
		t.Fatalf("DeleteIf of a replaced generation: %v", err)
	}
	if err := checkContent(s, "x", 2); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteIf("x", g2); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteIf("x", g2); !errors.Is(err, ErrNotFound) {
		t.Fatalf("DeleteIf of a deleted object: %v", err)
	}
}

// The allocator plans around reserved rows, in the free list and above
// the high-water mark.
func TestAllocatorSkipsReservedRows(t *testing.T) {
	f := inflight{rows: []layout.Extent{{Start: 30, Rows: 2}, {Start: 6, Rows: 2}, {Start: 20, Rows: 5}}}
	a := f.allocator([]layout.Extent{{Start: 5, Rows: 5}, {Start: 12, Rows: 3}}, 20)
	want := []layout.Extent{{Start: 5, Rows: 1}, {Start: 8, Rows: 2}, {Start: 12, Rows: 3}, {Start: 25, Rows: 5}}
	if !slices.Equal(a.free, want) || a.hwm != 32 {
		t.Fatalf("free %v hwm %d, want %v and 32", a.free, a.hwm, want)
	}
	for _, c := range []struct{ rows, start int64 }{{3, 12}, {4, 25}, {2, 8}, {2, 32}} {
		got, err := a.alloc(c.rows)
		if err != nil || int64(got) != c.start {
			t.Fatalf("alloc(%d) = %d, %v; want %d", c.rows, got, err, c.start)
		}
	}
}
