package lower

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// A device runs the stream programs its clients register: Validate is what
// stands between a client's bytes and the device's memory. A program that
// validates is one the engine runs without a panic, and whose allocations
// before any accounting are bounded by the limits below; everything it
// holds while it runs (instances, accumulators, slots) is charged to the
// run's memory limit.

// Errors of Validate. Every error it returns wraps ErrStreamProgram; one
// that exceeds a resource bound also wraps ErrStreamLimit, one whose ring
// is not a usable RNS basis ErrStreamRing.
var (
	ErrStreamProgram = errors.New("lower: invalid stream program")
	ErrStreamLimit   = errors.New("exceeds a stream program bound")
	ErrStreamRing    = errors.New("not a usable ring")
)

// Bounds of a stream program. Each is well above what the compiler emits
// for the workloads it knows (measured by compiling them: see
// stream_validate_test.go) and low enough that nothing the engine
// allocates from them up front is a hazard.
const (
	// MaxStreamNodes bounds the nodes of a stream program.
	MaxStreamNodes = 1 << 16

	// MaxStreamCount bounds the instances of a node (and the products of a
	// multiply-accumulate). The largest real node is the stored database of
	// a scan: 25,170,289 compact plaintexts for the VCaLL PIR (2^32 records
	// of 96 B), 62,500,000 for vecdist over Deep1B; the 4 GiB PIR of
	// BENCHMARKS.md has 262,144. A streamed node allocates nothing per
	// instance, so the bound only keeps the index arithmetic (k·g,
	// positions, strides) far from overflow: 2^32 instances of at least
	// 2 KiB each (N = 2^10, 2-byte words) is 8 TiB, more than one device
	// stores.
	MaxStreamCount = 1 << 32
	// MaxStreamHeld bounds the instances of a node the run holds all of
	// (Cache or Out): the engine allocates one slice entry per instance
	// before it computes them (the instances themselves are charged to the
	// run's memory as they are made). The largest real one is hevec's
	// 244,141 output ciphertexts (Deep1B, 10^9 × 96-d); 2^22 entries are
	// 96 MiB of slice headers.
	MaxStreamHeld = 1 << 22

	// MaxStreamPrimes bounds len(Q)+len(P). The largest preset (engorgio,
	// N = 2^17) has 44+24 = 68; the engine builds an NTT table per prime
	// (≈ 14 MiB each at N = 2^17).
	MaxStreamPrimes = 96
	// MaxStreamPrimeBits: primes are below 2^62, what rns.Modulus and the
	// NTT kernels (lazy reduction in [0, 4q)) take, and isa.Config checks.
	MaxStreamPrimeBits = 62

	// MaxStreamSlots bounds SRAMSlots+EDRAMSlots of a body program, and
	// MaxStreamSlotBytes the memory they are (slots × N × 8): the engine
	// allocates them per worker. The largest real body is a Relinearize
	// at the top level of the nexus ring (N = 2^16, 35+1 primes): 1,510
	// slots, 755 MiB; engorgio's (N = 2^17, 44+24 primes) is 584 slots,
	// 584 MiB.
	MaxStreamSlots     = 4096
	MaxStreamSlotBytes = 2 << 30
	// MaxStreamGalois bounds a body's Galois elements (each an index table
	// of 4N bytes the engine caches); real bodies have at most one.
	MaxStreamGalois = 64
	// MaxStreamBases bounds a body's base conversions (each a table of up
	// to 32 × 256 words built per interpreter); nexus' key switch has 36.
	MaxStreamBases = 256
	// MaxStreamArgs bounds the arguments of a node (the engine's operand
	// array); real nodes have at most two.
	MaxStreamArgs = 4
	// MaxStreamMemo bounds a node's Memo reads.
	MaxStreamMemo = 1 << 16
	// MaxStreamLanes bounds a multiply-accumulate loop's lanes.
	MaxStreamLanes = 64
)

// Validate checks a stream program's structure (a device checks every
// program it is given): a ring of distinct NTT-friendly primes, arguments
// earlier than their users, counts that follow the IR's rules and the
// bounds above, value shapes within the ring, bodies whose operands match
// the shapes bound to them, and programs that validate over the ring's
// primes. Every error wraps ErrStreamProgram.
func (sp *StreamProgram) Validate() error {
	if len(sp.Nodes) == 0 || len(sp.Nodes) > MaxStreamNodes {
		return fmt.Errorf("%w: %w: %d nodes (1 to %d)", ErrStreamProgram, ErrStreamLimit, len(sp.Nodes), MaxStreamNodes)
	}
	if err := sp.validateRing(); err != nil {
		return err
	}
	hasOut := false
	for i := range sp.Nodes {
		if err := sp.validateNode(i); err != nil {
			return err
		}
		hasOut = hasOut || sp.Nodes[i].Out
	}
	if !hasOut {
		return fmt.Errorf("%w: it returns nothing", ErrStreamProgram)
	}
	return nil
}

// validateRing checks the scheme and the ring: a degree the interpreter
// runs, distinct NTT-friendly primes for it, and for BGV a plaintext
// modulus below them.
func (sp *StreamProgram) validateRing() error {
	r := sp.Ring
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %w: %s", ErrStreamProgram, ErrStreamRing, fmt.Sprintf(format, a...))
	}
	if r.LogN < 4 || r.LogN > 17 {
		return bad("logN %d outside [4, 17]", r.LogN)
	}
	if len(r.Q) == 0 || len(r.P) == 0 {
		return bad("%d+%d primes (Q and P both needed)", len(r.Q), len(r.P))
	}
	if len(r.Q)+len(r.P) > MaxStreamPrimes {
		return fmt.Errorf("%w: %w: %d+%d primes, at most %d", ErrStreamProgram, ErrStreamLimit, len(r.Q), len(r.P), MaxStreamPrimes)
	}
	twoN := uint64(2) << r.LogN
	seen := map[uint64]bool{}
	for i, q := range append(append([]uint64(nil), r.Q...), r.P...) {
		switch {
		case q < 3 || bits.Len64(q) > MaxStreamPrimeBits:
			return bad("prime %d (%d) is not in [3, 2^%d)", i, q, MaxStreamPrimeBits)
		case q%twoN != 1:
			return bad("prime %d (%d) is not 1 mod 2N = %d (no negacyclic NTT)", i, q, twoN)
		case seen[q]:
			return bad("prime %d (%d) repeats", i, q)
		case !rns.IsPrime(q):
			return bad("modulus %d (%d) is not prime", i, q)
		}
		seen[q] = true
	}
	switch sp.Scheme {
	case fhe.CKKS:
		if sp.T != 0 {
			return bad("a CKKS program with a plaintext modulus (%d)", sp.T)
		}
	case fhe.BGV:
		for _, q := range r.Q {
			if sp.T < 2 || sp.T >= q {
				return bad("BGV plaintext modulus %d is not in [2, q) for q = %d", sp.T, q)
			}
		}
	default:
		return fmt.Errorf("%w: scheme %q", ErrStreamProgram, sp.Scheme)
	}
	return nil
}

// validateNode checks node i (its arguments are checked already).
func (sp *StreamProgram) validateNode(i int) error {
	sn := &sp.Nodes[i]
	where := fmt.Sprintf("stream node %d (%s, IR node %d)", i, sn.Kind, sn.Node)
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrStreamProgram, where, fmt.Sprintf(format, a...))
	}
	limit := func(format string, a ...any) error {
		return fmt.Errorf("%w: %w: %s: %s", ErrStreamProgram, ErrStreamLimit, where, fmt.Sprintf(format, a...))
	}
	nQ := len(sp.Ring.Q)
	// Shape: every value the engine holds is a vector of residues mod
	// q_0 … q_(Limbs−1) (a compact plaintext: one limb of small words).
	if sn.Count < 1 || sn.Count > MaxStreamCount {
		return limit("%d instances (1 to %d)", sn.Count, int64(MaxStreamCount))
	}
	if (sn.Cache || sn.Out) && sn.Count > MaxStreamHeld {
		return limit("%d instances held (at most %d)", sn.Count, MaxStreamHeld)
	}
	if sn.Polys < 1 || sn.Polys > 4 || sn.Limbs < 1 || sn.Limbs > nQ {
		return bad("instances of %d polys × %d limbs (1–4 polys of 1–%d limbs of Q)", sn.Polys, sn.Limbs, nQ)
	}
	if sn.Compact && (sn.Polys != 1 || sn.Limbs != 1) {
		return bad("a compact plaintext of %d polys × %d limbs", sn.Polys, sn.Limbs)
	}
	if sn.Memo < 0 || sn.Memo > MaxStreamMemo || (sn.Memo > 0 && sn.Cache) {
		return limit("memo of %d reads (held: %v)", sn.Memo, sn.Cache)
	}
	if len(sn.Args) > MaxStreamArgs {
		return limit("%d arguments (at most %d)", len(sn.Args), MaxStreamArgs)
	}
	for _, a := range sn.Args {
		if a < 0 || a >= i {
			return bad("argument %d is not an earlier node", a)
		}
	}
	// What a kind does not use it must not carry: the engine reads Body,
	// Steps and MAC by kind, and NewStream reads every body it is given.
	uses := func(body, steps, mac bool) error {
		switch {
		case !body && sn.Body != nil:
			return bad("a body on a node that runs none")
		case !steps && (len(sn.Steps) != 0 || sn.Expand != nil):
			return bad("expansion steps on a node that does not expand")
		case !mac && (sn.MAC != nil || sn.Products != 0):
			return bad("a multiply-accumulate on a node that is not one")
		}
		return nil
	}
	switch sn.Kind {
	case StreamInput, StreamStored:
		if len(sn.Args) != 0 || sn.Name == "" {
			return bad("sources take no arguments and need a name")
		}
		return uses(false, false, false)
	case StreamOp:
		if err := uses(true, false, false); err != nil {
			return err
		}
		if len(sn.Args) == 0 {
			return bad("no arguments")
		}
		for _, a := range sn.Args {
			if sn.Count%sp.Nodes[a].Count != 0 {
				return bad("argument count %d does not divide %d", sp.Nodes[a].Count, sn.Count)
			}
		}
		if err := sp.validateBody(where, sn.Body, len(sn.Args)); err != nil {
			return err
		}
		for j, in := range sn.Body.Inputs {
			a := &sp.Nodes[sn.Args[j]]
			if a.Polys != in.Polys || a.Limbs < in.Limbs || (a.Compact && in.Limbs != 1) {
				return bad("input %d is %d×%d, the body reads %d×%d", j, a.Polys, a.Limbs, in.Polys, in.Limbs)
			}
		}
		if sn.Body.Output.Polys != sn.Polys || sn.Body.Output.Limbs != sn.Limbs {
			return bad("body writes %d×%d, the node holds %d×%d", sn.Body.Output.Polys, sn.Body.Output.Limbs, sn.Polys, sn.Limbs)
		}
	case StreamSum:
		if sn.MAC != nil {
			if err := uses(false, false, true); err != nil {
				return err
			}
			return sp.validateMAC(i)
		}
		if err := uses(true, false, false); err != nil {
			return err
		}
		if len(sn.Args) != 1 {
			return bad("a sum folds one argument, not %d", len(sn.Args))
		}
		a := &sp.Nodes[sn.Args[0]]
		if a.Count%sn.Count != 0 {
			return bad("a sum of %d instances into %d sums", a.Count, sn.Count)
		}
		if err := sp.validateBody(where, sn.Body, 2); err != nil {
			return err
		}
		if a.Polys != 2 || a.Limbs != sn.Limbs || sn.Polys != 2 || sn.Body.Output.Polys != 2 || sn.Body.Output.Limbs != sn.Limbs {
			return bad("sum of %d×%d instances into %d×%d", a.Polys, a.Limbs, sn.Polys, sn.Limbs)
		}
		for j, in := range sn.Body.Inputs {
			if in.Polys != 2 || in.Limbs > sn.Limbs {
				return bad("the fold's input %d is %d×%d, the sum adds 2×%d", j, in.Polys, in.Limbs, sn.Limbs)
			}
		}
	case StreamExpand:
		if err := uses(false, true, false); err != nil {
			return err
		}
		if len(sn.Args) != 1 || sp.Nodes[sn.Args[0]].Count != 1 || sn.Expand == nil || sn.Polys != 2 {
			return bad("an expansion takes one query ciphertext and a leaf placement")
		}
		e := sn.Expand
		if e.PrefixBits < 0 || e.PrefixBits > 63 || e.Prefix>>e.PrefixBits != 0 {
			return bad("leaf prefix %d does not fit %d bits", e.Prefix, e.PrefixBits)
		}
		if len(sn.Steps) != e.Depth(sn.Count) || len(sn.Steps) < 1 || len(sn.Steps) > sp.Ring.LogN-1 ||
			sn.Count&(sn.Count-1) != 0 || e.PrefixBits > len(sn.Steps) {
			return bad("%d steps for %d leaves", len(sn.Steps), sn.Count)
		}
		for j, st := range sn.Steps {
			if err := sp.validateBody(where, st, 2); err != nil {
				return err
			}
			if st.GaloisElement != ExpandGalois(sp.Ring.LogN, j) || len(st.Keys) != 1 ||
				st.Output.Polys != 4 || st.Output.Limbs != sn.Limbs ||
				st.Inputs[0].Polys != 2 || st.Inputs[0].Limbs != sn.Limbs ||
				st.Inputs[1].Polys != 1 || st.Inputs[1].Limbs != sn.Limbs {
				return bad("step %d does not expand at depth %d", j, j)
			}
		}
		if a := &sp.Nodes[sn.Args[0]]; a.Polys != 2 || a.Limbs < sn.Limbs {
			return bad("query of %d×%d", a.Polys, a.Limbs)
		}
	default:
		return bad("unknown kind")
	}
	return nil
}

// validateBody checks a body of args inputs: its program over the ring
// (within the bounds), its objects within the shapes the ring allows.
func (sp *StreamProgram) validateBody(where string, l *Program, args int) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrStreamProgram, where, fmt.Sprintf(format, a...))
	}
	if l == nil || l.Program == nil {
		return bad("no body")
	}
	if err := sp.validateProgram(where, l.Program); err != nil {
		return err
	}
	if len(l.Inputs) != args || len(l.Keys) > 1 {
		return bad("body takes %d inputs and %d keys, the node gives %d", len(l.Inputs), len(l.Keys), args)
	}
	if g := l.GaloisElement; g != 0 && (g&1 == 0 || g >= uint64(2)<<sp.Ring.LogN) {
		return bad("Galois element %d is not odd and below 2N", g)
	}
	nQ, nP := len(sp.Ring.Q), len(sp.Ring.P)
	ids := map[int]bool{}
	for j, o := range append([]Object{l.Output}, l.Inputs...) {
		if o.Polys < 1 || o.Polys > 4 || o.Limbs < 1 || o.Limbs > nQ || o.ID < 1 || o.ID >= isa.MaxObjects || ids[o.ID] {
			return bad("body value object %d: %d polys × %d limbs, ID %d", j, o.Polys, o.Limbs, o.ID)
		}
		ids[o.ID] = true
	}
	for _, o := range l.Keys {
		// An evaluation key: 2 polys per digit (at most one digit per
		// prime of Q), limbs over Q and P.
		if o.Polys < 1 || o.Polys > 2*nQ || o.Limbs < 1 || o.Limbs > nQ+nP || o.ID < 1 || o.ID >= isa.MaxObjects {
			return bad("body key object: %d polys × %d limbs, ID %d", o.Polys, o.Limbs, o.ID)
		}
	}
	return nil
}

// validateProgram checks an mProgram a node runs: valid, for the ring's
// degree, over the ring's primes only (the engine builds NTT tables for
// the primes a program names), and within the bounds.
func (sp *StreamProgram) validateProgram(where string, p *isa.Program) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrStreamProgram, where, err)
	}
	c := &p.Config
	if c.LogN != sp.Ring.LogN {
		return fmt.Errorf("%w: %s: body for logN %d, the ring has %d", ErrStreamProgram, where, c.LogN, sp.Ring.LogN)
	}
	for i, q := range c.Moduli {
		if !sp.Ring.has(q) {
			return fmt.Errorf("%w: %w: %s: body modulus %d (%d) is not a prime of the ring", ErrStreamProgram, ErrStreamRing, where, i, q)
		}
	}
	slots := int64(c.SRAMSlots) + int64(c.EDRAMSlots)
	if slots > MaxStreamSlots || slots<<sp.Ring.LogN*8 > MaxStreamSlotBytes ||
		len(c.Galois) > MaxStreamGalois || len(c.Bases) > MaxStreamBases {
		return fmt.Errorf("%w: %w: %s: body of %d+%d slots, %d Galois elements, %d bases (at most %d slots of %d MiB, %d, %d)",
			ErrStreamProgram, ErrStreamLimit, where, c.SRAMSlots, c.EDRAMSlots, len(c.Galois), len(c.Bases),
			MaxStreamSlots, MaxStreamSlotBytes>>20, MaxStreamGalois, MaxStreamBases)
	}
	return nil
}

// has reports whether q is a prime of Q or P.
func (r Ring) has(q uint64) bool {
	for _, x := range r.Q {
		if x == q {
			return true
		}
	}
	for _, x := range r.P {
		if x == q {
			return true
		}
	}
	return false
}

func (sp *StreamProgram) validateMAC(i int) error {
	sn := &sp.Nodes[i]
	where := fmt.Sprintf("stream node %d (multiply-accumulate, IR node %d)", i, sn.Node)
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrStreamProgram, where, fmt.Sprintf(format, a...))
	}
	m := sn.MAC
	if sn.Products < 1 || sn.Products > MaxStreamCount {
		return fmt.Errorf("%w: %w: %s: %d products (1 to %d)", ErrStreamProgram, ErrStreamLimit, where, sn.Products, int64(MaxStreamCount))
	}
	if len(sn.Args) != 2 || len(m.Inputs) != 2 || sn.Products%sn.Count != 0 {
		return bad("%d arguments for %d products into %d sums", len(sn.Args), sn.Products, sn.Count)
	}
	if m.Lanes < 1 || m.Lanes > MaxStreamLanes || len(m.First) != m.Lanes || len(m.Next) != m.Lanes || len(m.Flush) != m.Lanes {
		return bad("%d lanes with %d, %d and %d programs", m.Lanes, len(m.First), len(m.Next), len(m.Flush))
	}
	for _, ps := range [][]*isa.Program{m.First, m.Next, m.Flush} {
		for _, p := range ps {
			if p == nil {
				return bad("missing a program")
			}
			if err := sp.validateProgram(where, p); err != nil {
				return err
			}
			if !sameProgramConfig(&p.Config, &m.First[0].Config) {
				return bad("the programs must share one configuration")
			}
		}
	}
	ids := map[int]bool{}
	for j, in := range m.Inputs {
		a := &sp.Nodes[sn.Args[j]]
		if sn.Products%a.Count != 0 || a.Polys != in.Polys || in.Limbs < 1 || a.Limbs < in.Limbs || (j == 1) != a.Compact ||
			in.ID < 1 || in.ID >= isa.MaxObjects || ids[in.ID] {
			return bad("input %d (%d×%d, %d instances) does not fit the loop", j, a.Polys, a.Limbs, a.Count)
		}
		ids[in.ID] = true
	}
	if m.Output.Polys != sn.Polys || m.Output.Limbs != sn.Limbs || m.Output.ID < 1 || m.Output.ID >= isa.MaxObjects || ids[m.Output.ID] {
		return bad("writes %d×%d, the node holds %d×%d", m.Output.Polys, m.Output.Limbs, sn.Polys, sn.Limbs)
	}
	return nil
}
