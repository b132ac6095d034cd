package device

import (
	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// testObject is an object of a program as a test binds it: space, id and
// its shape, polys × limbs.
type testObject struct {
	space            isa.Space
	id, polys, limbs uint32
}

// dram is DRAM object id of polys × limbs.
func dram(id, polys, limbs uint32) testObject { return testObject{isa.SpaceDRAM, id, polys, limbs} }

func (o testObject) binding() *devicepb.Binding {
	return &devicepb.Binding{Space: uint32(o.space), Id: o.id, Polys: o.polys, Limbs: o.limbs}
}

// inline binds the object to limbs the request carries.
func (o testObject) inline(limbs [][]uint64) *devicepb.Binding {
	b := o.binding()
	b.Source = &devicepb.Binding_Inline{Inline: &devicepb.Inline{Data: api.EncodeLimbs(limbs)}}
	return b
}

// stored binds the object to a stored object, from its first poly.
func (o testObject) stored(name string) *devicepb.Binding {
	b := o.binding()
	b.Source = &devicepb.Binding_Stored{Stored: &devicepb.Stored{Name: name}}
	return b
}

// job binds the object to a job's result.
func (o testObject) job(id uint64) *devicepb.Binding {
	b := o.binding()
	b.Source = &devicepb.Binding_ResidentJob{ResidentJob: id}
	return b
}

// output is the object as a Send's output.
func (o testObject) output() *devicepb.Object {
	return &devicepb.Object{Space: uint32(o.space), Id: o.id, Polys: o.polys, Limbs: o.limbs}
}

// upload is a Send of limbs as a holding job (no program).
func upload(limbs [][]uint64, polys int) *devicepb.SendRequest {
	return &devicepb.SendRequest{Inputs: []*devicepb.Binding{dram(0, uint32(polys), uint32(len(limbs)/polys)).inline(limbs)}}
}

// mustLimbs decodes a Recv's limbs (a device in process sent them).
func mustLimbs(r *devicepb.RecvResponse) [][]uint64 {
	l, err := api.DecodeLimbs("result", r.GetData())
	if err != nil {
		panic(err)
	}
	return l
}
