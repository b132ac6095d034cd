package store

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// TestConcurrentReadersAndWriters: while writers replace and delete objects
// and garbage collection reuses rows, readers that pinned a generation always
// read one complete version that was put under that name.
func TestConcurrentReadersAndWriters(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	names := []string{"a", "b", "c"}
	var mu sync.Mutex
	versions := map[string][]uint64{} // every version ever announced per name
	announce := func(name string, v uint64) {
		mu.Lock()
		versions[name] = append(versions[name], v)
		mu.Unlock()
	}
	for i, n := range names {
		announce(n, uint64(i))
		mustPut(t, s, n, uint64(i))
	}
	const writes = 60
	var wg sync.WaitGroup
	errc := make(chan error, 16)
	wg.Add(1)
	go func() { // writer
		defer wg.Done()
		for i := uint64(0); i < writes; i++ {
			name := names[i%3]
			if i%7 == 6 {
				if err := s.Delete(name); err != nil && !errors.Is(err, ErrNotFound) {
					errc <- err
					return
				}
				continue
			}
			v := 100 + i
			announce(name, v)
			sh := shapeFor(v)
			if _, err := s.Put(name, KindPlaintext, sh, content(name, v, sh)); err != nil {
				errc <- err
				return
			}
		}
	}()
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func(r int) { // reader
			defer wg.Done()
			for i := 0; i < 80; i++ {
				name := names[(i+r)%3]
				o, err := s.Acquire(name)
				if errors.Is(err, ErrNotFound) {
					continue
				}
				if err != nil {
					errc <- err
					return
				}
				limbs, err := o.ReadAll()
				sh := o.Info().Shape
				o.Release()
				if err != nil {
					errc <- err
					return
				}
				mu.Lock()
				cands := append([]uint64(nil), versions[name]...)
				mu.Unlock()
				if !matchesSome(name, sh, limbs, cands) {
					errc <- fmt.Errorf("reader %d: %q (%s) matches none of versions %v", r, name, sh, cands)
					return
				}
			}
		}(r)
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	// All pins are gone: one GC reclaims whatever readers held last, a
	// second finds nothing, and the catalog still tiles (checked by Open).
	if st, err := s.GC(); err != nil || st.Pinned != 0 {
		t.Fatalf("GC after all readers released = %+v, %v; want no pinned generations", st, err)
	}
	if st, err := s.GC(); err != nil || st.Pinned != 0 || st.Reclaimed != 0 {
		t.Fatalf("second GC = %+v, %v; want nothing left", st, err)
	}
	dir := s.Dir()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, dir)
	defer s.Close()
	for _, n := range names {
		if info, err := s.Stat(n); err == nil {
			mu.Lock()
			cands := append([]uint64(nil), versions[n]...)
			mu.Unlock()
			_, limbs, err := s.Get(n)
			if err != nil || !matchesSome(n, info.Shape, limbs, cands) {
				t.Fatalf("after reopen %q: %v", n, err)
			}
		}
	}
}

func matchesSome(name string, sh Shape, limbs [][]byte, versions []uint64) bool {
	for _, v := range versions {
		if shapeFor(v) != sh {
			continue
		}
		want := content(name, v, sh)
		ok := true
		for i := range want {
			ok = ok && bytes.Equal(limbs[i], want[i])
		}
		if ok {
			return true
		}
	}
	return false
}
