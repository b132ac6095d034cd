package nttsched

import (
	"fmt"
	"testing"

	"github.com/rosemary-fhe/rosemary/rise/edge"
)

const q = 1053818881 // SEAL-Embedded 30-bit prime, 1 mod 2^20

func run(t *testing.T, cfg Config) Stats {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ntt, err := edge.NewTableNTT(cfg.N, q)
	if err != nil {
		t.Fatal(err)
	}
	a := make([]uint64, cfg.N)
	for i := range a {
		a[i] = uint64(i*i*7919+13) % q
	}
	got, st, _, err := s.Simulate(a, q, ntt.Twiddle, false)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]uint64(nil), a...)
	ntt.Forward(want)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%+v: banked NTT differs from the reference at %d", cfg, i)
		}
	}
	return st
}

var sizes = []int{32, 64, 256, 1024, 4096}

// RISE's claim: four single-port banks of N/4 with the swap4 reordering
// never need two reads from one bank, and one buffered element per bank is
// enough, for any pipeline depth.
func TestSwap4SinglePortOneElementBuffer(t *testing.T) {
	for _, n := range sizes {
		for _, lat := range []int{1, 2, 3, 4, 5, 6, 7} {
			st := run(t, Config{N: n, Scheme: Swap4, Banks: 4, Ports: RW, PortsN: 1, BFUs: 1, Latency: lat})
			if st.ReadConflicts != 0 || st.SamePairInputs != 0 {
				t.Fatalf("N=%d L=%d: %d read conflicts, %d same-bank inputs", n, lat, st.ReadConflicts, st.SamePairInputs)
			}
			if st.MaxWriteBuffer > 1 {
				t.Fatalf("N=%d L=%d: write buffer reached %d elements", n, lat, st.MaxWriteBuffer)
			}
			// No stall beyond the per-stage pipeline drain.
			logN := 0
			for 1<<logN < n {
				logN++
			}
			if maxC := logN * (n/2 + lat + 1); st.Cycles > maxC {
				t.Fatalf("N=%d L=%d: %d cycles > %d", n, lat, st.Cycles, maxC)
			}
		}
	}
}

// The naive in-place order on the same four single-port banks: both inputs
// of a butterfly often sit in one bank, and reads and writes of long runs
// collide so the write buffer grows towards the bank size (N/4).
func TestNaiveConflicts(t *testing.T) {
	for _, n := range sizes {
		st := run(t, Config{N: n, Scheme: Naive, Banks: 4, Ports: RW, PortsN: 1, BFUs: 1, Latency: 4})
		if st.ReadConflicts == 0 || st.SamePairInputs == 0 {
			t.Fatalf("N=%d: naive order shows no read conflicts", n)
		}
		if st.MaxWriteBuffer < n/8 {
			t.Fatalf("N=%d: naive write buffer only %d (< N/8)", n, st.MaxWriteBuffer)
		}
		// Two 1R1W banks of N/2 (the swap2 setting): still read conflicts.
		st2 := run(t, Config{N: n, Scheme: Naive, Banks: 2, Ports: R1W1, PortsN: 1, BFUs: 1, Latency: 4})
		if st2.SamePairInputs == 0 {
			t.Fatalf("N=%d: naive order on two banks shows no conflicts", n)
		}
	}
}

// swap2 fixes two 1R1W banks (inputs always in different banks, no write
// buffering) but not four 1RW banks: there reads and writes collide and the
// buffer grows with N, which is the problem swap4 solves.
func TestSwap2(t *testing.T) {
	for _, n := range sizes {
		st := run(t, Config{N: n, Scheme: Swap2, Banks: 2, Ports: R1W1, PortsN: 1, BFUs: 1, Latency: 4})
		if st.ReadConflicts != 0 || st.SamePairInputs != 0 || st.MaxWriteBuffer != 0 {
			t.Fatalf("N=%d: swap2 on 1R1W banks: %+v", n, st)
		}
		st4 := run(t, Config{N: n, Scheme: Swap2, Banks: 4, Ports: RW, PortsN: 1, BFUs: 1, Latency: 4})
		if st4.MaxWriteBuffer <= 1 {
			t.Fatalf("N=%d: swap2 on four 1RW banks needs only %d buffered writes", n, st4.MaxWriteBuffer)
		}
		t.Logf("N=%d swap2 on 4×1RW: max write buffer %d, read conflicts %d", n, st4.MaxWriteBuffer, st4.ReadConflicts)
	}
}

// Parallel BFUs (1 … 32) with P-port banks: swap4 keeps every bank within
// its ports and buffers at most one element per port.
func TestSwap4ParallelBFUs(t *testing.T) {
	for _, n := range []int{128, 1024, 4096} {
		for p := 1; p <= 32 && p <= n/4; p *= 2 {
			for _, lat := range []int{3, 4} {
				cfg := Config{N: n, Scheme: Swap4, Banks: 4, Ports: RW, PortsN: p, BFUs: p, Latency: lat}
				st := run(t, cfg)
				if st.ReadConflicts != 0 || st.MaxWriteBuffer > p {
					t.Fatalf("N=%d P=%d L=%d: %+v", n, p, lat, st)
				}
				naive := run(t, Config{N: n, Scheme: Naive, Banks: 4, Ports: RW, PortsN: p, BFUs: p, Latency: lat})
				// With P ≥ N/16 ports a bank serves a quarter of its words
				// per cycle and even the naive order fits; below that it does not.
				if p < n/16 && naive.ReadConflicts == 0 && naive.MaxWriteBuffer <= p {
					t.Fatalf("N=%d P=%d: naive order without conflicts: %+v", n, p, naive)
				}
			}
		}
	}
}

// Figure 6 size (N = 32): the trace of stage 0 alternates bank pairs.
func TestTraceN32(t *testing.T) {
	s, _ := New(Config{N: 32, Scheme: Swap4, Banks: 4, Ports: RW, PortsN: 1, BFUs: 1, Latency: 4})
	ntt, _ := edge.NewTableNTT(32, q)
	_, _, ev, err := s.Simulate(make([]uint64, 32), q, ntt.Twiddle, true)
	if err != nil {
		t.Fatal(err)
	}
	for c := 1; c < 16; c++ {
		prev := map[int]bool{ev[c-1].Reads[0].Bank: true, ev[c-1].Reads[1].Bank: true}
		if prev[ev[c].Reads[0].Bank] || prev[ev[c].Reads[1].Bank] {
			t.Fatalf("cycles %d and %d read the same bank: %v %v", c-1, c, ev[c-1].Reads, ev[c].Reads)
		}
	}
	if testing.Verbose() {
		for _, e := range ev[:20] {
			fmt.Printf("cycle %2d reads %v writes %v buffer %v\n", e.Cycle, e.Reads, e.Writes, e.Buffer)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	bad := []Config{
		{N: 30, Scheme: Swap4, Banks: 4, PortsN: 1, BFUs: 1, Latency: 1},
		{N: 32, Scheme: Swap4, Banks: 2, PortsN: 1, BFUs: 1, Latency: 1},
		{N: 32, Scheme: Swap4, Banks: 4, PortsN: 1, BFUs: 16, Latency: 1},
		{N: 32, Scheme: Swap4, Banks: 4, PortsN: 1, BFUs: 1, Latency: 0},
	}
	for _, c := range bad {
		if _, err := New(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
