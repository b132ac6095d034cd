package compiler

import "github.com/rosemary-fhe/rosemary/compiler/ir"

// AllOnDevice returns the plan with every operation in one device segment
// between the host's inputs and outputs (the plan itself when it already
// is so), and that segment's index.
//
// The runtime uses it for data that lives on the device: the compiler's
// cost model weighs the SSD engine against a SHARP-class host accelerator,
// but the host of a running Rosemary is a CPU, so pulling a stored database
// across the link to it is never the cheaper choice there.
func (p *Plan) AllOnDevice() (*Plan, int) {
	for i, s := range p.Segments {
		if !s.OnSSD() {
			continue
		}
		all := true
		for j := range p.Segments {
			if j != i && p.Computes(j) {
				all = false
			}
		}
		if all && p.Computes(i) {
			return p, i
		}
	}
	q := *p
	q.Placement = make([]Device, len(p.Program.Nodes))
	var in, dev, out []int
	for i, n := range p.Program.Nodes {
		switch n.Op {
		case ir.OpInput:
			q.Placement[i] = Host
			in = append(in, i)
		case ir.OpOutput:
			q.Placement[i] = Host
			out = append(out, i)
		default:
			q.Placement[i] = SSD
			dev = append(dev, i)
		}
	}
	q.Segments = []PlanSegment{{Device: Host, Nodes: in}, {Device: SSD, Nodes: dev}, {Device: Host, Nodes: out}}
	return &q, 1
}
