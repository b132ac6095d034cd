package nonlinear_test

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/nonlinear"
	"github.com/rosemary-fhe/rosemary/optiprime/share"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// Both parties run in one process here; over a network the server calls
// transport.Accept and the client transport.Dial instead of Pipe.
func Example() {
	ring, _ := share.NewRing(37)
	prg, _ := share.NewPRG()
	client, server := transport.Pipe()
	defer client.Close()

	// Fixed-point activations, secret-shared (in a real run they come out
	// of the HE linear layer).
	x, _ := ring.EncodeVec([]float64{-1.5, 0, 2.25, -0.001, 7}, share.Scale)
	x0, x1 := ring.Split(prg, x)

	type result struct {
		y   []uint64
		err error
	}
	srv := make(chan result, 1)
	go func() { // party 0: the server
		p, err := nonlinear.NewParty(server, ring)
		if err != nil {
			srv <- result{nil, err}
			return
		}
		y, err := p.ReLU(x0)
		if err == nil {
			_, err = p.RevealTo(y, 1)
		}
		srv <- result{nil, err}
	}()
	p, err := nonlinear.NewParty(client, ring) // party 1: the client
	if err != nil {
		fmt.Println(err)
		return
	}
	y1, err := p.ReLU(x1)
	if err != nil {
		fmt.Println(err)
		return
	}
	y, err := p.RevealTo(y1, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	if r := <-srv; r.err != nil {
		fmt.Println(r.err)
		return
	}
	fmt.Println(ring.DecodeVec(y, share.Scale))
	// Output: [0 0 2.25 0 7]
}
