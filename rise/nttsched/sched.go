package nttsched

import (
	"fmt"
	"math/bits"
)

// Scheme selects the layout and issue order.
type Scheme int

const (
	Naive Scheme = iota
	Swap2
	Swap4
)

func (s Scheme) String() string {
	switch s {
	case Naive:
		return "naive"
	case Swap2:
		return "swap2"
	case Swap4:
		return "swap4"
	}
	return fmt.Sprintf("Scheme(%d)", int(s))
}

// PortKind is the memory port organisation of a bank.
type PortKind int

const (
	// RW banks have Ports shared read/write ports (1RW for Ports = 1).
	RW PortKind = iota
	// R1W1 banks have Ports read ports and Ports separate write ports (1R1W).
	R1W1
)

// Config describes one experiment.
type Config struct {
	N       int      // transform size, power of two ≥ 8
	Scheme  Scheme   // layout and order
	Banks   int      // 2 or 4
	Ports   PortKind // RW or R1W1
	PortsN  int      // ports per bank (of each kind); ≥ BFUs for parallel BFUs
	BFUs    int      // butterflies issued per cycle
	Latency int      // BFU pipeline depth in cycles (≥ 1)
}

// Butterfly is one butterfly: logical inputs X < Y = X+h, twiddle index W.
type Butterfly struct{ X, Y, W int }

// Loc is a physical location.
type Loc struct{ Bank, Offset int }

// Schedule is a layout plus a per-stage issue order (cycles of ≤ BFUs
// butterflies).
type Schedule struct {
	Config
	logN   int
	Stages [][][]Butterfly // stage → cycle → butterflies
}

// New builds the schedule of cfg.
func New(cfg Config) (*Schedule, error) {
	if cfg.N < 8 || cfg.N&(cfg.N-1) != 0 {
		return nil, fmt.Errorf("nttsched: N=%d not a power of two ≥ 8", cfg.N)
	}
	if cfg.Banks != 2 && cfg.Banks != 4 {
		return nil, fmt.Errorf("nttsched: %d banks (want 2 or 4)", cfg.Banks)
	}
	if cfg.BFUs < 1 || cfg.BFUs > cfg.N/4 || cfg.BFUs&(cfg.BFUs-1) != 0 {
		return nil, fmt.Errorf("nttsched: %d BFUs (want a power of two in [1, N/4])", cfg.BFUs)
	}
	if cfg.PortsN < 1 {
		return nil, fmt.Errorf("nttsched: %d ports per bank", cfg.PortsN)
	}
	if cfg.Latency < 1 {
		return nil, fmt.Errorf("nttsched: latency %d < 1", cfg.Latency)
	}
	if cfg.Scheme == Swap4 && cfg.Banks != 4 {
		return nil, fmt.Errorf("nttsched: swap4 needs 4 banks")
	}
	s := &Schedule{Config: cfg, logN: bits.Len(uint(cfg.N)) - 1}
	for m, h := 1, cfg.N/2; m < cfg.N; m, h = m*2, h/2 {
		var natural []Butterfly
		for i := 0; i < m; i++ {
			for j := 2 * i * h; j < 2*i*h+h; j++ {
				natural = append(natural, Butterfly{X: j, Y: j + h, W: m + i})
			}
		}
		order := natural
		if cfg.Scheme == Swap4 {
			order = s.alternate(natural)
		}
		var cycles [][]Butterfly
		for k := 0; k < len(order); k += cfg.BFUs {
			cycles = append(cycles, order[k:k+cfg.BFUs])
		}
		s.Stages = append(s.Stages, cycles)
	}
	return s, nil
}

// swap4 bank of x: bit 0 = parity(x), bit 1 = parity(x & 0x…5555).
func swap4Bank(x int) int {
	return bits.OnesCount(uint(x))&1 | (bits.OnesCount(uint(x)&0x5555555555555555)&1)<<1
}

// pairClass tells which of the two complementary bank pairs butterfly b
// uses in swap4: the pairing is fixed per stage by d = bank(x) ⊕ bank(y).
func pairClass(b Butterfly) int {
	bx, by := swap4Bank(b.X), swap4Bank(b.Y)
	d := bx ^ by
	switch d {
	case 1: // pairs {0,1} {2,3}
		return bx >> 1
	case 2: // pairs {0,2} {1,3}
		return bx & 1
	default: // d = 3: pairs {0,3} {1,2}
		return (bx ^ bx>>1) & 1
	}
}

// alternate reorders a stage (the RISE reordering unit): BFUs butterflies of
// one pair class, then BFUs of the other, and so on.
func (s *Schedule) alternate(natural []Butterfly) []Butterfly {
	var cls [2][]Butterfly
	for _, b := range natural {
		c := pairClass(b)
		cls[c] = append(cls[c], b)
	}
	out := make([]Butterfly, 0, len(natural))
	p := s.BFUs
	for k := 0; len(out) < len(natural); k++ {
		c := k & 1
		n := min(p, len(cls[c]))
		out = append(out, cls[c][:n]...)
		cls[c] = cls[c][n:]
		if n == 0 { // unbalanced: drain the other class
			out = append(out, cls[1-c]...)
			cls[1-c] = nil
		}
	}
	return out
}

// Layout returns the location of logical element x.
func (s *Schedule) Layout(x int) Loc {
	n := s.N
	switch s.Scheme {
	case Naive:
		size := n / s.Banks
		return Loc{Bank: x / size, Offset: x % size}
	case Swap2:
		par := bits.OnesCount(uint(x)) & 1
		if s.Banks == 2 {
			return Loc{Bank: par, Offset: x >> 1}
		}
		// Each 1R1W bank of N/2 split into two single-port banks of N/4.
		half := (x >> 1) / (n / 4)
		return Loc{Bank: 2*par + half, Offset: (x >> 1) % (n / 4)}
	default:
		return Loc{Bank: swap4Bank(x), Offset: x >> 2}
	}
}
