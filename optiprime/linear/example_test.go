package linear_test

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
)

// Example runs one 3×3 convolution on shares: the client's messages would
// go over the transport (inputs up, outputs down); keys travel with
// Lattigo's MarshalBinary.
func Example() {
	params, _ := cheetah.NewParameters(cheetah.PN13)
	shape := linear.ConvShape{Ci: 1, H: 3, W: 3, Co: 1, Kh: 3, Kw: 3, Stride: 1, Pad: 1}
	opt := linear.Options{LogT: 21, WeightBits: 8}
	// Both parties derive the same plan from public data.
	plan, err := linear.NewPlan(linear.OptiEncodeBSGS, params, shape, opt)
	if err != nil {
		panic(err)
	}

	// Client: keys (the public and Galois keys go to the server), input share.
	client := linear.NewClient(params)
	gks, _ := client.GaloisKeys(plan)
	xc := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9} // client share of X
	up, _ := plan.EncryptInput(client, xc)

	// Server: weights (all ones: a 3×3 box sum), its share of X (zero here).
	ev := cheetah.NewEvaluator(params, client.Keys.PK, gks)
	w := []uint64{1, 1, 1, 1, 1, 1, 1, 1, 1}
	ws, _ := plan.PrepareWeights(ev, w) // offline
	down, serverShare, _ := plan.EvaluatePrepared(ev, ws, nil, make([]uint64, 9), up)

	// Client: its output share; the two shares add up to conv(X, W) mod 2^21.
	clientShare, _ := plan.DecryptOutput(client, down)
	out := make([]uint64, len(clientShare))
	for i := range out {
		out[i] = (clientShare[i] + serverShare[i]) % (1 << 21)
	}
	fmt.Println(out)
	// Output: [12 21 16 27 45 33 24 39 28]
}
