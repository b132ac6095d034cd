package ir

import "fmt"

// Builder constructs a program; the first error sticks and is returned by
// Build, so calls chain without checks. Values are node IDs.
type Builder struct {
	p       Program
	params  string
	segment Segment
	err     error
}

// Segment makes s the segment hint of the nodes added from now on (see
// Node.Segment) and returns the previous hint, so a region reads
// defer b.Segment(b.Segment(ir.NonLinear)).
func (b *Builder) Segment(s Segment) Segment {
	prev := b.segment
	b.segment = s
	return prev
}

// NewBuilder starts a program whose nodes use the parameter preset params.
func NewBuilder(name, params string) *Builder {
	return &Builder{p: Program{Name: name}, params: params}
}

func (b *Builder) add(n Node) int {
	n.ID = len(b.p.Nodes)
	if n.Params == "" {
		n.Params = b.params
	}
	if n.Segment == Unhinted {
		n.Segment = b.segment
	}
	if n.Count == 0 {
		n.Count = 1
		for _, a := range n.Args {
			if a >= 0 && a < len(b.p.Nodes) && b.p.Nodes[a].Count > n.Count && n.Op != OpSum {
				n.Count = b.p.Nodes[a].Count
			}
		}
	}
	b.p.Nodes = append(b.p.Nodes, n)
	return n.ID
}

func (b *Builder) node(id int) Node {
	if id < 0 || id >= len(b.p.Nodes) {
		if b.err == nil {
			b.err = fmt.Errorf("ir: builder: no node %d", id)
		}
		return Node{}
	}
	return b.p.Nodes[id]
}

// Input is a ciphertext the client sends.
func (b *Builder) Input(name string, level int) int {
	return b.add(Node{Op: OpInput, Name: name, Level: level, Degree: 1})
}

// Stored is an object of count instances kept on the device: plaintexts
// (plain = true, e.g. database records or weights) or ciphertexts.
func (b *Builder) Stored(name string, level int, count int64, plain bool) int {
	d := 1
	if plain {
		d = 0
	}
	return b.add(Node{Op: OpStored, Name: name, Level: level, Degree: d, Count: count})
}

// StoredCompact adds a stored BGV plaintext kept in compact form (see
// Node.Compact); it can only be the plaintext operand of a PMult.
func (b *Builder) StoredCompact(name string, level int, count int64) int {
	return b.add(Node{Op: OpStored, Name: name, Level: level, Degree: 0, Count: count, Compact: true})
}

// LWEQuery is an LWE query vector the client sends: count instances of
// N words (Node.LWELimbs).
func (b *Builder) LWEQuery(name string, count int64) int {
	return b.add(Node{Op: OpInput, Name: name, Count: count, LWELimbs: 1})
}

// StoredLWEMatrix is a byte matrix of N rows kept on the device for an
// LWE scan: count blocks of N rows × N columns, N/4 limbs each.
func (b *Builder) StoredLWEMatrix(name string, logN int, count int64) int {
	return b.add(Node{Op: OpStored, Name: name, Count: count, LWELimbs: 1 << logN / 4})
}

// LWEScan is D·q modulo 2^32 (OpLWEScan): one limb of N row sums.
func (b *Builder) LWEScan(q, d int) int {
	return b.add(Node{Op: OpLWEScan, Args: []int{q, d}, Count: 1, LWELimbs: 1})
}

// LWEScanOf is LWEScan of the database db (Node.LWE): the scan the device
// runs, with the ring stage, as db's answer program.
func (b *Builder) LWEScanOf(q, d int, db LWESpec) int {
	id := b.LWEScan(q, d)
	b.p.Nodes[id].LWE = &db
	return id
}

// PMultAt multiplies ct by instance k of the stored plaintexts pt
// (Node.StoredOffset).
func (b *Builder) PMultAt(ct, pt int, k int64) int {
	return b.add(Node{Op: OpPMult, Args: []int{ct, pt}, Level: b.node(ct).Level, Degree: 1, Count: 1, Window: true, StoredOffset: k})
}

// Output returns x to the client.
func (b *Builder) Output(name string, x int) int {
	a := b.node(x)
	return b.add(Node{Op: OpOutput, Name: name, Args: []int{x}, Level: a.Level, Degree: a.Degree, Count: a.Count, LWELimbs: a.LWELimbs})
}

func (b *Builder) binary(op Op, x, y, degree int) int {
	return b.add(Node{Op: op, Args: []int{x, y}, Level: b.node(x).Level, Degree: degree})
}

// HAdd adds two ciphertexts.
func (b *Builder) HAdd(x, y int) int {
	return b.binary(OpHAdd, x, y, max(b.node(x).Degree, b.node(y).Degree))
}

// HSub subtracts y from x.
func (b *Builder) HSub(x, y int) int {
	return b.binary(OpHSub, x, y, max(b.node(x).Degree, b.node(y).Degree))
}

// PMult multiplies a ciphertext by a plaintext.
func (b *Builder) PMult(ct, pt int) int { return b.binary(OpPMult, ct, pt, 1) }

// HMult multiplies two ciphertexts (degree 2; Relinearize follows).
func (b *Builder) HMult(x, y int) int { return b.binary(OpHMult, x, y, 2) }

// MulRelin is HMult followed by Relinearize.
func (b *Builder) MulRelin(x, y int) int { return b.Relinearize(b.HMult(x, y)) }

func (b *Builder) unary(op Op, x, level int) int {
	return b.add(Node{Op: op, Args: []int{x}, Level: level, Degree: 1})
}

// CMult multiplies by a constant.
func (b *Builder) CMult(x int, c float64) int {
	id := b.unary(OpCMult, x, b.node(x).Level)
	b.p.Nodes[id].Constant = c
	return id
}

// Relinearize brings a degree-2 product back to degree 1.
func (b *Builder) Relinearize(x int) int { return b.unary(OpRelinearize, x, b.node(x).Level) }

// HRot rotates the slots left by k.
func (b *Builder) HRot(x, k int) int {
	id := b.unary(OpHRot, x, b.node(x).Level)
	b.p.Nodes[id].Rotation = k
	return id
}

// Conjugate applies complex conjugation (BGV: swaps the rows).
func (b *Builder) Conjugate(x int) int { return b.unary(OpConjugate, x, b.node(x).Level) }

// Rescale divides by the last prime.
func (b *Builder) Rescale(x int) int { return b.unary(OpRescale, x, b.node(x).Level-1) }

// LevelDown drops primes down to level.
func (b *Builder) LevelDown(x, level int) int { return b.unary(OpLevelDown, x, level) }

// Sum folds the instances of x into count results (count 1: a full sum).
func (b *Builder) Sum(x int, count int64) int {
	return b.add(Node{Op: OpSum, Args: []int{x}, Level: b.node(x).Level, Degree: 1, Count: count})
}

// Boot bootstraps x with the given parameters.
func (b *Builder) Boot(x int, spec BootSpec) int {
	id := b.unary(OpBoot, x, spec.OutputLevel)
	s := spec
	b.p.Nodes[id].Boot = &s
	return id
}

// Build validates and returns the program.
func (b *Builder) Build() (*Program, error) {
	if b.err != nil {
		return nil, b.err
	}
	p := b.p
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// SetRole gives node id the role r (Node.Role) and returns id, so a
// source reads q := b.SetRole(b.Input("query", top), ir.RoleQuery).
func (b *Builder) SetRole(id int, r Role) int {
	if id >= 0 && id < len(b.p.Nodes) {
		b.p.Nodes[id].Role = r
	} else if b.err == nil {
		b.err = fmt.Errorf("ir: builder: no node %d", id)
	}
	return id
}

// Append adds a copy of n (its Args already referring to this builder's
// nodes) and returns its new ID. Count and Params are kept as given.
func (b *Builder) Append(n Node) int { return b.add(n) }

// InputN is count ciphertexts the client sends under one name.
func (b *Builder) InputN(name string, level int, count int64) int {
	return b.add(Node{Op: OpInput, Name: name, Level: level, Degree: 1, Count: count})
}

// Constant is a public plaintext constant of count instances (bootstrapping
// diagonals, masks): stored on the device, but either side can make it.
func (b *Builder) Constant(name string, level int, count int64) int {
	return b.add(Node{Op: OpStored, Name: name, Level: level, Degree: 0, Count: count, Public: true})
}
