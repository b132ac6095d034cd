package arch

import (
	"fmt"
	"math/bits"
)

// Kernel is a datapath-level kernel over RNS limbs. The compiler maps its ISA
// opcodes onto these; the simulator charges each with Datapath.Cycles.
type Kernel uint8

// Kernels. The zero value is invalid so an unset field is caught.
const (
	NTT Kernel = iota + 1
	INTT
	ModAdd
	ModSub
	ModMul
	ModMAC
	Automorph
	BConv
	Load
	Store
	// LWEMAC is the first dimension of an LWE PIR: a limb of N words each
	// packing four matrix bytes, multiplied byte by byte with 32-bit query
	// words and accumulated modulo 2^32 (isa.OpLWEMAC): 4N byte MACs.
	LWEMAC
)

// MaxKernel is the last kernel: arrays indexed by kernel have
// MaxKernel+1 entries.
const MaxKernel = LWEMAC

var kernelNames = [...]string{
	NTT: "NTT", INTT: "INTT", ModAdd: "MODADD", ModSub: "MODSUB", ModMul: "MODMUL",
	ModMAC: "MODMAC", Automorph: "AUTOMORPH", BConv: "BCONV", Load: "LD", Store: "ST", LWEMAC: "LWEMAC",
}

// Kernels lists every valid kernel in order.
func Kernels() []Kernel {
	return []Kernel{NTT, INTT, ModAdd, ModSub, ModMul, ModMAC, Automorph, BConv, Load, Store, LWEMAC}
}

// Valid reports whether k is a defined kernel.
func (k Kernel) Valid() bool { return k >= NTT && k <= MaxKernel }

func (k Kernel) String() string {
	if !k.Valid() {
		return fmt.Sprintf("Kernel(%d)", uint8(k))
	}
	return kernelNames[k]
}

// ParseKernel is the inverse of String.
func ParseKernel(s string) (Kernel, error) {
	for _, k := range Kernels() {
		if kernelNames[k] == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("arch: unknown kernel %q", s)
}

// IsMemory reports whether k moves data rather than computing (LD/ST):
// it costs no datapath cycles, only bytes at the memory it touches.
func (k Kernel) IsMemory() bool { return k == Load || k == Store }

// Unit is the functional-unit class a kernel occupies. On the Rosemary
// engine all classes share one AU array; a SHARP-class host accelerator has
// separate units per class that can run concurrently.
type Unit uint8

// Functional-unit classes.
const (
	UnitNone  Unit = iota // memory kernels
	UnitNTT               // NTT, INTT
	UnitBConv             // BConv
	UnitEW                // element-wise MODADD/MODSUB/MODMUL/MODMAC
	UnitAuto              // automorphism
)

// Unit returns the unit class of k.
func (k Kernel) Unit() Unit {
	switch k {
	case NTT, INTT:
		return UnitNTT
	case BConv:
		return UnitBConv
	case ModAdd, ModSub, ModMul, ModMAC, LWEMAC:
		return UnitEW
	case Automorph:
		return UnitAuto
	}
	return UnitNone
}

// Datapath is what the cost functions need to know about an FHE datapath:
// lanes (each lane holds one butterfly unit = one modular multiplier plus a
// modular adder/subtractor), clock and word width.
type Datapath struct {
	Name     string
	Lanes    int
	FreqMHz  int
	WordBits int
	// NTTPipelined: the NTT unit holds all log2 N stages in hardware and
	// takes Lanes coefficients per cycle. When false (Rosemary's AUs, GC-NTT)
	// the stages iterate over the same lanes.
	NTTPipelined bool
	// BConvLanes and EWLanes are the base-conversion and element-wise
	// units' words per cycle where they differ from Lanes (0: Lanes).
	BConvLanes, EWLanes int
	// LWEBytesPerLane is the matrix bytes one element-wise lane
	// multiplies by a 32-bit word and accumulates per cycle in LWEMAC
	// (0: 1, a lane's multiplier taking one byte × one word).
	LWEBytesPerLane int
}

// Op is one kernel invocation: Count limbs of ring degree N. For BConv,
// Count is the number of (input limb, output limb) pairs, i.e. in x out for
// a conversion from in limbs to out limbs (see BConvCount).
type Op struct {
	Kernel Kernel
	N      int
	Count  int
}

// BConvCount is the Op.Count of a base conversion from in to out limbs.
func BConvCount(in, out int) int { return in * out }

// log2 returns log2(n) for a power of two n >= 2, or an error.
func log2(n int) (int, error) {
	if n < 2 || n&(n-1) != 0 || n > 1<<30 {
		return 0, fmt.Errorf("arch: ring degree N=%d is not a power of two in [2, 2^30]", n)
	}
	return bits.TrailingZeros(uint(n)), nil
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

func (d Datapath) check() error {
	if d.Lanes <= 0 || d.FreqMHz <= 0 || d.WordBits <= 0 || d.WordBits > 64 || d.LWEBytesPerLane < 0 {
		return fmt.Errorf("arch: datapath %q: lanes %d, freq %d MHz, word %d bits must be positive (word <= 64), LWE bytes per lane %d not negative",
			d.Name, d.Lanes, d.FreqMHz, d.WordBits, d.LWEBytesPerLane)
	}
	return nil
}

// LimbCycles is the datapath cycles of one kernel on one limb of degree N
// (for BConv: one input-limb x output-limb MAC pass). Memory kernels cost 0.
//
//   - NTT/INTT, iterative (GC-NTT on the AU array): log2 N stages, each of
//     N/2 butterflies over Lanes butterfly units; GC-NTT keeps every stage's
//     geometry constant, so each stage takes ceil(N/2 / Lanes) cycles.
//   - NTT/INTT, fully pipelined unit: ceil(N / Lanes) cycles per limb.
//   - MODADD/MODSUB/MODMUL/MODMAC: one coefficient per lane per cycle,
//     ceil(N / Lanes).
//   - AUTOMORPH: one pass of every coefficient through the X/Y switches,
//     one coefficient per lane per cycle, ceil(N / Lanes).
//   - BConv on the (i)NTT datapath: one modular MAC per lane per cycle, so
//     one (in, out) limb pair is N MACs = ceil(N / Lanes) cycles.
//   - LWEMAC: 4N byte multiply-accumulates (a limb of N words packs four
//     bytes each) over the element-wise lanes, LWEBytesPerLane bytes per
//     lane per cycle: ceil(4N / (Lanes·LWEBytesPerLane)). Modulo 2^32 a
//     MAC is a truncated multiply-add: no reduction step.
//   - BConvLanes / EWLanes, where set, replace Lanes for BConv and the
//     element-wise kernels (separate, wider units).
func (d Datapath) LimbCycles(k Kernel, n int) (int64, error) {
	if err := d.check(); err != nil {
		return 0, err
	}
	lg, err := log2(n)
	if err != nil {
		return 0, err
	}
	lanes, nn := int64(d.Lanes), int64(n)
	switch k {
	case NTT, INTT:
		if d.NTTPipelined {
			return ceilDiv(nn, lanes), nil
		}
		return int64(lg) * ceilDiv(nn/2, lanes), nil
	case ModAdd, ModSub, ModMul, ModMAC:
		if d.EWLanes > 0 {
			return ceilDiv(nn, int64(d.EWLanes)), nil
		}
		return ceilDiv(nn, lanes), nil
	case BConv:
		if d.BConvLanes > 0 {
			return ceilDiv(nn, int64(d.BConvLanes)), nil
		}
		return ceilDiv(nn, lanes), nil
	case Automorph:
		return ceilDiv(nn, lanes), nil
	case LWEMAC:
		if d.EWLanes > 0 {
			lanes = int64(d.EWLanes)
		}
		return ceilDiv(4*nn, lanes*int64(max(1, d.LWEBytesPerLane))), nil
	case Load, Store:
		return 0, nil
	}
	return 0, fmt.Errorf("arch: invalid kernel %d", uint8(k))
}

// Cycles is the datapath cycles of op: Count x LimbCycles (kernels of one Op
// stream back to back through the pipeline, so there is no per-limb gap).
func (d Datapath) Cycles(op Op) (int64, error) {
	if op.Count < 0 {
		return 0, fmt.Errorf("arch: %v count %d is negative", op.Kernel, op.Count)
	}
	c, err := d.LimbCycles(op.Kernel, op.N)
	if err != nil {
		return 0, fmt.Errorf("arch: %v: %w", op.Kernel, err)
	}
	return c * int64(op.Count), nil
}

// BytesPerLimb is the size of one limb of degree N in this datapath's word
// width: N x WordBits / 8 bytes (words are packed; for 32-bit words this is
// N x 4).
func (d Datapath) BytesPerLimb(n int) (int64, error) {
	if err := d.check(); err != nil {
		return 0, err
	}
	if _, err := log2(n); err != nil {
		return 0, err
	}
	return ceilDiv(int64(n)*int64(d.WordBits), 8), nil
}

// Bytes is the data an op moves for memory kernels (LD/ST: Count limbs).
// Compute kernels return the bytes of their Count output limbs (for BConv,
// pass the output limb count separately via BytesPerLimb).
func (d Datapath) Bytes(op Op) (int64, error) {
	b, err := d.BytesPerLimb(op.N)
	if err != nil {
		return 0, err
	}
	if op.Count < 0 {
		return 0, fmt.Errorf("arch: %v count %d is negative", op.Kernel, op.Count)
	}
	return b * int64(op.Count), nil
}

// Picoseconds converts datapath cycles to picoseconds, rounding up.
func (d Datapath) Picoseconds(cycles int64) int64 {
	if d.FreqMHz <= 0 {
		return 0
	}
	// cycles / (MHz * 1e6) s = cycles * 1e6 / MHz ps, split so that the
	// product cannot overflow for any cycle count that fits in int64 time.
	m := int64(d.FreqMHz)
	return cycles/m*1_000_000 + ceilDiv(cycles%m*1_000_000, m)
}

// Seconds converts datapath cycles to seconds.
func (d Datapath) Seconds(cycles int64) float64 {
	return float64(cycles) / (float64(d.FreqMHz) * 1e6)
}
