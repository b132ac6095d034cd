package engine

import (
	"errors"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// The table cache keeps the most recently used entries within its bytes.
func TestTableCacheBounded(t *testing.T) {
	c := newTableCache[int](100)
	build := func(v int) func() (int, int64, error) {
		return func() (int, int64, error) { return v, 30, nil }
	}
	for k := range 10 {
		if v, _ := c.get([2]uint64{1, uint64(k)}, build(k)); v != k {
			t.Fatalf("entry %d is %d", k, v)
		}
		if k == 7 {
			c.get([2]uint64{1, 6}, build(-1)) // 6 becomes the most recent
		}
	}
	entries, bytes := c.stats()
	if entries != 3 || bytes != 90 {
		t.Fatalf("%d entries of %d bytes, want 3 of 90", entries, bytes)
	}
	for _, k := range []uint64{6, 8, 9} {
		if v, _ := c.get([2]uint64{1, k}, build(-1)); v != int(k) {
			t.Fatalf("entry %d was evicted (rebuilt as %d)", k, v)
		}
	}
	// An entry larger than the cache is returned, not kept; errors are
	// not cached.
	if v, _ := c.get([2]uint64{2, 0}, func() (int, int64, error) { return 42, 1000, nil }); v != 42 {
		t.Fatal("large entry not returned")
	}
	if _, err := c.get([2]uint64{3, 0}, func() (int, int64, error) { return 0, 0, errors.New("no") }); err == nil {
		t.Fatal("error lost")
	}
	if entries, _ := c.stats(); entries != 3 {
		t.Fatalf("%d entries after a large entry and an error", entries)
	}
}

// Before, every prime a registered program named left an NTT table in a
// process-wide map for good: a client registering programs over ever new
// primes grew the daemon without bound. The cache now stays within its
// bytes however many primes come by, and a modulus that is no NTT prime
// is an error, not a table.
func TestStreamPrimesDoNotGrowTables(t *testing.T) {
	saved := nttCache
	defer func() { nttCache = saved }()
	const logN = 5
	one, err := rns.NewNTTTable(1<<logN, 193)
	if err != nil {
		t.Fatal(err)
	}
	budget := int64(8 * one.TableBytes())
	nttCache = newTableCache[*rns.NTTTable](budget)
	ps, err := rns.NTTPrimesBelow(40, logN, 201)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		sp := &lower.StreamProgram{Scheme: fhe.CKKS, Ring: lower.Ring{LogN: logN, Q: ps[i : i+1], P: ps[200:]},
			Nodes: []lower.StreamNode{{Kind: lower.StreamInput, Name: "x", Count: 1, Polys: 2, Limbs: 1, Out: true}}}
		if _, err := NewStream(sp); err != nil {
			t.Fatal(err)
		}
	}
	entries, bytes := nttCache.stats()
	if bytes > budget || entries > 8 {
		t.Fatalf("%d tables of %d bytes after 200 primes, budget %d", entries, bytes, budget)
	}
	for _, q := range []uint64{193 * 257, 1 << 20, 0, 1<<62 + 1} {
		if _, err := nttTable(1<<logN, q); err == nil {
			t.Fatalf("an NTT table for %d", q)
		}
	}
}
