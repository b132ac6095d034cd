package lwepir

import "context"

// Gate grants a core for one chunk of a server's work (a block of a scan,
// a giant step of the hint): Acquire waits for it and returns the function
// that gives it back. A device sharing its cores between callers passes
// one (package device/admit's Cores); nil runs ungated.
type Gate interface {
	Acquire(ctx context.Context) (release func(), err error)
}

// enter takes a core from g, if any.
func enter(ctx context.Context, g Gate) (func(), error) {
	if g == nil {
		return func() {}, nil
	}
	return g.Acquire(ctx)
}
