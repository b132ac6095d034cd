package engine

import (
	"fmt"
	"sync"

	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// Precomputed NTT tables are shared by every Machine: they depend only on
// (N, q) and are costly to build at N = 2^16.
var nttCache sync.Map // key [2]uint64{N, q} → *rns.NTTTable

func nttTable(n int, q uint64) (*rns.NTTTable, error) {
	key := [2]uint64{uint64(n), q}
	if t, ok := nttCache.Load(key); ok {
		return t.(*rns.NTTTable), nil
	}
	t, err := rns.NewNTTTable(n, q)
	if err != nil {
		return nil, fmt.Errorf("engine: NTT table for q=%d: %w", q, err)
	}
	actual, _ := nttCache.LoadOrStore(key, t)
	return actual.(*rns.NTTTable), nil
}

var galCache sync.Map // key [2]uint64{N, gal} → []uint32

func galoisIndex(n int, gal uint64) ([]uint32, error) {
	key := [2]uint64{uint64(n), gal}
	if t, ok := galCache.Load(key); ok {
		return t.([]uint32), nil
	}
	idx, err := rns.AutomorphismNTTIndex(n, gal)
	if err != nil {
		return nil, err
	}
	actual, _ := galCache.LoadOrStore(key, idx)
	return actual.([]uint32), nil
}
