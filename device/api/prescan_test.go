package api

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// emptyInstances is a RunStreamRequest of one node with k empty
// Instances: two wire bytes each.
func emptyInstances(k int) []byte {
	inner := bytes.Repeat([]byte{0x12, 0x00}, k) // field 2 (instances), length 0
	node := protowire.AppendTag(nil, 2, protowire.BytesType)
	node = protowire.AppendBytes(node, inner)
	return append(protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "p"), node...)
}

func TestPrescanAcceptsValidRequests(t *testing.T) {
	for _, m := range seeds() {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := Prescan(m, b); err != nil {
			t.Errorf("%T refused: %v", m, err)
		}
	}
	// The limits themselves pass: MaxStreamInstances instances of one
	// node, MaxRelease jobs packed.
	jobs := make([]uint64, MaxRelease)
	for i := range jobs {
		jobs[i] = 1<<63 + uint64(i)
	}
	for _, m := range []proto.Message{
		&pb.RunStreamRequest{Inputs: []*pb.StreamValues{{Instances: instances(MaxStreamInstances)}}},
		&pb.ReleaseRequest{Jobs: jobs},
	} {
		b, _ := proto.Marshal(m)
		if err := Prescan(m, b); err != nil {
			t.Errorf("%T at the limit refused: %v", m, err)
		}
	}
}

func instances(k int) []*pb.Instance {
	out := make([]*pb.Instance, k)
	limb := make([]byte, 8)
	for i := range out {
		out[i] = &pb.Instance{Data: [][]byte{limb}}
	}
	return out
}

func TestPrescanRefuses(t *testing.T) {
	unpacked := func(k int) []byte { // Release jobs as single varints
		var b []byte
		for range k {
			b = protowire.AppendVarint(protowire.AppendTag(b, 1, protowire.VarintType), 1)
		}
		return b
	}
	limbs := func(size, k int) []byte { // Put limbs of size bytes
		var b []byte
		for range k {
			b = protowire.AppendBytes(protowire.AppendTag(b, 5, protowire.BytesType), make([]byte, size))
		}
		return b
	}
	many := func(m proto.Message, k int) []byte {
		var b []byte
		for range k {
			b, _ = proto.MarshalOptions{}.MarshalAppend(b, m)
		}
		return b
	}
	twoNodes, _ := proto.Marshal(&pb.RunStreamRequest{Inputs: []*pb.StreamValues{
		{Instances: instances(MaxStreamInstances)}, {Instances: instances(MaxStreamInstances)}, {Instances: instances(1)}}})
	for _, tc := range []struct {
		name string
		m    proto.Message
		b    []byte
		want string
	}{
		{"empty instances", &pb.RunStreamRequest{}, emptyInstances(MaxStreamInstances + 1), "instances of one node"},
		{"instances over all nodes", &pb.RunStreamRequest{}, twoNodes, "instances"},
		{"keys", &pb.RunStreamRequest{}, many(&pb.RunStreamRequest{Keys: []*pb.KeyBinding{{}}}, MaxStreamBindings+1), "key bindings"},
		{"unpacked jobs", &pb.ReleaseRequest{}, unpacked(MaxRelease + 1), "jobs"},
		{"long object limb", &pb.PutRequest{}, limbs(8*MaxLimbCoeffs+1, 1), "limb of 1048577 bytes"},
		{"empty limb", &pb.SendRequest{}, mustMarshal(t, &pb.SendRequest{Key: &pb.Binding{Source: &pb.Binding_Inline{Inline: &pb.Inline{Data: [][]byte{{}}}}}}), "limb of 0 bytes"},
		{"limbs", &pb.PutRequest{}, limbs(8, MaxRequestLimbs+1), "limbs"},
		{"send bindings", &pb.SendRequest{}, many(&pb.SendRequest{Inputs: []*pb.Binding{{}}}, MaxBindings+1), "more than 16 inputs"},
		{"inline limb", &pb.SendRequest{}, mustMarshal(t, &pb.SendRequest{Key: &pb.Binding{Source: &pb.Binding_Inline{Inline: &pb.Inline{Data: [][]byte{{1}}}}}}), "limb of 1 bytes"},
		{"large get", &pb.GetRequest{}, protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), strings.Repeat("x", smallRequestBytes)), "exceeds"},
		{"truncated", &pb.RunStreamRequest{}, emptyInstances(3)[:8], "malformed"},
		{"bad tag", &pb.PutRequest{}, []byte{0x00}, "malformed"},
	} {
		err := Prescan(tc.m, tc.b)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrInvalid naming %q", tc.name, err, tc.want)
		}
	}
}

func mustMarshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The bytes in pieces of every size are judged as the whole: every seed
// cut at every position, and in pieces of one byte.
func TestPrescanPieces(t *testing.T) {
	inputs := [][]byte{emptyInstances(5), emptyInstances(3)[:8], {0x0b, 0x10, 0x01, 0x0c}}
	for _, m := range seeds() {
		inputs = append(inputs, mustMarshal(t, m))
	}
	for _, data := range inputs {
		for _, r := range requests() {
			m := r.new()
			want := fmt.Sprint(Prescan(m, data))
			ones := make([][]byte, len(data))
			for i := range data {
				ones[i] = data[i : i+1]
			}
			if got := fmt.Sprint(PrescanPieces(m, ones)); got != want {
				t.Fatalf("%s in bytes: %s, whole %s", r.name, got, want)
			}
			for cut := range len(data) + 1 {
				if got := fmt.Sprint(PrescanPieces(m, [][]byte{data[:cut], data[cut:]})); got != want {
					t.Fatalf("%s cut at %d: %s, whole %s", r.name, cut, got, want)
				}
			}
		}
	}
}

// Prescan reads, never allocates per element: refusing 32 MB of empty
// Instances allocates nothing.
func TestPrescanAllocatesNothing(t *testing.T) {
	b := emptyInstances(16 << 20)
	m := &pb.RunStreamRequest{}
	if n := testing.AllocsPerRun(3, func() { _ = Prescan(m, b) }); n > 8 {
		t.Fatalf("%v allocations refusing %d bytes", n, len(b))
	}
}

// elements counts what a decoded request holds, as Prescan bounds it.
func elements(m proto.Message) (limbs, instances int64, badLimb bool) {
	limb := func(ds [][]byte) {
		for _, d := range ds {
			limbs++
			if len(d) == 0 || len(d)%8 != 0 || len(d)/8 > MaxLimbCoeffs {
				badLimb = true
			}
		}
	}
	switch m := m.(type) {
	case *pb.PutRequest:
		// An object's limbs are in its word size, trailing zeros left out
		// (their decoding bounds what they expand to).
		for _, d := range m.GetData() {
			limbs++
			if len(d) > 8*MaxLimbCoeffs {
				badLimb = true
			}
		}
	case *pb.SendRequest:
		for _, in := range append(m.GetInputs(), m.GetKey()) {
			limb(in.GetInline().GetData())
		}
	case *pb.RunStreamRequest:
		for _, v := range m.GetInputs() {
			for _, in := range v.GetInstances() {
				instances++
				limb(in.GetData())
			}
		}
	}
	return
}

// FuzzPrescan: Prescan never panics, refuses only with ErrInvalid, and
// what it accepts and proto.Unmarshal decodes is within its limits.
func FuzzPrescan(f *testing.F) {
	for _, m := range seeds() {
		f.Add(mustMarshalF(f, m))
	}
	f.Add(emptyInstances(4))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, r := range requests() {
			m := r.new()
			err := Prescan(m, data)
			// The same bytes in pieces (as gRPC holds them, an empty one
			// among them) are judged alike.
			cut := 0
			if len(data) > 0 {
				cut = int(data[0]) % (len(data) + 1)
			}
			perr := PrescanPieces(m, [][]byte{data[:cut/2], {}, data[cut/2 : cut], data[cut:]})
			if (err == nil) != (perr == nil) || (err != nil && err.Error() != perr.Error()) {
				t.Fatalf("%s: whole %v, in pieces %v", r.name, err, perr)
			}
			if err != nil {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("%s refused without ErrInvalid: %v", r.name, err)
				}
				continue
			}
			if proto.Unmarshal(data, m) != nil {
				continue
			}
			limbs, inst, bad := elements(m)
			if limbs > MaxRequestLimbs || inst > MaxRequestInstances || bad {
				t.Fatalf("%s accepted %d limbs, %d instances (bad limb: %v)", r.name, limbs, inst, bad)
			}
			if rs, ok := m.(*pb.RunStreamRequest); ok {
				for _, v := range rs.GetInputs() {
					if len(v.GetInstances()) > MaxStreamInstances {
						t.Fatalf("a node of %d instances accepted", len(v.GetInstances()))
					}
				}
				if len(rs.GetKeys()) > MaxStreamBindings || len(rs.GetStored()) > MaxStreamBindings {
					t.Fatalf("%d keys, %d stored bindings accepted", len(rs.GetKeys()), len(rs.GetStored()))
				}
			}
			if rel, ok := m.(*pb.ReleaseRequest); ok && len(rel.GetJobs()) > MaxRelease {
				t.Fatalf("%d jobs accepted", len(rel.GetJobs()))
			}
		}
	})
}

func mustMarshalF(f *testing.F, m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// TestWritePrescanCorpus (re)writes the seed corpus of FuzzPrescan under
// testdata/fuzz when ROSEMARY_WRITE_CORPUS is set.
func TestWritePrescanCorpus(t *testing.T) {
	if os.Getenv("ROSEMARY_WRITE_CORPUS") == "" {
		t.Skip("set ROSEMARY_WRITE_CORPUS=1 to rewrite the seed corpus")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzPrescan")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, m := range seeds() {
		write(fmt.Sprintf("seed%02d", i), mustMarshal(t, m))
	}
	write("emptyinstances", emptyInstances(8))
	write("packedjobs", mustMarshal(t, &pb.ReleaseRequest{Jobs: []uint64{1, 1 << 40, 3}}))
	write("emptylimb", []byte{0x2a, 0x00})
	write("truncated", emptyInstances(3)[:8])
	write("unknowngroup", []byte{0x0b, 0x10, 0x01, 0x0c})
}
