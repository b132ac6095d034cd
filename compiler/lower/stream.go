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

// sameProgramConfig compares two configurations entry by entry.
func sameProgramConfig(a, b *isa.Config) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// KeyName names the evaluation key a body needs ("" if none): the text
// form of its KeyID, for the stream programs and the compiler's segment
// programs alike.
func (l *Program) KeyName() string {
	switch {
	case len(l.Keys) == 0:
		return ""
	case l.GaloisElement != 0:
		return GaloisKey(l.GaloisElement).String()
	}
	return RelinKey().String()
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
