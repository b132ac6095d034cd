package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// Programs that validated and then panicked (checked against the code
// before the bounds: each one a runtime error in Validate, NewStream or a
// worker goroutine) are refused by NewStream with lower.ErrStreamProgram.
func TestNewStreamRefusesCrashers(t *testing.T) {
	ps, err := rns.NTTPrimesBelow(30, 11, 3)
	if err != nil {
		t.Fatal(err)
	}
	ring := lower.Ring{LogN: 11, Q: ps[:1], P: ps[1:2]}
	hadd, err := lower.Op(ir.OpHAdd, &lower.Context{Scheme: fhe.CKKS, Ring: ring, Level: 0})
	if err != nil {
		t.Fatal(err)
	}
	five := *hadd
	five.Inputs = append([]lower.Object(nil), hadd.Inputs...)
	for j := 2; j < 5; j++ {
		o := hadd.Inputs[0]
		o.ID = 10 + j
		five.Inputs = append(five.Inputs, o)
	}
	in := lower.StreamNode{Kind: lower.StreamInput, Name: "x", Count: 1, Polys: 2, Limbs: 1}
	expRing := lower.Ring{LogN: 11, Q: ps[:1], P: ps[1:3]}
	step, err := lower.Op(lower.OpExpandStep, &lower.Context{Scheme: fhe.BGV, T: 65537, Ring: lower.Ring{LogN: 11, Q: ps[:2], P: ps[2:3]}, Level: 1})
	if err != nil {
		t.Fatal(err)
	}
	step.Program.Config.Moduli = append(append([]uint64(nil), expRing.Q...), expRing.P...)
	for name, sp := range map[string]*lower.StreamProgram{
		// issue 23 item 4: 2 limbs over a 1-prime Q (the device's input
		// check indexed Q by limb)
		"limbs beyond Q": {Scheme: fhe.CKKS, Ring: ring, Nodes: []lower.StreamNode{
			{Kind: lower.StreamInput, Name: "x", Count: 1, Polys: 2, Limbs: 2, Out: true}}},
		// index out of range in Validate
		"sum without arguments": {Scheme: fhe.CKKS, Ring: ring, Nodes: []lower.StreamNode{
			{Kind: lower.StreamSum, Count: 1, Polys: 2, Limbs: 1, Out: true}}},
		// nil dereference in NewStream
		"body on an input": {Scheme: fhe.CKKS, Ring: ring, Nodes: []lower.StreamNode{
			{Kind: lower.StreamInput, Name: "x", Count: 1, Polys: 2, Limbs: 1, Out: true, Body: &lower.Program{}}}},
		// index out of range in NewStream (the expansion's constants)
		"expansion beyond Q": {Scheme: fhe.BGV, T: 65537, Ring: expRing, Nodes: []lower.StreamNode{
			{Kind: lower.StreamInput, Name: "q", Count: 1, Polys: 2, Limbs: 2},
			{Kind: lower.StreamExpand, Count: 2, Polys: 2, Limbs: 2, Args: []int{0}, Expand: &ir.ExpandSpec{}, Steps: []*lower.Program{step}, Out: true}}},
		// index out of range in a worker goroutine: the process down
		"five arguments": {Scheme: fhe.CKKS, Ring: ring, Nodes: []lower.StreamNode{in,
			{Kind: lower.StreamOp, Count: 1, Polys: 2, Limbs: 1, Args: []int{0, 0, 0, 0, 0}, Body: &five, Out: true}}},
		// 2^40 slice entries allocated for a returned node
		"count bomb": {Scheme: fhe.CKKS, Ring: ring, Nodes: []lower.StreamNode{
			{Kind: lower.StreamInput, Name: "x", Count: 1 << 40, Polys: 2, Limbs: 1, Out: true}}},
		// a composite modulus
		"composite prime": {Scheme: fhe.CKKS, Ring: lower.Ring{LogN: 11, Q: []uint64{4097 * 12289}, P: ps[1:2]}, Nodes: []lower.StreamNode{
			{Kind: lower.StreamInput, Name: "x", Count: 1, Polys: 2, Limbs: 1, Out: true}}},
	} {
		if _, err := engine.NewStream(sp); !errors.Is(err, lower.ErrStreamProgram) {
			t.Errorf("%s: NewStream gave %v, want lower.ErrStreamProgram", name, err)
		}
	}
}

// shortKeys serves keys of half the ring degree (a key object stored for
// another ring).
type shortKeys struct{ *genSource }

func (s shortKeys) Key(name string) (engine.Limbs, error) {
	k, err := s.genSource.Key(name)
	for i := range k {
		k[i] = k[i][:len(k[i])/2]
	}
	return k, err
}

// A key whose limbs are not of the ring's degree is an error: bodies read
// key limbs in place, and the kernels index N coefficients.
func TestStreamRefusesKeyOfAnotherDegree(t *testing.T) {
	seeds := fuzzSeeds(t)
	var sp lower.StreamProgram
	if err := sp.UnmarshalBinary(seeds[len(seeds)-1]); err != nil { // the rotation
		t.Fatal(err)
	}
	s, err := engine.NewStream(&sp)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Run(context.Background(), shortKeys{newGenSource(&sp)}, engine.StreamOptions{Workers: 1})
	if err == nil || !strings.Contains(err.Error(), "coefficients, want") {
		t.Fatalf("run with short key limbs: %v", err)
	}
}
