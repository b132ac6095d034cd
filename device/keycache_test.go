package device

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/device/store"
)

func TestKeyCacheLRU(t *testing.T) {
	c := newKeyCache(3 * 8 * 4) // three limbs of 4 words
	limb := func(v uint64) []uint64 { return []uint64{v, v, v, v} }
	k := func(name string, gen uint64, l int) keyLimb {
		return keyLimb{name: name, gen: store.Generation(gen), limb: l, coefficient: 4}
	}
	c.put(k("a", 1, 0), limb(1))
	c.put(k("a", 1, 1), limb(2))
	c.put(k("a", 1, 2), limb(3))
	dst := make([]uint64, 4)
	if !c.get(k("a", 1, 0), dst) || dst[0] != 1 {
		t.Fatal("miss on a cached limb")
	}
	c.put(k("a", 1, 3), limb(4)) // evicts limb 1, the least recently used
	if c.get(k("a", 1, 1), dst) {
		t.Fatal("LRU limb not evicted")
	}
	if !c.get(k("a", 1, 3), dst) || dst[0] != 4 || !c.get(k("a", 1, 0), dst) {
		t.Fatal("recent limbs evicted")
	}
	if c.get(k("a", 2, 0), dst) {
		t.Fatal("a new generation was served from the old one")
	}
	if c.used != 3*8*4 {
		t.Fatalf("used %d bytes", c.used)
	}
	var off *keyCache
	if off.get(k("a", 1, 0), dst) {
		t.Fatal("nil cache hit")
	}
	off.put(k("a", 1, 0), dst) // must not panic
}
