package engine

import (
	"fmt"
	"time"

	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// WordBytes is the size of one coefficient in the interpreter's memory.
// (The hardware models rescale byte counts to their own word size.)
const WordBytes = 8

// Stats counts what a run did.
type Stats struct {
	Instructions int64
	ByOp         map[isa.Opcode]int64
	// MicroOps counts limb kernels: one per limb an NTT, INTT, element-wise
	// op, automorphism, LD or ST touches; a BCONV from k to m moduli counts
	// k scalings plus k·m multiply-accumulates.
	MicroOps int64
	// Bytes read from and written to each memory space.
	BytesRead, BytesWritten map[isa.Space]int64
	// Nanos is the wall time spent per opcode (only when Machine.Timing).
	Nanos map[isa.Opcode]int64
}

func newStats() Stats {
	return Stats{ByOp: map[isa.Opcode]int64{}, BytesRead: map[isa.Space]int64{}, BytesWritten: map[isa.Space]int64{}}
}

// Add accumulates o into s.
func (s *Stats) Add(o Stats) {
	if s.ByOp == nil {
		*s = newStats()
	}
	s.Instructions += o.Instructions
	s.MicroOps += o.MicroOps
	for k, v := range o.ByOp {
		s.ByOp[k] += v
	}
	for k, v := range o.BytesRead {
		s.BytesRead[k] += v
	}
	for k, v := range o.BytesWritten {
		s.BytesWritten[k] += v
	}
}

// Machine interprets mPrograms. It is not safe for concurrent use.
type Machine struct {
	cfg   isa.Config
	n     int
	mods  []rns.Modulus
	ntt   []*rns.NTTTable
	gal   [][]uint32
	bconv []*rns.BConv
	// sram and edram are the slots' current contents; own is each slot's
	// own buffer. After an LD from a LimbViewer a slot may view the
	// object's limb without copying; the first write to it copies the view
	// into the slot's own buffer (copy on write).
	sram, sramOwn   [][]uint64
	edram, edramOwn [][]uint64
	mem             ObjectMemory
	tmp             []uint64
	bcTmp           []uint64
	limbIn          [][]uint64
	limbOu          [][]uint64

	// Timing makes Run record the wall time per opcode in Stats.Nanos.
	Timing bool
}

// NewMachine prepares a machine for programs with configuration cfg whose
// LD/ST operands live in mem.
func NewMachine(cfg isa.Config, mem ObjectMemory) (*Machine, error) {
	return NewMachineSlots(cfg, mem, nil)
}

// NewMachineSlots is NewMachine whose SRAM slots are the first
// cfg.SRAMSlots of sram (allocated if sram has fewer): machines that never
// run at the same time, and keep nothing in their slots between runs, can
// share one set.
func NewMachineSlots(cfg isa.Config, mem ObjectMemory, sram [][]uint64) (*Machine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Machine{cfg: cfg, n: cfg.N(), mem: mem}
	m.mods = make([]rns.Modulus, len(cfg.Moduli))
	m.ntt = make([]*rns.NTTTable, len(cfg.Moduli))
	for i, q := range cfg.Moduli {
		t, err := nttTable(m.n, q)
		if err != nil {
			return nil, err
		}
		m.ntt[i] = t
		m.mods[i] = t.Modulus
	}
	for _, g := range cfg.Galois {
		idx, err := galoisIndex(m.n, g)
		if err != nil {
			return nil, fmt.Errorf("engine: %w", err)
		}
		m.gal = append(m.gal, idx)
	}
	for i, b := range cfg.Bases {
		from := make([]rns.Modulus, len(b.From))
		to := make([]rns.Modulus, len(b.To))
		for k, j := range b.From {
			from[k] = m.mods[j]
		}
		for k, j := range b.To {
			to[k] = m.mods[j]
		}
		bc, err := rns.NewBConv(from, to)
		if err != nil {
			return nil, fmt.Errorf("engine: basis %d: %w", i, err)
		}
		m.bconv = append(m.bconv, bc)
	}
	if len(sram) >= cfg.SRAMSlots && (cfg.SRAMSlots == 0 || len(sram[0]) == m.n) {
		m.sramOwn = sram[:cfg.SRAMSlots:cfg.SRAMSlots]
	} else {
		m.sramOwn = allocSlots(cfg.SRAMSlots, m.n)
	}
	m.edramOwn = allocSlots(cfg.EDRAMSlots, m.n)
	m.sram = append([][]uint64(nil), m.sramOwn...)
	m.edram = append([][]uint64(nil), m.edramOwn...)
	m.tmp = make([]uint64, m.n)
	return m, nil
}

func allocSlots(k, n int) [][]uint64 {
	backing := make([]uint64, k*n)
	s := make([][]uint64, k)
	for i := range s {
		s[i] = backing[i*n : (i+1)*n : (i+1)*n]
	}
	return s
}

// Slot returns the memory of a slot address for reading.
func (m *Machine) Slot(a isa.Addr) []uint64 {
	if a.Space() == isa.SpaceEDRAM {
		return m.edram[a.Index()]
	}
	return m.sram[a.Index()]
}

// out returns the memory of a slot for writing, ending any view (keep
// copies the viewed contents first, for instructions that also read Out).
func (m *Machine) out(a isa.Addr, keep bool) []uint64 {
	view, own := m.sram, m.sramOwn
	if a.Space() == isa.SpaceEDRAM {
		view, own = m.edram, m.edramOwn
	}
	i := a.Index()
	if &view[i][0] != &own[i][0] {
		if keep {
			copy(own[i], view[i])
		}
		view[i] = own[i]
	}
	return own[i]
}

// LimbViewer is an ObjectMemory that can lend a limb without copying once
// it has checked that every coefficient is below q.
type LimbViewer interface {
	ViewLimb(s isa.Space, obj, limb int, q uint64) ([]uint64, error)
}

// Run executes p, whose configuration must equal the machine's. It stops at
// the first failing instruction with an error naming it.
func (m *Machine) Run(p *isa.Program) (Stats, error) {
	st := newStats()
	if err := p.Validate(); err != nil {
		return st, err
	}
	if !sameConfig(&p.Config, &m.cfg) {
		return st, fmt.Errorf("engine: program configuration differs from the machine's")
	}
	limbBytes := int64(m.n * WordBytes)
	if m.Timing {
		st.Nanos = map[isa.Opcode]int64{}
	}
	for pc, in := range p.Code {
		var t0 time.Time
		if m.Timing {
			t0 = time.Now()
		}
		if err := m.exec(in, &st, limbBytes); err != nil {
			return st, fmt.Errorf("engine: instruction %d (%v): %w", pc, in, err)
		}
		if m.Timing {
			st.Nanos[in.Op] += time.Since(t0).Nanoseconds()
		}
		st.Instructions++
		st.ByOp[in.Op]++
	}
	return st, nil
}

func sameConfig(a, b *isa.Config) bool {
	if a.LogN != b.LogN || len(a.Moduli) != len(b.Moduli) || len(a.Scalars) != len(b.Scalars) ||
		len(a.Galois) != len(b.Galois) || len(a.Bases) != len(b.Bases) || a.SRAMSlots > b.SRAMSlots || a.EDRAMSlots > b.EDRAMSlots {
		return false
	}
	for i := range a.Moduli {
		if a.Moduli[i] != b.Moduli[i] {
			return false
		}
	}
	for i := range a.Scalars {
		if a.Scalars[i] != b.Scalars[i] {
			return false
		}
	}
	for i := range a.Galois {
		if a.Galois[i] != b.Galois[i] {
			return false
		}
	}
	for i := range a.Bases {
		if string(a.Bases[i].From) != string(b.Bases[i].From) || string(a.Bases[i].To) != string(b.Bases[i].To) {
			return false
		}
	}
	return true
}

func (m *Machine) exec(in isa.Instr, st *Stats, limbBytes int64) error {
	read := func(a isa.Addr, limbs int) { st.BytesRead[a.Space()] += int64(limbs) * limbBytes }
	write := func(a isa.Addr, limbs int) { st.BytesWritten[a.Space()] += int64(limbs) * limbBytes }
	mod := &m.mods[in.Mod]
	q := mod.Q
	switch in.Op {
	case isa.OpNTT, isa.OpINTT:
		a := m.Slot(in.A)
		out := m.out(in.Out, in.A == in.Out)
		if in.Op == isa.OpNTT {
			m.ntt[in.Mod].Forward(a, out)
		} else {
			m.ntt[in.Mod].Backward(a, out)
		}
		read(in.A, 1)
		write(in.Out, 1)
		st.MicroOps++
	case isa.OpModAdd, isa.OpModSub, isa.OpModMul, isa.OpModMAC:
		keep := in.Op == isa.OpModMAC || in.A == in.Out || (in.Flags&isa.FlagScalarB == 0 && in.B == in.Out)
		a := m.Slot(in.A)
		var bView []uint64
		if in.Flags&isa.FlagScalarB == 0 {
			bView = m.Slot(in.B)
		}
		out := m.out(in.Out, keep)
		if in.A == in.Out {
			a = out
		}
		if in.Flags&isa.FlagScalarB == 0 && in.B == in.Out {
			bView = out
		}
		scalar := in.Flags&isa.FlagScalarB != 0
		plain := in.Flags&isa.FlagPlain != 0
		var b []uint64
		var s uint64
		if scalar {
			s = m.cfg.Scalars[in.B.Index()]
		} else {
			b = bView
			read(in.B, 1)
		}
		switch {
		case in.Op == isa.OpModAdd && scalar:
			rns.AddScalar(a, s, out, q)
		case in.Op == isa.OpModAdd:
			rns.Add(a, b, out, q)
		case in.Op == isa.OpModSub && scalar:
			rns.SubScalar(a, s, out, q)
		case in.Op == isa.OpModSub:
			rns.Sub(a, b, out, q)
		case in.Op == isa.OpModMul:
			mul(a, b, s, out, mod, scalar, plain)
		default: // MODMAC
			if !scalar && !plain {
				rns.MACMont(a, b, out, mod)
			} else {
				mul(a, b, s, m.tmp, mod, scalar, plain)
				rns.Add(out, m.tmp, out, q)
			}
			read(in.Out, 1)
		}
		read(in.A, 1)
		write(in.Out, 1)
		st.MicroOps++
	case isa.OpAutomorph:
		rns.Permute(m.Slot(in.A), m.out(in.Out, false), m.gal[in.B.Index()])
		read(in.A, 1)
		write(in.Out, 1)
		st.MicroOps++
	case isa.OpBConv:
		return m.bconvInstr(in, st, limbBytes)
	case isa.OpLWEMAC:
		// Out[r] += Σ_j byte_j(A[r])·W[4g+j] mod 2^32: the four query words
		// are read before Out is written (B's slot may be Out).
		w := m.Slot(isa.Slot(in.B.Space(), in.B.Object()))[4*in.B.Limb():][:4]
		q0, q1, q2, q3 := uint32(w[0]), uint32(w[1]), uint32(w[2]), uint32(w[3])
		out := m.out(in.Out, true)
		a := m.Slot(in.A)
		if in.A == in.Out {
			a = out
		}
		for r, x := range a {
			d := uint32(x)
			out[r] = uint64(uint32(out[r]) + (d&0xFF)*q0 + (d>>8&0xFF)*q1 + (d>>16&0xFF)*q2 + (d>>24)*q3)
		}
		read(in.A, 1)
		read(in.B, 1)
		read(in.Out, 1)
		write(in.Out, 1)
		st.MicroOps++
	case isa.OpLD:
		if lv, ok := m.mem.(LimbViewer); ok {
			view, err := lv.ViewLimb(in.A.Space(), in.A.Object(), in.A.Limb(), q)
			if err != nil {
				return err
			}
			if len(view) != m.n {
				return fmt.Errorf("loaded limb %v has %d coefficients, want %d", in.A, len(view), m.n)
			}
			m.out(in.Out, false)
			if in.Out.Space() == isa.SpaceEDRAM {
				m.edram[in.Out.Index()] = view
			} else {
				m.sram[in.Out.Index()] = view
			}
		} else {
			dst := m.out(in.Out, false)
			if err := m.mem.ReadLimb(in.A.Space(), in.A.Object(), in.A.Limb(), dst); err != nil {
				return err
			}
			if err := checkReduced(dst, q, in.A); err != nil {
				return err
			}
		}
		read(in.A, 1)
		write(in.Out, 1)
		st.MicroOps++
	case isa.OpST:
		if err := m.mem.WriteLimb(in.Out.Space(), in.Out.Object(), in.Out.Limb(), m.Slot(in.A)); err != nil {
			return err
		}
		read(in.A, 1)
		write(in.Out, 1)
		st.MicroOps++
	default:
		return fmt.Errorf("unknown opcode %d", in.Op)
	}
	return nil
}

func checkReduced(v []uint64, q uint64, a isa.Addr) error {
	for i, x := range v {
		if x >= q {
			return fmt.Errorf("loaded limb %v coefficient %d = %d is not reduced modulo %d", a, i, x, q)
		}
	}
	return nil
}

func mul(a, b []uint64, s uint64, out []uint64, mod *rns.Modulus, scalar, plain bool) {
	switch {
	case scalar && plain:
		rns.MulScalar(a, s, out, mod)
	case scalar:
		rns.MulScalarMont(a, s, out, mod)
	case plain:
		rns.MulBarrett(a, b, out, mod)
	default:
		rns.MulMont(a, b, out, mod)
	}
}

func (m *Machine) bconvInstr(in isa.Instr, st *Stats, limbBytes int64) error {
	basis := m.cfg.Bases[in.B.Index()]
	k, n := len(basis.From), len(basis.To)
	m.limbIn = m.limbIn[:0]
	for i := 0; i < k; i++ {
		m.limbIn = append(m.limbIn, m.Slot(in.A+isa.Addr(i)))
	}
	m.limbOu = m.limbOu[:0]
	for j := 0; j < n; j++ {
		m.limbOu = append(m.limbOu, m.out(in.Out+isa.Addr(j), false))
	}
	switch {
	case in.Flags&isa.FlagCenter != 0:
		centeredLift(m.limbIn[0], m.mods[basis.From[0]].Q, m.limbOu, basis.To, m.mods)
	case in.Flags&isa.FlagExact != 0:
		for j, o := range m.limbOu {
			rns.Reduce(m.limbIn[0], o, &m.mods[basis.To[j]])
		}
	default:
		if cap(m.bcTmp) < k*m.n {
			m.bcTmp = make([]uint64, k*m.n)
		}
		m.bconv[in.B.Index()].Convert(m.limbIn, m.limbOu, m.bcTmp[:k*m.n])
	}
	st.BytesRead[in.A.Space()] += int64(k) * limbBytes
	st.BytesWritten[in.Out.Space()] += int64(n) * limbBytes
	st.MicroOps += int64(k + k*n)
	return nil
}

// centeredLift reproduces Lattigo's single-modulus decomposition: x ∈ [0, q)
// is read as x − q when x ≥ ⌊q/2⌋ and reduced into each target modulus p,
// as x mod p (the vector kernel) minus q mod p where x ≥ ⌊q/2⌋: the same
// residue without a branch on the data (a branch taken at random for half
// the coefficients made this a quarter of a key switch).
func centeredLift(x []uint64, q uint64, out [][]uint64, to []uint8, mods []rns.Modulus) {
	half := q >> 1
	for j, o := range out {
		p := &mods[to[j]]
		rns.Reduce(x, o, p)
		o = o[:len(x)]
		qp := p.Reduce(q)
		for c, v := range x {
			var sub uint64
			if v >= half {
				sub = qp
			}
			r := o[c] + p.Q - sub // in [0, 2p)
			if r >= p.Q {
				r -= p.Q
			}
			o[c] = r
		}
	}
}
