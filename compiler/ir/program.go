package ir

import (
	"encoding/json"
	"fmt"

	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// Node is one operation of a program.
type Node struct {
	ID     int    `json:"id"`
	Op     Op     `json:"op"`
	Args   []int  `json:"args,omitempty"`
	Params string `json:"params"` // fhe preset name
	Level  int    `json:"level"`  // level of the result
	Degree int    `json:"degree"` // 0 plaintext, 1 ciphertext, 2 unrelinearized product
	Count  int64  `json:"count"`  // independent instances (≥ 1)

	Name string `json:"name,omitempty"` // Input/Stored/Output object name
	// Public marks a Stored plaintext that is a public constant (e.g. a
	// bootstrapping DFT diagonal or a mask): either side can produce it, so
	// it is pinned to neither device and never crosses the link.
	Public bool `json:"public,omitempty"`
	// Compact marks a stored BGV plaintext kept as its coefficients modulo
	// t: one limb instead of Level+1 (they are below every q_i), lifted to
	// RNS and NTT form where it is used (lower.OpPMultCompact).
	Compact bool `json:"compact,omitempty"`
	// LWELimbs marks an LWE value (OpLWEScan's operands and result): not
	// an RLWE object but LWELimbs limbs of N 32-bit words modulo 2^32 per
	// instance, whatever the level and the machine's word width. A stored
	// byte matrix packs four bytes per word, so its flash bytes are its
	// bytes. 0: an RLWE value.
	LWELimbs int `json:"lwe_limbs,omitempty"`
	// Window makes instance i of a PMult multiply by instance
	// StoredOffset + i of its stored plaintext, a window of a larger stored
	// object (the plaintexts of one giant step of a BSGS product stored
	// together, each read by its own PMult), instead of instance
	// i mod count.
	Window       bool      `json:"window,omitempty"`
	StoredOffset int64     `json:"stored_offset,omitempty"`
	Rotation     int       `json:"rotation,omitempty"` // HRot steps
	Constant     float64   `json:"constant,omitempty"` // CMult
	Boot         *BootSpec `json:"boot,omitempty"`
	// Expand places the leaves of an Expand node.
	Expand *ExpandSpec `json:"expand,omitempty"`
	// LWE names the database an LWE scan answers; without it the scan is
	// a cost model only, with no device program.
	LWE *LWESpec `json:"lwe,omitempty"`
	// Segment is the workload author's hint of the kind of program segment
	// the node belongs to. Only the compiler's Bare baseline reads it (the
	// paper's manual allocation: non-linear segments on the host
	// accelerator, linear ones on the SSD); TDAP ignores it.
	Segment Segment `json:"segment,omitempty"`
	// Role marks the sources a session binds to data of its own (the
	// client's query, the stored database), so it finds them by meaning
	// rather than by name. The workload builders set it. It is not part
	// of the JSON form, which plans have always been written in; a
	// program decoded from JSON has no roles.
	Role Role `json:"-"`
}

// LWESpec names the database an LWE scan answers (package fhe/lwepir): its
// parameter set and matrix shape. The IR's nodes model what the answer
// costs; the device answers natively (its QueryLWE, package
// device/pirserver) from the same parameters and shape.
type LWESpec struct {
	Params     string `json:"params"` // lwepir.ByName
	Rows       int    `json:"rows"`
	Cols       int    `json:"cols"`
	RecordSize int    `json:"record_size"`
}

// Shape returns the spec's parameters and matrix shape, checked.
func (s *LWESpec) Shape() (lwepir.Params, lwepir.Shape, error) {
	p, err := lwepir.ByName(s.Params)
	if err != nil {
		return p, lwepir.Shape{}, err
	}
	sh := lwepir.Shape{Rows: s.Rows, Cols: s.Cols, RecordSize: s.RecordSize}
	return p, sh, sh.Validate(p)
}

// Role is what a source node carries for the session that runs the
// program (Node.Role).
type Role uint8

const (
	// NoRole: the node is bound, if at all, by its name.
	NoRole Role = iota
	// RoleQuery is the client's query: the ciphertext(s) it encrypts and
	// sends per request.
	RoleQuery
	// RoleDatabase is the stored data the program scans.
	RoleDatabase
)

// String returns "", "query" or "database".
func (r Role) String() string {
	switch r {
	case NoRole:
		return ""
	case RoleQuery:
		return "query"
	case RoleDatabase:
		return "database"
	}
	return fmt.Sprintf("Role(%d)", uint8(r))
}

// Segment kinds for Node.Segment.
type Segment string

const (
	// Unhinted: the Bare baseline falls back to a per-operation rule.
	Unhinted Segment = ""
	// Linear segments: scans, distances, inner products, matrix products,
	// convolutions — shallow work over stored data.
	Linear Segment = "linear"
	// NonLinear segments: polynomial approximations of non-linear
	// functions (sign, ReLU, softmax, GELU, normalisation) and
	// bootstrapping — deep work with many key switches.
	NonLinear Segment = "nonlinear"
)

// Program is a DAG of nodes in topological order; node i has ID i.
type Program struct {
	Name  string `json:"name"`
	Nodes []Node `json:"nodes"`
}

// MarshalJSON is the default encoding; UnmarshalJSON validates.
func (p *Program) UnmarshalJSON(b []byte) error {
	type plain Program
	var q plain
	if err := json.Unmarshal(b, &q); err != nil {
		return fmt.Errorf("ir: decode program: %w", err)
	}
	prog := Program(q)
	if err := prog.Validate(); err != nil {
		return err
	}
	*p = prog
	return nil
}

// Users returns, for each node, the nodes that use it as an argument.
func (p *Program) Users() [][]int {
	u := make([][]int, len(p.Nodes))
	for _, n := range p.Nodes {
		for _, a := range n.Args {
			u[a] = append(u[a], n.ID)
		}
	}
	return u
}

// Bytes returns the size of one instance of n's result with words of
// wordBits bits: (degree+1) polynomials (one for a plaintext) × (level+1)
// limbs × N coefficients.
func (p *Program) Bytes(n Node, wordBits int) (int64, error) {
	pr, err := fhe.Lookup(n.Params)
	if err != nil {
		return 0, err
	}
	return InstanceBytes(n, pr.LogN, wordBits), nil
}

// InstanceBytes is Bytes for n in a ring of degree 2^logN, for a caller
// that sizes many nodes of one preset and looks its degree up once.
func InstanceBytes(n Node, logN, wordBits int) int64 {
	if n.LWELimbs > 0 {
		return int64(n.LWELimbs) * 4 << logN
	}
	polys := int64(n.Degree + 1)
	if n.Degree == 0 {
		polys = 1
	}
	limbs := int64(n.Level + 1)
	if n.Compact {
		limbs = 1
	}
	return polys * limbs * (int64(1) << logN) * int64(wordBits) / 8
}
