package e2e

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/graph"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// Check compares the private output with the plaintext reference and
// records the outcome in the report.
func (r *Report) Check(out, want []int64) {
	r.Outputs = len(want)
	r.Mismatches = 0
	if len(out) != len(want) {
		r.Mismatches = len(want)
	} else {
		for i := range want {
			if out[i] != want[i] {
				r.Mismatches++
			}
		}
	}
	r.Correct = r.Mismatches == 0 && len(want) > 0
}

// RunPipe runs both parties in this process over an in-memory pipe (for
// tests; CPU times then mix both parties) and checks the output against
// the reference.
func RunPipe(n *graph.Net, img []int64, cfg Config) (*Report, []int64, error) {
	want, err := n.Reference(img)
	if err != nil {
		return nil, nil, err
	}
	cc, sc := transport.Pipe()
	errc := make(chan error, 1)
	go func() { errc <- Serve(sc, n) }()
	out, rep, err := Infer(cc, n.Public(), img, cfg)
	serr := <-errc
	if err != nil {
		return nil, nil, err
	}
	if serr != nil {
		return nil, nil, fmt.Errorf("e2e: server: %w", serr)
	}
	rep.Check(out, want)
	return rep, out, nil
}
