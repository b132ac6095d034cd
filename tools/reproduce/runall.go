package reproduce

import (
	"fmt"
	"sync"
)

// RunAll runs figs on r all at once (the runner bounds the work running at
// a time and shares what figures have in common) and returns their results
// in the order of figs. done, if set, is called as each figure completes,
// in the order they complete, one call at a time; an error it returns
// counts as the figure's. The error returned is the first, in the order of
// figs, of the figures that failed; the others still run to the end.
func RunAll(r *Runner, figs []Figure, done func(f Figure, res *Result) error) ([]*Result, error) {
	results := make([]*Result, len(figs))
	errs := make([]error, len(figs))
	var wg sync.WaitGroup
	var doneMu sync.Mutex
	for i, f := range figs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := f.Run(r)
			if err != nil {
				errs[i] = fmt.Errorf("figure %s: %w", f.ID, err)
				return
			}
			if done != nil {
				doneMu.Lock()
				err = done(f, res)
				doneMu.Unlock()
				if err != nil {
					errs[i] = err
					return
				}
			}
			results[i] = res
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return results, err
		}
	}
	return results, nil
}
