package linear

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// scheduleParallel runs the schedule's steps tile by tile, each step's
// independent units spread over the engines (one goroutine each). Units
// write disjoint outputs; the engines' counters are summed by the caller.
func (pl *Plan) scheduleParallel(engines []*realEngine) error {
	for tile := 0; tile < pl.Tiles(); tile++ {
		ins := make([]handle, pl.Inputs())
		err := forEach(len(engines), len(ins), func(w, cb int) error {
			h, err := engines[w].input(tile, cb)
			ins[cb] = h
			return err
		})
		if err != nil {
			return err
		}
		ops := pl.operandSlots(ins)
		us := pl.operandUnits()
		if err := forEach(len(engines), len(us), func(w, i int) error {
			return pl.operand(engines[w], ops, us[i])
		}); err != nil {
			return err
		}
		if err := forEach(len(engines), pl.Groups(), func(w, g int) error {
			return pl.group(engines[w], ops, tile, g)
		}); err != nil {
			return err
		}
	}
	return nil
}

// forEach calls fn(worker, i) for i in [0, n) on up to `workers` goroutines
// (worker in [0, workers) identifies the goroutine) and returns the first
// error; after an error the remaining units are skipped.
func forEach(workers, n int, fn func(worker, i int) error) error {
	workers = min(workers, n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			if err := fn(0, i); err != nil {
				return err
			}
		}
		return nil
	}
	var next atomic.Int64
	var failed atomic.Bool
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(w, i); err != nil {
					once.Do(func() { first = err })
					failed.Store(true)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	return first
}

// Workers is the default number of goroutines for the client's encryption
// and decryption and the server's weight encoding: one per usable CPU.
func Workers() int { return runtime.GOMAXPROCS(0) }
