package linear

import (
	"fmt"
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
		if pl.BSGS {
			// One unit per giant step, not per group: a layer has few
			// groups (ResNet-18's layer4: 8) and coarse units stall a step
			// when a worker is descheduled on a shared machine. The giant
			// steps of a group are then summed in order, as groupBSGS does.
			G := pl.C() / pl.Baby
			steps := make([]handle, pl.Groups()*G)
			if err := forEach(len(engines), len(steps), func(w, i int) error {
				h, err := pl.giantStep(engines[w], ops, i/G, i%G)
				steps[i] = h
				return err
			}); err != nil {
				return err
			}
			if err := forEach(len(engines), pl.Groups(), func(w, g int) error {
				var res handle
				for _, h := range steps[g*G : (g+1)*G] {
					var err error
					if res == nil {
						res = h
					} else if res, err = engines[w].add(res, h); err != nil {
						return err
					}
				}
				if res == nil {
					return fmt.Errorf("linear: empty BSGS group %d", g)
				}
				return engines[w].output(res, tile, g)
			}); err != nil {
				return err
			}
			continue
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
