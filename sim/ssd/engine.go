package ssd

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/sim/eventsim"
)

// ChainCycles is the AU-array cycles of a chain of kernels under vector
// chaining on one shared datapath: the sum of each kernel's cycles (see the
// package doc for the assumption).
func ChainCycles(dp arch.Datapath, ops []arch.Op) (int64, error) {
	var total int64
	for i, op := range ops {
		c, err := dp.Cycles(op)
		if err != nil {
			return 0, fmt.Errorf("ssd: op %d: %w", i, err)
		}
		total += c
	}
	return total, nil
}

// EngineStats are the engine's counters.
type EngineStats struct {
	Chains    uint64
	Cycles    int64
	PerKernel map[arch.Kernel]int64 // cycles by kernel
	Busy      eventsim.Time
}

// Engine is the FHE engine: one AU array, a FIFO resource that runs one
// chain of kernels at a time.
type Engine struct {
	sim       *eventsim.Sim
	dp        arch.Datapath
	array     *eventsim.Server
	cycles    int64
	perKernel [arch.MaxKernel + 1]int64
}

// NewEngine builds the engine of e.
func NewEngine(sim *eventsim.Sim, e arch.Engine) (*Engine, error) {
	dp := e.Datapath()
	if dp.Lanes <= 0 || dp.FreqMHz <= 0 {
		return nil, fmt.Errorf("ssd: engine with %d lanes at %d MHz", dp.Lanes, dp.FreqMHz)
	}
	return &Engine{sim: sim, dp: dp, array: eventsim.NewServer(sim, "engine", eventsim.Rate{})}, nil
}

// Datapath is the engine's datapath description.
func (e *Engine) Datapath() arch.Datapath { return e.dp }

// Run queues a chain of kernels on the AU array (behind earlier chains) and
// calls done when it finishes; it returns the finish time.
func (e *Engine) Run(ops []arch.Op, done func()) (eventsim.Time, error) {
	var total int64
	var per [arch.MaxKernel + 1]int64
	for i, op := range ops {
		c, err := e.dp.Cycles(op)
		if err != nil {
			return 0, fmt.Errorf("ssd: engine op %d: %w", i, err)
		}
		total += c
		per[op.Kernel] += c
	}
	for k := range per {
		e.perKernel[k] += per[k]
	}
	e.cycles += total
	return e.array.Occupy(eventsim.Time(e.dp.Picoseconds(total)), done), nil
}

// Stats returns the engine's counters.
func (e *Engine) Stats() EngineStats {
	st := EngineStats{Chains: e.array.Stats().Requests, Cycles: e.cycles, Busy: e.array.Stats().Busy,
		PerKernel: map[arch.Kernel]int64{}}
	for _, k := range arch.Kernels() {
		if e.perKernel[k] != 0 {
			st.PerKernel[k] = e.perKernel[k]
		}
	}
	return st
}

// Utilization is the engine's busy fraction over a window.
func (e *Engine) Utilization(over eventsim.Time) float64 { return e.array.Stats().Utilization(over) }
