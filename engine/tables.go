package engine

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// Precomputed NTT tables are shared by every Machine: they depend only on
// (N, q) and are costly to build at N = 2^16. The primes come from the
// programs clients register, so the cache is bounded (tablecache.go).
var nttCache = newTableCache[*rns.NTTTable](NTTCacheBytes)

// NTTCacheBytes and GaloisCacheBytes bound the shared table caches: about
// 70 NTT tables at N = 2^17 (engorgio's 68 primes), 128 Galois index
// tables at N = 2^17.
const (
	NTTCacheBytes    = 1 << 30
	GaloisCacheBytes = 64 << 20
)

func nttTable(n int, q uint64) (*rns.NTTTable, error) {
	return nttCache.get([2]uint64{uint64(n), q}, func() (*rns.NTTTable, int64, error) {
		t, err := rns.NewNTTTable(n, q)
		if err != nil {
			return nil, 0, fmt.Errorf("engine: NTT table for q=%d: %w", q, err)
		}
		return t, int64(t.TableBytes()), nil
	})
}

var galCache = newTableCache[[]uint32](GaloisCacheBytes)

func galoisIndex(n int, gal uint64) ([]uint32, error) {
	return galCache.get([2]uint64{uint64(n), gal}, func() ([]uint32, int64, error) {
		idx, err := rns.AutomorphismNTTIndex(n, gal)
		return idx, 4 * int64(len(idx)), err
	})
}
