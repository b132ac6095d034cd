package tdap

import "fmt"

// Result is a complete partition of a program: the optimal placement and its
// cost, a topological order with the fewest device switches for it, the
// segments of that order, and the transfers at the cuts.
type Result struct {
	Assignment Assignment
	Cost       int64
	Order      []int
	Segments   []Segment
	Transfers  []Transfer
}

// Partition runs Solve, SegmentOrder, Segments and Transfers on p, which must
// be acyclic. A caller with its own schedule (for example a liveness-aware
// order) can instead call Solve and then Segments with that order.
func Partition(p Problem) (Result, error) {
	a, c, err := Solve(p)
	if err != nil {
		return Result{}, err
	}
	order, err := SegmentOrder(p, a)
	if err != nil {
		return Result{}, fmt.Errorf("tdap: partition: %w", err)
	}
	segs, err := Segments(order, a)
	if err != nil {
		return Result{}, fmt.Errorf("tdap: partition: %w", err)
	}
	ts, err := Transfers(p, a)
	if err != nil {
		return Result{}, fmt.Errorf("tdap: partition: %w", err)
	}
	return Result{Assignment: a, Cost: c, Order: order, Segments: segs, Transfers: ts}, nil
}
