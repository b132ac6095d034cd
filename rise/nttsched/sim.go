package nttsched

import (
	"fmt"
	"math/bits"
)

// Stats is the outcome of a simulation.
type Stats struct {
	Cycles         int // issue cycles plus stalls and pipeline drains
	ReadConflicts  int // cycles in which some bank was asked for more reads than it has ports
	SamePairInputs int // butterflies whose two inputs sit in the same bank
	MaxWriteBuffer int // largest write-buffer occupancy of any bank (elements)
	BufferedWrites int // writes that could not land in their own cycle
}

// Event is one cycle of a trace (for printing small cases, e.g. N = 32).
type Event struct {
	Cycle  int
	Reads  []Loc
	Writes []Loc // writes that reached the banks this cycle
	Buffer []int // occupancy per bank after the cycle
}

type pendingWrite struct {
	loc Loc
	val uint64
}

// Simulate runs the schedule on input a (len N, values < q) with twiddles
// tw(j) = ψ^brev(j) mod q and returns the transformed vector read back
// through the layout (Lattigo's bit-reversed order), the statistics and,
// when trace is true, the per-cycle events.
func (s *Schedule) Simulate(a []uint64, q uint64, tw func(int) uint64, trace bool) ([]uint64, Stats, []Event, error) {
	if len(a) != s.N {
		return nil, Stats{}, nil, fmt.Errorf("nttsched: input has %d values, want %d", len(a), s.N)
	}
	var st Stats
	var events []Event
	mem := make([][]uint64, s.Banks)
	for b := range mem {
		mem[b] = make([]uint64, s.N/s.Banks)
	}
	seen := make(map[Loc]bool, s.N)
	for x := 0; x < s.N; x++ {
		l := s.Layout(x)
		if l.Bank < 0 || l.Bank >= s.Banks || l.Offset < 0 || l.Offset >= s.N/s.Banks || seen[l] {
			return nil, st, nil, fmt.Errorf("nttsched: layout of %d is not a bijection onto the banks", x)
		}
		seen[l] = true
		mem[l.Bank][l.Offset] = a[x]
	}
	queues := make([][]pendingWrite, s.Banks)
	inflight := map[int][]pendingWrite{} // cycle → writes arriving then
	cycle := 0
	busy := func() bool {
		if len(inflight) > 0 {
			return true
		}
		for _, qu := range queues {
			if len(qu) > 0 {
				return true
			}
		}
		return false
	}
	step := func(reads []Loc) {
		// New writes join their bank's buffer, then each bank serves its
		// reads first and spends remaining ports on buffered writes.
		for _, w := range inflight[cycle] {
			queues[w.loc.Bank] = append(queues[w.loc.Bank], w)
		}
		delete(inflight, cycle)
		nreads := make([]int, s.Banks)
		for _, r := range reads {
			nreads[r.Bank]++
		}
		conflict := false
		var landed []Loc
		for b := range queues {
			if nreads[b] > s.PortsN {
				conflict = true
			}
			free := s.PortsN
			if s.Ports == RW {
				free = max(0, s.PortsN-nreads[b])
			}
			n := min(free, len(queues[b]))
			for _, w := range queues[b][:n] {
				mem[b][w.loc.Offset] = w.val
				landed = append(landed, w.loc)
			}
			if len(queues[b]) > n {
				st.BufferedWrites += len(queues[b]) - n
			}
			queues[b] = queues[b][n:]
			st.MaxWriteBuffer = max(st.MaxWriteBuffer, len(queues[b]))
		}
		if conflict {
			st.ReadConflicts++
		}
		if trace {
			ev := Event{Cycle: cycle, Reads: reads, Writes: landed, Buffer: make([]int, s.Banks)}
			for b := range queues {
				ev.Buffer[b] = len(queues[b])
			}
			events = append(events, ev)
		}
		cycle++
	}
	for _, stage := range s.Stages {
		for _, bfs := range stage {
			var reads []Loc
			for _, b := range bfs {
				lx, ly := s.Layout(b.X), s.Layout(b.Y)
				if lx.Bank == ly.Bank {
					st.SamePairInputs++
				}
				reads = append(reads, lx, ly)
				u, v := mem[lx.Bank][lx.Offset], mem[ly.Bank][ly.Offset]
				t := mulMod(v, tw(b.W), q)
				x, y := (u+t)%q, (u+q-t)%q
				at := cycle + s.Latency
				inflight[at] = append(inflight[at], pendingWrite{lx, x}, pendingWrite{ly, y})
			}
			step(reads)
		}
		// Pipeline drain: the next stage reads what this one wrote.
		for busy() {
			step(nil)
		}
	}
	st.Cycles = cycle
	out := make([]uint64, s.N)
	for x := range out {
		l := s.Layout(x)
		out[x] = mem[l.Bank][l.Offset]
	}
	return out, st, events, nil
}

func mulMod(a, b, q uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	_, r := bits.Div64(hi%q, lo, q)
	return r
}
