package tdap

import (
	"fmt"
	"math"
)

// Device is where an operation runs.
type Device uint8

const (
	// Host is the host-side FHE accelerator (the source of the cut).
	Host Device = iota
	// SSD is the in-storage Rosemary engine (the sink of the cut).
	SSD
)

// String returns "host" or "ssd".
func (d Device) String() string {
	switch d {
	case Host:
		return "host"
	case SSD:
		return "ssd"
	}
	return fmt.Sprintf("Device(%d)", uint8(d))
}

// ParseDevice is the inverse of String: "host" or "ssd".
func ParseDevice(s string) (Device, error) {
	switch s {
	case "host":
		return Host, nil
	case "ssd":
		return SSD, nil
	}
	return 0, fmt.Errorf("tdap: no device %q (host, ssd)", s)
}

// MarshalText encodes the device by name, so a plan's placements read
// "host"/"ssd" in JSON rather than numbers.
func (d Device) MarshalText() ([]byte, error) {
	if d != Host && d != SSD {
		return nil, fmt.Errorf("tdap: cannot encode %v", d)
	}
	return []byte(d.String()), nil
}

// UnmarshalText decodes a name written by MarshalText.
func (d *Device) UnmarshalText(b []byte) error {
	v, err := ParseDevice(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Pin fixes a node to a device, or leaves it free.
type Pin uint8

const (
	// Free nodes are placed by the min-cut.
	Free Pin = iota
	// PinHost nodes must run on the host: client inputs and final outputs.
	PinHost
	// PinSSD nodes must stay on the SSD: stored objects (database
	// plaintexts/ciphertexts, model weights).
	PinSSD
)

// String returns "free", "host" or "ssd".
func (p Pin) String() string {
	switch p {
	case Free:
		return "free"
	case PinHost:
		return Host.String()
	case PinSSD:
		return SSD.String()
	}
	return fmt.Sprintf("Pin(%d)", uint8(p))
}

// Node is one operation of the program. CostHost and CostSSD are D_i(Host)
// and D_i(SSD), the cost of running it on each device, in the problem's cost
// unit. For a pinned node only the cost on its own device ever counts.
//
// OutComm, if positive, is the cost of sending the node's output across the
// link once: it is paid when at least one successor (an Edge from this node)
// is on the other device, however many are. This models a ciphertext that
// is shipped once and then read by several operations, e.g. a query fanned
// out to every database chunk, which per-edge Comm would charge once per
// reader. The edges' own Comm is paid as well, so a caller using OutComm for
// a node normally sets its out-edges' Comm to zero.
type Node struct {
	CostHost int64
	CostSSD  int64
	OutComm  int64
	Pin      Pin
}

// Edge is a data dependency From→To. Comm is T_comm, the cost of moving the
// dependency's data over the host–SSD link (bytes / B_link in the cost
// unit); it is paid once if the two ends are placed on different devices,
// whichever way the data flows.
type Edge struct {
	From, To int
	Comm     int64
}

// Problem is a TDAP instance: nodes indexed 0..len(Nodes)-1 and the edges
// between them. The graph is normally the program DAG, but the min-cut does
// not need acyclicity; parallel edges add up.
type Problem struct {
	Nodes []Node
	Edges []Edge
}

// Assignment gives the device of each node, indexed like Problem.Nodes.
type Assignment []Device

// Count returns how many nodes are placed on each device.
func (a Assignment) Count() (host, ssd int) {
	for _, d := range a {
		if d == SSD {
			ssd++
		} else {
			host++
		}
	}
	return host, ssd
}

// maxTotal bounds the largest possible objective. Solve's network uses
// maxTotal as a finite "infinity" for the OutComm construction, and residual
// capacities stay below 2·maxTotal + its flow, so this keeps them in int64.
const maxTotal = 1 << 61

// maxNodes bounds a problem so that its flow network (nodes plus source and
// sink) fits NewNetwork's limit.
const maxNodes = math.MaxInt32 - 3

// Validate checks that the problem is well formed: costs and transfer costs
// non-negative, pins known, edge endpoints in range and distinct, and the
// largest possible objective (every node at its dearer device, every edge
// and every OutComm paid) below 2^61 (26 days in picoseconds).
func (p Problem) Validate() error {
	_, err := p.bound()
	return err
}

// bound validates p and returns an upper bound on the objective of any
// placement.
func (p Problem) bound() (int64, error) {
	if len(p.Nodes) > maxNodes {
		return 0, fmt.Errorf("tdap: %d nodes exceed the limit of %d", len(p.Nodes), maxNodes)
	}
	if len(p.Edges) > math.MaxInt32/4 {
		return 0, fmt.Errorf("tdap: %d edges exceed the limit of %d", len(p.Edges), math.MaxInt32/4)
	}
	var bound int64
	for i, n := range p.Nodes {
		if n.CostHost < 0 || n.CostSSD < 0 {
			return 0, fmt.Errorf("tdap: node %d: negative cost (host %d, ssd %d)", i, n.CostHost, n.CostSSD)
		}
		if n.OutComm < 0 {
			return 0, fmt.Errorf("tdap: node %d: negative output transfer cost %d", i, n.OutComm)
		}
		if n.Pin > PinSSD {
			return 0, fmt.Errorf("tdap: node %d: unknown pin %d", i, uint8(n.Pin))
		}
		bound = addSat(bound, max(n.CostHost, n.CostSSD))
		bound = addSat(bound, n.OutComm)
	}
	for k, e := range p.Edges {
		if e.From < 0 || e.From >= len(p.Nodes) || e.To < 0 || e.To >= len(p.Nodes) {
			return 0, fmt.Errorf("tdap: edge %d: %d→%d out of range [0, %d)", k, e.From, e.To, len(p.Nodes))
		}
		if e.From == e.To {
			return 0, fmt.Errorf("tdap: edge %d: self-loop on node %d", k, e.From)
		}
		if e.Comm < 0 {
			return 0, fmt.Errorf("tdap: edge %d (%d→%d): negative transfer cost %d", k, e.From, e.To, e.Comm)
		}
		bound = addSat(bound, e.Comm)
	}
	if bound >= maxTotal {
		return 0, fmt.Errorf("tdap: costs and transfer costs total 2^61 or more (largest objective %d)", bound)
	}
	return bound, nil
}

// addSat adds two non-negative int64s, saturating at math.MaxInt64.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Check reports whether a is a placement of p that respects every pin.
func (p Problem) Check(a Assignment) error {
	if len(a) != len(p.Nodes) {
		return fmt.Errorf("tdap: assignment has %d entries for %d nodes", len(a), len(p.Nodes))
	}
	for i, d := range a {
		if d != Host && d != SSD {
			return fmt.Errorf("tdap: node %d: unknown device %d", i, uint8(d))
		}
		switch p.Nodes[i].Pin {
		case PinHost:
			if d != Host {
				return fmt.Errorf("tdap: node %d is pinned to the host but placed on the ssd", i)
			}
		case PinSSD:
			if d != SSD {
				return fmt.Errorf("tdap: node %d is pinned to the ssd but placed on the host", i)
			}
		}
	}
	return nil
}

// Cost evaluates the TDAP objective of placement a directly:
//
//	Σ_i D_i(a_i) + Σ_{(i,j) : a_i ≠ a_j} T_comm(i,j) + Σ_{i read across} OutComm_i
//
// where node i is read across when some edge (i,j) has a_j ≠ a_i.
//
// It validates p and checks that a respects the pins.
func Cost(p Problem, a Assignment) (int64, error) {
	if err := p.Validate(); err != nil {
		return 0, err
	}
	if err := p.Check(a); err != nil {
		return 0, err
	}
	return cost(p, a), nil
}

// cost is Cost without the checks; Validate guarantees it cannot overflow.
func cost(p Problem, a Assignment) int64 {
	var c int64
	for i, n := range p.Nodes {
		if a[i] == SSD {
			c += n.CostSSD
		} else {
			c += n.CostHost
		}
	}
	var across []bool
	for _, e := range p.Edges {
		if a[e.From] == a[e.To] {
			continue
		}
		c += e.Comm
		if out := p.Nodes[e.From].OutComm; out > 0 {
			if across == nil {
				across = make([]bool, len(p.Nodes))
			}
			if !across[e.From] {
				across[e.From] = true
				c += out
			}
		}
	}
	return c
}
