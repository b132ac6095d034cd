package device

import (
	"context"
	"errors"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// Issue 23 item 4: SetStream of a program over a 1-prime Q with a node of
// 2 limbs was accepted, and the first RunStream panicked in the input
// check (q[l%Limbs], index 1 of 1): the daemon down. SetStream refuses it
// now; the same program at one limb registers and runs.
func TestSetStreamRefusesLimbsBeyondQ(t *testing.T) {
	_, d := newDevice(t)
	ps, err := rns.NTTPrimesBelow(30, 11, 2)
	if err != nil {
		t.Fatal(err)
	}
	sp := &lower.StreamProgram{Scheme: fhe.CKKS, Ring: lower.Ring{LogN: 11, Q: ps[:1], P: ps[1:]}, Nodes: []lower.StreamNode{
		{Node: 7, Kind: lower.StreamInput, Name: "x", Count: 1, Polys: 2, Limbs: 2, Out: true}}}
	b, err := sp.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = d.SetStream(ctx, &devicepb.SetStreamRequest{Name: "crash", Program: b})
	if !errors.Is(err, api.ErrInvalid) || !errors.Is(err, lower.ErrStreamProgram) {
		t.Fatalf("SetStream: %v, want ErrInvalid and lower.ErrStreamProgram", err)
	}
	// The run the crash needed: no program of that name.
	x := make(engine.Limbs, 4)
	for i := range x {
		x[i] = make([]uint64, 1<<11)
	}
	if _, err := d.RunStream(ctx, &devicepb.RunStreamRequest{Program: "crash", Inputs: []*devicepb.StreamValues{{Node: 7, Instances: api.Instances([]engine.Limbs{x})}}}); !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("RunStream of the refused program: %v", err)
	}
	sp.Nodes[0].Limbs = 1
	if b, err = sp.MarshalBinary(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.SetStream(ctx, &devicepb.SetStreamRequest{Name: "ok", Program: b}); err != nil {
		t.Fatal(err)
	}
	resp, err := d.RunStream(ctx, &devicepb.RunStreamRequest{Program: "ok", Inputs: []*devicepb.StreamValues{{Node: 7, Instances: api.Instances([]engine.Limbs{x[:2]})}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Outputs) != 1 || len(resp.Outputs[0].Instances) != 1 {
		t.Fatalf("outputs %+v", resp.Outputs)
	}
}
