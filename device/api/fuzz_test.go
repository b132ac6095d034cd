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
func seedSend() *SendRequest {
	return &SendRequest{Program: "p", Inputs: []Binding{{Space: 2, ID: 1, Polys: 1, Limbs: 2, Source: SourceInline, Inline: seedLimbs},
		{Space: 2, ID: 2, Polys: 1, Limbs: 2, Source: SourceStored, Name: "db/0", Poly: 1}},
		HasKey: true, Key: Binding{Space: 3, ID: 1, Polys: 2, Limbs: 3, Source: SourceResident, Job: 7},
		Output: Binding{Space: 2, ID: 3, Polys: 2, Limbs: 2}}
}

// seeds are encoded requests of every kind.
func seeds() []proto.Message {
	return []proto.Message{
		must(NewPut("db/0", 2, 1, 2, seedLimbs, 8)),
		must(NewPut("db/head", 5, 1, 1, [][]uint64{{3, 0, 0, 'a', 'b', 'c', 0, 0}}, 1)),
		sendToProto(seedSend()),
		&pb.LWEQueryRequest{Params: "test", Rows: 512, Cols: 256, RecordSize: 44, Generation: "db/g1.ab", Keys: "db/members/me/keys/k/lwe-ff/",
			Query: make([]byte, 1024), Secret: make([]byte, 64)},
		&pb.RecvRequest{Job: 3, Fetch: true, Release: true},
		&pb.ReleaseRequest{Jobs: []uint64{1, 2}},
		&pb.ProgSetRequest{Name: "p", Program: []byte("RSMP....")},
		&pb.GetRequest{Name: "x"},
		&pb.DeleteRequest{Name: "x"},
		&pb.SetStreamRequest{Name: "s", Program: []byte(`{"nodes":[]}`)},
		runStreamToProto(&RunStreamRequest{Program: "s", Inputs: []StreamValues{{Node: 0, Instances: [][][]uint64{seedLimbs}}},
			Stored: []StoredBinding{{Node: 5, Prefix: "db/", PerObject: 255}}, Keys: []KeyBinding{{Key: "rlk", Object: "k/rlk"}}}),
	}
}

// A request converted from the wire and back is the same request, and so
// is every reply.
func TestProtoRoundTrip(t *testing.T) {
	send := seedSend()
	runReply := &RunStreamResponse{Outputs: []StreamValues{{Node: 3, Instances: [][][]uint64{seedLimbs}}}, StoreBytes: 1, Bodies: 2, Seconds: 0.5,
		Cores: []CoreUse{{Stage: "ring", Seconds: 0.25, Chunks: 16, WaitSeconds: 0.125, HeldSeconds: 0.0625, MaxWaitSeconds: 0.03125, MaxChunkSeconds: 0.015625, Batch: 1, MinLimit: 2},
			{Stage: "scan", Seconds: 0.5, Chunks: 4096, Batch: 3}}}
	for _, tc := range []struct {
		name string
		want any
		msg  proto.Message
		back func(proto.Message) (any, error)
	}{
		{"send", send, sendToProto(send), func(m proto.Message) (any, error) { return sendFromProto(m.(*pb.SendRequest)) }},
		{"recv reply", &RecvResponse{Polys: 1, Data: seedLimbs, Instructions: 1, MicroOps: 2, StoreBytes: 3},
			recvRespToProto(&RecvResponse{Polys: 1, Data: seedLimbs, Instructions: 1, MicroOps: 2, StoreBytes: 3}),
			func(m proto.Message) (any, error) { return recvRespFromProto(m.(*pb.RecvResponse)) }},
		{"run stream reply", runReply, runStreamRespToProto(runReply),
			func(m proto.Message) (any, error) { return runStreamRespFromProto(m.(*pb.RunStreamResponse)) }},
	} {
		b, err := proto.Marshal(tc.msg)
		if err != nil {
			t.Fatal(err)
		}
		m := tc.msg.ProtoReflect().New().Interface()
		if err := proto.Unmarshal(b, m); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := tc.back(m)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("%s: %+v, want %+v", tc.name, got, tc.want)
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
			func(m proto.Message) (any, error) { return sendFromProto(m.(*pb.SendRequest)) }},
		{"Recv", func() proto.Message { return &pb.RecvRequest{} },
			func(m proto.Message) (any, error) { return recvFromProto(m.(*pb.RecvRequest)) }},
		{"RunStream", func() proto.Message { return &pb.RunStreamRequest{} },
			func(m proto.Message) (any, error) { return runStreamFromProto(m.(*pb.RunStreamRequest)) }},
		{"List", func() proto.Message { return &pb.ListRequest{} },
			func(m proto.Message) (any, error) { return m, CheckName("prefix", m.(*pb.ListRequest).GetPrefix()) }},
		{"Grant", func() proto.Message { return &pb.GrantRequest{} },
			func(m proto.Message) (any, error) { return m, CheckGrant(m.(*pb.GrantRequest)) }},
		{"CopyFrom", func() proto.Message { return &pb.CopyFromRequest{} },
			func(m proto.Message) (any, error) { return m, CheckCopyFrom(m.(*pb.CopyFromRequest)) }},
	}
}

// checkLimbs checks what decodeLimbs promises.
func checkLimbs(l [][]uint64) error {
	if len(l) == 0 {
		if l != nil {
			return errors.New("empty non-nil limbs")
		}
		return nil
	}
	n := len(l[0])
	if n < 1 || n > MaxLimbCoeffs || limbBytes(l) > MaxMessageBytes {
		return fmt.Errorf("%d limbs of %d coefficients", len(l), n)
	}
	for i := range l {
		if len(l[i]) != n {
			return fmt.Errorf("limb %d of %d coefficients, limb 0 of %d", i, len(l[i]), n)
		}
	}
	return nil
}

func checkBindingValid(b Binding) error {
	if b.Source < SourceInline || b.Source > SourceResident {
		return fmt.Errorf("source %d", b.Source)
	}
	if len(b.Name) > MaxNameBytes {
		return fmt.Errorf("stored name of %d bytes", len(b.Name))
	}
	return checkLimbs(b.Inline)
}

// checkValid checks that a converted request keeps the wire limits.
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
	case *SendRequest:
		if err := name(r.Program); err != nil {
			return err
		}
		if len(r.Inputs) > MaxBindings {
			return fmt.Errorf("%d inputs", len(r.Inputs))
		}
		for _, b := range r.Inputs {
			if err := checkBindingValid(b); err != nil {
				return err
			}
		}
		if r.HasKey {
			if err := checkBindingValid(r.Key); err != nil {
				return err
			}
		}
		if r.Output.Source != 0 {
			return fmt.Errorf("output with source %d", r.Output.Source)
		}
	case *RunStreamRequest:
		if err := name(r.Program); err != nil {
			return err
		}
		for _, v := range r.Inputs {
			if len(v.Instances) > MaxStreamInstances {
				return fmt.Errorf("%d instances", len(v.Instances))
			}
			for _, in := range v.Instances {
				if err := checkLimbs(in); err != nil {
					return err
				}
			}
		}
		for _, b := range r.Stored {
			if err := name(b.Prefix); err != nil {
				return err
			}
		}
	}
	return nil
}

// FuzzRequests feeds arbitrary bytes to proto.Unmarshal of every request
// message and what parses through the device's conversion: it never
// panics, refuses with ErrInvalid or yields a request within the wire
// limits, and a converted Put or Send encodes back to the same request.
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
			case *SendRequest:
				again, err = sendFromProto(sendToProto(q))
			case *RunStreamRequest:
				again, err = runStreamFromProto(runStreamToProto(q))
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
	m := &pb.RunStreamResponse{}
	for i := 0; i <= maxCoreUses; i++ {
		m.Cores = append(m.Cores, &pb.CoreUse{Stage: fmt.Sprint(i)})
	}
	if _, err := runStreamRespFromProto(m); !errors.Is(err, ErrInvalid) {
		t.Fatalf("%d stages: %v, want ErrInvalid", len(m.Cores), err)
	}
	m.Cores = m.Cores[:maxCoreUses]
	r, err := runStreamRespFromProto(m)
	if err != nil || len(r.Cores) != maxCoreUses || r.Cores[maxCoreUses-1].Stage != fmt.Sprint(maxCoreUses-1) {
		t.Fatalf("%d stages: %v, %v", maxCoreUses, r, err)
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
