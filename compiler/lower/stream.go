package lower

import (
	"encoding/json"
	"fmt"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// StreamKind says how a stream node's instances come about.
type StreamKind uint8

// Stream node kinds.
const (
	// StreamInput instances arrive with each run: values the host (or an
	// earlier segment) produced.
	StreamInput StreamKind = iota + 1
	// StreamStored instances are stored objects, bound to store objects per
	// run and read from the store in place.
	StreamStored
	// StreamOp runs Body once per instance; argument a of instance k is
	// instance k mod Count(a) (the IR's broadcast rule).
	StreamOp
	// StreamSum folds each group of Count(arg)/Count consecutive argument
	// instances (Body is the HAdd it folds with).
	StreamSum
	// StreamExpand produces the leaves of a query expansion depth first
	// (Steps[j] is the step at depth j, ir.ExpandSpec places the leaves).
	StreamExpand
)

func (k StreamKind) String() string {
	switch k {
	case StreamInput:
		return "input"
	case StreamStored:
		return "stored"
	case StreamOp:
		return "op"
	case StreamSum:
		return "sum"
	case StreamExpand:
		return "expand"
	}
	return fmt.Sprintf("StreamKind(%d)", uint8(k))
}

// StreamNode is one node of a stream program.
type StreamNode struct {
	Node int        `json:"node"` // the IR node
	Kind StreamKind `json:"kind"`
	Name string     `json:"name,omitempty"` // Input/Stored: the IR name
	// Role is the IR node's role (Input/Stored), for the session that
	// binds the stream's sources; like ir.Node.Role it stays on the host
	// side and is not encoded.
	Role  ir.Role `json:"-"`
	Count int64   `json:"count"`
	// Polys × Limbs is the shape of one instance (a compact plaintext has
	// one limb whatever its level).
	Polys   int   `json:"polys"`
	Limbs   int   `json:"limbs"`
	Compact bool  `json:"compact,omitempty"`
	Args    []int `json:"args,omitempty"` // indices into StreamProgram.Nodes

	Body *Program `json:"body,omitempty"`
	// MAC, on a StreamSum, fuses the Sum with the compact-plaintext PMult
	// it folds: Args are the PMult's (ciphertext, plaintext) and Products
	// its instance count; product k reads instance k mod Count of each.
	MAC      *MACProgram    `json:"mac,omitempty"`
	Products int64          `json:"products,omitempty"`
	Steps    []*Program     `json:"steps,omitempty"`
	Expand   *ir.ExpandSpec `json:"expand,omitempty"`
	// Cache: every instance is used more than once; the device computes
	// each once and holds it until the run ends. Other instances stream:
	// computed when their one consumer needs them and dropped after.
	Cache bool `json:"cache,omitempty"`
	// Out: the instances leave the segment (an Output, or a host node reads
	// them); the run returns them.
	Out bool `json:"out,omitempty"`
	// Memo: every consumer reads instance k for its own instance k, Memo
	// reads in all: a worker keeps instance k from its first read to its
	// last (the merge trees of a packing, say), not every instance.
	Memo int `json:"memo,omitempty"`
}

// StreamProgram is one device segment of a compiler.Plan as the device runs it:
// the mProgram of one instance of every node (its body), and the IR's
// instance rules, so that a node of millions of instances is a loop over
// one body rather than millions of copies. The device evaluates it
// demand-driven: an output instance pulls the instances it reads, streamed
// values never pile up, and only Cache nodes are held — the device memory
// a run needs is independent of the number of stored instances it scans
// (CLCAO's streaming placement, in software).
type StreamProgram struct {
	Workload string       `json:"workload"`
	Segment  int          `json:"segment"`
	Scheme   fhe.Scheme   `json:"scheme"`
	T        uint64       `json:"t,omitempty"`
	Ring     Ring         `json:"ring"`
	Nodes    []StreamNode `json:"nodes"`
}

// MaxStreamNodes bounds the nodes of a stream program.
const MaxStreamNodes = 1 << 16

// Validate checks a stream program's structure (a device checks every
// program it is given): arguments earlier than their users, counts that
// follow the IR's rules, bodies whose operands match the shapes bound to
// them, and programs that validate.
func (sp *StreamProgram) Validate() error {
	if len(sp.Nodes) == 0 || len(sp.Nodes) > MaxStreamNodes {
		return fmt.Errorf("lower: stream program of %d nodes", len(sp.Nodes))
	}
	if sp.Ring.LogN < 1 || sp.Ring.LogN > 17 || len(sp.Ring.Q) == 0 || len(sp.Ring.P) == 0 {
		return fmt.Errorf("lower: stream program ring logN=%d with %d+%d primes", sp.Ring.LogN, len(sp.Ring.Q), len(sp.Ring.P))
	}
	hasOut := false
	for i, sn := range sp.Nodes {
		where := fmt.Sprintf("lower: stream node %d (%s, IR node %d)", i, sn.Kind, sn.Node)
		if sn.Memo < 0 || sn.Memo > 1<<16 || (sn.Memo > 0 && sn.Cache) {
			return fmt.Errorf("%s: memo of %d reads (held: %v)", where, sn.Memo, sn.Cache)
		}
		if sn.Count < 1 || sn.Polys < 1 || sn.Polys > 4 || sn.Limbs < 1 || sn.Limbs > len(sp.Ring.Q)+len(sp.Ring.P) {
			return fmt.Errorf("%s: %d instances of %d polys × %d limbs", where, sn.Count, sn.Polys, sn.Limbs)
		}
		for _, a := range sn.Args {
			if a < 0 || a >= i {
				return fmt.Errorf("%s: argument %d is not an earlier node", where, a)
			}
		}
		hasOut = hasOut || sn.Out
		body := func(l *Program, args int) error {
			if l == nil || l.Program == nil {
				return fmt.Errorf("%s: no body", where)
			}
			if err := l.Program.Validate(); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			if l.Program.Config.LogN != sp.Ring.LogN {
				return fmt.Errorf("%s: body for logN %d", where, l.Program.Config.LogN)
			}
			if len(l.Inputs) != args || len(l.Keys) > 1 {
				return fmt.Errorf("%s: body takes %d inputs and %d keys, the node gives %d", where, len(l.Inputs), len(l.Keys), args)
			}
			for _, o := range append(append([]Object{l.Output}, l.Inputs...), l.Keys...) {
				if o.Polys < 1 || o.Limbs < 1 || o.ID < 1 || o.ID >= isa.MaxObjects {
					return fmt.Errorf("%s: body object %+v", where, o)
				}
			}
			return nil
		}
		switch sn.Kind {
		case StreamInput, StreamStored:
			if len(sn.Args) != 0 || sn.Name == "" {
				return fmt.Errorf("%s: sources take no arguments and need a name", where)
			}
		case StreamOp:
			if len(sn.Args) == 0 {
				return fmt.Errorf("%s: no arguments", where)
			}
			for _, a := range sn.Args {
				if sn.Count%sp.Nodes[a].Count != 0 {
					return fmt.Errorf("%s: argument count %d does not divide %d", where, sp.Nodes[a].Count, sn.Count)
				}
			}
			if err := body(sn.Body, len(sn.Args)); err != nil {
				return err
			}
			for j, in := range sn.Body.Inputs {
				a := sp.Nodes[sn.Args[j]]
				if a.Polys != in.Polys || a.Limbs < in.Limbs || (a.Compact && in.Limbs != 1) {
					return fmt.Errorf("%s: input %d is %d×%d, the body reads %d×%d", where, j, a.Polys, a.Limbs, in.Polys, in.Limbs)
				}
			}
			if sn.Body.Output.Polys != sn.Polys || sn.Body.Output.Limbs != sn.Limbs {
				return fmt.Errorf("%s: body writes %d×%d, the node holds %d×%d", where, sn.Body.Output.Polys, sn.Body.Output.Limbs, sn.Polys, sn.Limbs)
			}
		case StreamSum:
			if sn.MAC != nil {
				if err := sp.validateMAC(i); err != nil {
					return err
				}
				break
			}
			if len(sn.Args) != 1 || sp.Nodes[sn.Args[0]].Count%sn.Count != 0 {
				return fmt.Errorf("%s: a sum folds one argument whose count %d is a multiple of %d", where, sp.Nodes[sn.Args[0]].Count, sn.Count)
			}
			if err := body(sn.Body, 2); err != nil {
				return err
			}
			a := sp.Nodes[sn.Args[0]]
			if a.Polys != 2 || a.Limbs != sn.Limbs || sn.Polys != 2 || sn.Body.Output.Limbs != sn.Limbs {
				return fmt.Errorf("%s: sum of %d×%d instances into %d×%d", where, a.Polys, a.Limbs, sn.Polys, sn.Limbs)
			}
		case StreamExpand:
			if len(sn.Args) != 1 || sp.Nodes[sn.Args[0]].Count != 1 || sn.Expand == nil || sn.Polys != 2 {
				return fmt.Errorf("%s: an expansion takes one query ciphertext and a leaf placement", where)
			}
			if len(sn.Steps) != sn.Expand.Depth(sn.Count) || len(sn.Steps) < 1 || len(sn.Steps) > sp.Ring.LogN-1 ||
				sn.Count&(sn.Count-1) != 0 || sn.Expand.PrefixBits > len(sn.Steps) {
				return fmt.Errorf("%s: %d steps for %d leaves", where, len(sn.Steps), sn.Count)
			}
			for j, st := range sn.Steps {
				if err := body(st, 2); err != nil {
					return err
				}
				if st.GaloisElement != ExpandGalois(sp.Ring.LogN, j) || st.Output.Polys != 4 || st.Output.Limbs != sn.Limbs ||
					st.Inputs[0].Limbs != sn.Limbs || st.Inputs[1].Limbs != sn.Limbs {
					return fmt.Errorf("%s: step %d does not expand at depth %d", where, j, j)
				}
			}
			if a := sp.Nodes[sn.Args[0]]; a.Polys != 2 || a.Limbs < sn.Limbs {
				return fmt.Errorf("%s: query of %d×%d", where, a.Polys, a.Limbs)
			}
		default:
			return fmt.Errorf("%s: unknown kind", where)
		}
	}
	if !hasOut {
		return fmt.Errorf("lower: stream program returns nothing")
	}
	return nil
}

func (sp *StreamProgram) validateMAC(i int) error {
	sn := sp.Nodes[i]
	where := fmt.Sprintf("lower: stream node %d (multiply-accumulate, IR node %d)", i, sn.Node)
	m := sn.MAC
	if len(sn.Args) != 2 || len(m.Inputs) != 2 || sn.Products < 1 || sn.Products%sn.Count != 0 {
		return fmt.Errorf("%s: %d arguments for %d products into %d sums", where, len(sn.Args), sn.Products, sn.Count)
	}
	if m.Lanes < 1 || m.Lanes > 64 || len(m.First) != m.Lanes || len(m.Next) != m.Lanes || len(m.Flush) != m.Lanes {
		return fmt.Errorf("%s: %d lanes with %d, %d and %d programs", where, m.Lanes, len(m.First), len(m.Next), len(m.Flush))
	}
	for _, ps := range [][]*isa.Program{m.First, m.Next, m.Flush} {
		for _, p := range ps {
			if p == nil {
				return fmt.Errorf("%s: missing a program", where)
			}
			if err := p.Validate(); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			if p.Config.LogN != sp.Ring.LogN || !sameProgramConfig(&p.Config, &m.First[0].Config) {
				return fmt.Errorf("%s: the programs must share one configuration", where)
			}
		}
	}
	for j, in := range m.Inputs {
		a := sp.Nodes[sn.Args[j]]
		if sn.Products%a.Count != 0 || a.Polys != in.Polys || a.Limbs < in.Limbs || (j == 1) != a.Compact || in.ID < 1 || in.ID >= isa.MaxObjects {
			return fmt.Errorf("%s: input %d (%d×%d, %d instances) does not fit the loop", where, j, a.Polys, a.Limbs, a.Count)
		}
	}
	if m.Output.Polys != sn.Polys || m.Output.Limbs != sn.Limbs || m.Output.ID < 1 || m.Output.ID >= isa.MaxObjects {
		return fmt.Errorf("%s: writes %d×%d, the node holds %d×%d", where, m.Output.Polys, m.Output.Limbs, sn.Polys, sn.Limbs)
	}
	return nil
}

// sameProgramConfig compares two configurations entry by entry.
func sameProgramConfig(a, b *isa.Config) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// RelinKeyName is the name of the relinearization key a body binds.
const RelinKeyName = "rlk"

// GaloisKeyName is the name of the key of Galois element el a body binds,
// "gal:<el>": the one place that spells it, for the stream programs and the
// compiler's segment programs alike.
func GaloisKeyName(el uint64) string { return fmt.Sprintf("gal:%d", el) }

// KeyName names the evaluation key a body needs ("" if none):
// RelinKeyName or GaloisKeyName of its element.
func (l *Program) KeyName() string {
	switch {
	case len(l.Keys) == 0:
		return ""
	case l.GaloisElement != 0:
		return GaloisKeyName(l.GaloisElement)
	}
	return RelinKeyName
}

// MarshalBinary encodes the stream program (JSON; bodies as encoded
// mPrograms).
func (sp *StreamProgram) MarshalBinary() ([]byte, error) { return json.Marshal(sp) }

// UnmarshalBinary decodes and validates a stream program.
func (sp *StreamProgram) UnmarshalBinary(b []byte) error {
	var q StreamProgram
	if err := json.Unmarshal(b, &q); err != nil {
		return fmt.Errorf("lower: decode stream program: %w", err)
	}
	if err := q.Validate(); err != nil {
		return err
	}
	*sp = q
	return nil
}
