package api

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/object"
)

// seedLimbs are two limbs of four coefficients.
var seedLimbs = [][]uint64{{1, 2, 3, 4}, {5, 6, 7, 1 << 63}}

// seedSend binds an inline, a stored and a resident operand.
func seedSend() *pb.SendRequest {
	return &pb.SendRequest{Program: "p", Inputs: []*pb.Binding{
		{Space: 2, Id: 1, Polys: 1, Limbs: 2, Source: &pb.Binding_Inline{Inline: &pb.Inline{Data: EncodeLimbs(seedLimbs)}}},
		{Space: 2, Id: 2, Polys: 1, Limbs: 2, Source: &pb.Binding_Stored{Stored: &pb.Stored{Name: "db/0", Poly: 1}}}},
		Key:    &pb.Binding{Space: 3, Id: 1, Polys: 2, Limbs: 3, Source: &pb.Binding_ResidentJob{ResidentJob: 7}},
		Output: &pb.Object{Space: 2, Id: 3, Polys: 2, Limbs: 2}}
}

// seeds are encoded requests of every kind.
func seeds() []proto.Message {
	return []proto.Message{
		must(NewPut("db/0", 2, 1, 2, seedLimbs, 8)),
		must(NewPut("db/head", 5, 1, 1, [][]uint64{{3, 0, 0, 'a', 'b', 'c', 0, 0}}, 1)),
		seedSend(),
		&pb.LWEQueryRequest{Params: "test", Rows: 512, Cols: 256, RecordSize: 44, Generation: "db/g1.ab", Keys: "db/members/me/keys/k/lwe-ff/",
			Query: make([]byte, 1024), Secret: make([]byte, 64)},
		&pb.RecvRequest{Job: 3, Fetch: true, Release: true},
		&pb.ReleaseRequest{Jobs: []uint64{1, 2}},
		&pb.ProgSetRequest{Name: "p", Program: []byte("RSMP....")},
		&pb.GetRequest{Name: "x"},
		&pb.DeleteRequest{Name: "x"},
		&pb.SetStreamRequest{Name: "s", Program: []byte(`{"nodes":[]}`)},
		&pb.RunStreamRequest{Program: "s", Inputs: []*pb.StreamValues{{Node: 0, Instances: Instances([][][]uint64{seedLimbs})}},
			Stored: []*pb.StoredBinding{{Node: 5, Prefix: "db/", PerObject: 255}}, Keys: []*pb.KeyBinding{{Key: "rlk", Object: "k/rlk"}}},
	}
}

// Limbs and instances encoded, sent and decoded are the same limbs.
func TestLimbsRoundTrip(t *testing.T) {
	vals := [][][]uint64{seedLimbs, {{9, 8, 7, 6}}}
	b, err := proto.Marshal(&pb.RunStreamResponse{Outputs: []*pb.StreamValues{{Node: 3, Instances: Instances(vals)}}})
	if err != nil {
		t.Fatal(err)
	}
	var m pb.RunStreamResponse
	if err := proto.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	got, err := DecodeInstances("output", m.GetOutputs()[0])
	if err != nil || !reflect.DeepEqual(got, vals) {
		t.Fatalf("%v, %v; want %v", got, err, vals)
	}
	if l, err := DecodeLimbs("x", EncodeLimbs(seedLimbs)); err != nil || !reflect.DeepEqual(l, seedLimbs) {
		t.Fatalf("%v, %v", l, err)
	}
	if l, err := DecodeLimbs("x", nil); err != nil || l != nil {
		t.Fatalf("no limbs: %v, %v", l, err)
	}
	for _, bad := range [][][]byte{{{1, 2, 3}}, {make([]byte, 8), make([]byte, 16)}, {{}}} {
		if _, err := DecodeLimbs("x", bad); !errors.Is(err, ErrInvalid) {
			t.Fatalf("limbs of %v bytes: %v, want ErrInvalid", bad, err)
		}
	}
}

// request is one request type of the service: a fresh wire message and its
// conversion to the device's type.
type request struct {
	name string
	new  func() proto.Message
	conv func(proto.Message) (any, error)
}

func requests() []request {
	return []request{
		{"Put", func() proto.Message { return &pb.PutRequest{} },
			func(m proto.Message) (any, error) {
				kind, shape, raw, err := PutObject(m.(*pb.PutRequest))
				return &putRead{m.(*pb.PutRequest).GetName(), kind, shape, raw}, err
			}},
		{"Get", func() proto.Message { return &pb.GetRequest{} },
			func(m proto.Message) (any, error) { return m, CheckName("object name", m.(*pb.GetRequest).GetName()) }},
		{"Send", func() proto.Message { return &pb.SendRequest{} },
			func(m proto.Message) (any, error) { return m, CheckSend(m.(*pb.SendRequest)) }},
		{"RunStream", func() proto.Message { return &pb.RunStreamRequest{} },
			func(m proto.Message) (any, error) { return m, CheckRunStream(m.(*pb.RunStreamRequest)) }},
		{"List", func() proto.Message { return &pb.ListRequest{} },
			func(m proto.Message) (any, error) { return m, CheckName("prefix", m.(*pb.ListRequest).GetPrefix()) }},
		{"Grant", func() proto.Message { return &pb.GrantRequest{} },
			func(m proto.Message) (any, error) { return m, CheckGrant(m.(*pb.GrantRequest)) }},
		{"CopyFrom", func() proto.Message { return &pb.CopyFromRequest{} },
			func(m proto.Message) (any, error) { return m, CheckCopyFrom(m.(*pb.CopyFromRequest)) }},
	}
}

// limbsValid checks what DecodeLimbs promises.
func limbsValid(l [][]uint64) error {
	if len(l) == 0 {
		if l != nil {
			return errors.New("empty non-nil limbs")
		}
		return nil
	}
	n := len(l[0])
	if n < 1 || n > MaxLimbCoeffs || int64(len(l))*int64(n)*8 > MaxMessageBytes {
		return fmt.Errorf("%d limbs of %d coefficients", len(l), n)
	}
	for i := range l {
		if len(l[i]) != n {
			return fmt.Errorf("limb %d of %d coefficients, limb 0 of %d", i, len(l[i]), n)
		}
	}
	return nil
}

// bindingValid decodes a checked operand: its inline limbs decode within
// the limits and encode back to the same bytes.
func bindingValid(b *pb.Binding) error {
	if b.GetSource() == nil {
		return errors.New("no source")
	}
	if len(b.GetStored().GetName()) > MaxNameBytes {
		return fmt.Errorf("stored name of %d bytes", len(b.GetStored().GetName()))
	}
	data := b.GetInline().GetData()
	l, err := DecodeLimbs("inline", data)
	if err != nil {
		return err
	}
	if err := limbsValid(l); err != nil {
		return err
	}
	if back := EncodeLimbs(l); len(data) > 0 && !reflect.DeepEqual(back, data) {
		return errors.New("inline limbs do not round-trip")
	}
	return nil
}

// checkValid checks that a request its check passed keeps the wire limits
// once decoded.
func checkValid(req any) error {
	name := func(s string) error {
		if len(s) > MaxNameBytes {
			return fmt.Errorf("name of %d bytes", len(s))
		}
		return nil
	}
	switch r := req.(type) {
	case *putRead:
		if len(r.raw) != r.shape.NumLimbs() || r.shape.Bytes() > MaxMessageBytes {
			return fmt.Errorf("%d limbs of a %v object", len(r.raw), r.shape)
		}
		for _, l := range r.raw {
			if len(l) != r.shape.LimbBytes() {
				return fmt.Errorf("a limb of %d bytes in a %v object", len(l), r.shape)
			}
		}
	case *pb.SendRequest:
		if err := name(r.GetProgram()); err != nil {
			return err
		}
		if len(r.GetInputs()) > MaxBindings {
			return fmt.Errorf("%d inputs", len(r.GetInputs()))
		}
		for _, b := range r.GetInputs() {
			if err := bindingValid(b); err != nil {
				return err
			}
		}
		if r.GetKey() != nil {
			if err := bindingValid(r.GetKey()); err != nil {
				return err
			}
		}
	case *pb.RunStreamRequest:
		if err := name(r.GetProgram()); err != nil {
			return err
		}
		for _, v := range r.GetInputs() {
			ins, err := DecodeInstances("input", v)
			if err != nil {
				return err
			}
			for _, in := range ins {
				if err := limbsValid(in); err != nil {
					return err
				}
			}
		}
		for _, b := range r.GetStored() {
			if err := name(b.GetPrefix()); err != nil {
				return err
			}
		}
	}
	return nil
}

// FuzzRequests feeds arbitrary bytes to proto.Unmarshal of every request
// message and what parses through the device's conversion: it never
// panics, refuses with ErrInvalid or yields a request within the wire
// limits, and a converted Put encodes back to the same request.
func FuzzRequests(f *testing.F) {
	for _, m := range seeds() {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, r := range requests() {
			m := r.new()
			if proto.Unmarshal(data, m) != nil {
				continue
			}
			req, err := r.conv(m)
			if err != nil {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("%s refused without ErrInvalid: %v", r.name, err)
				}
				continue
			}
			if err := checkValid(req); err != nil {
				t.Fatalf("%s accepted beyond the limits: %v", r.name, err)
			}
			var again any
			switch q := req.(type) {
			case *putRead:
				var back putRead
				back.kind, back.shape, back.raw, err = PutObject(PutRaw(q.name, q.kind, q.shape, q.raw))
				back.name, again = q.name, &back
			default:
				continue
			}
			if err != nil || !reflect.DeepEqual(again, req) {
				t.Fatalf("%s does not round-trip: %v\n%+v\n%+v", r.name, err, req, again)
			}
		}
	})
}

// A reply carries at most maxCoreUses stages: more is refused, named.
func TestRunStreamReplyBoundsStages(t *testing.T) {
	var cores []*pb.CoreUse
	for i := 0; i <= maxCoreUses; i++ {
		cores = append(cores, &pb.CoreUse{Stage: fmt.Sprint(i)})
	}
	if err := CheckCoreUses(cores); !errors.Is(err, ErrInvalid) {
		t.Fatalf("%d stages: %v, want ErrInvalid", len(cores), err)
	}
	if err := CheckCoreUses(cores[:maxCoreUses]); err != nil {
		t.Fatalf("%d stages: %v", maxCoreUses, err)
	}
}

func must[M proto.Message](m M, err error) M {
	if err != nil {
		panic(err)
	}
	return m
}

// putRead is what the device reads of a Put.
type putRead struct {
	name  string
	kind  object.Kind
	shape object.Shape
	raw   [][]byte
}
