package device

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	pb "github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/resident"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/internal/fhetest"
)

func newDevice(t *testing.T) (*testClient, *Device) {
	t.Helper()
	st, err := store.Open(t.TempDir(), layout.Layout{Channels: 4, PageSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	lim := DefaultLimits()
	lim.MaxResidentBytes = 8 << 20
	c, d, err := InProcess(st, lim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return newTestClient(c), d
}

func code(err error) codes.Code {
	var s interface{ GRPCStatus() *status.Status }
	if errors.As(err, &s) {
		return s.GRPCStatus().Code()
	}
	return codes.Unknown
}

// lowered returns an HAdd at level 1 of insecure-test (N = 2048, limbs of
// 2 moduli) and its modulus.
func lowered(t *testing.T) (*lower.Program, []uint64) {
	t.Helper()
	_, params := fhetest.CKKSParams(t, "insecure-test")
	l, err := lower.Op(ir.OpHAdd, &lower.Context{Scheme: fhe.CKKS, Ring: lower.RingOf(params.Parameters), Level: 1})
	if err != nil {
		t.Fatal(err)
	}
	return l, params.Q()[:2]
}

func limbsOf(q []uint64, polys int, seed uint64) [][]uint64 {
	var out [][]uint64
	for p := 0; p < polys; p++ {
		for _, m := range q {
			l := make([]uint64, 2048)
			for i := range l {
				seed = seed*6364136223846793005 + 1442695040888963407
				l[i] = (seed >> 11) % m
			}
			out = append(out, l)
		}
	}
	return out
}

// An HAdd with one operand uploaded, one stored on the device and the
// result kept resident equals the element-wise sum; the job reads the
// stored operand from the store.
func TestJobReadsStoreAndMatchesReference(t *testing.T) {
	ctx := context.Background()
	c, _ := newDevice(t)
	l, q := lowered(t)
	a, b := limbsOf(q, 2, 1), limbsOf(q, 2, 2)
	if _, err := c.put(ctx, "b", store.KindCiphertext, 2, 2, b); err != nil {
		t.Fatal(err)
	}
	ref, err := c.upload(a, 2)
	if err != nil {
		t.Fatal(err)
	}
	out, st, err := c.runResident(l, []engine.Operand{{Ref: ref}, {Ref: engine.StoredRef("b", 0)}}, engine.Operand{})
	if err != nil {
		t.Fatal(err)
	}
	if st.MicroOps == 0 {
		t.Fatal("no micro-ops counted")
	}
	got, err := c.fetch(out)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		m := q[i%2]
		for j := range got[i] {
			if want := (a[i][j] + b[i][j]) % m; got[i][j] != want {
				t.Fatalf("limb %d coefficient %d: %d, want %d", i, j, got[i][j], want)
			}
		}
	}
	stats, err := c.stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.StoreBytesRead != 4*2048*8 || stats.WireBytesIn == 0 || stats.WireBytesOut == 0 {
		t.Fatalf("stats %+v: want 4 limbs read from the store and wire bytes counted", stats)
	}
	if err := c.free(ref, out); err != nil {
		t.Fatal(err)
	}
	if _, err := c.fetch(out); code(err) != codes.NotFound {
		t.Fatalf("fetch after free: %v", err)
	}
	// Round trip of a stored object.
	g, err := c.get(ctx, "b")
	if err != nil || g.Polys != 2 || g.Limbs != 2 || g.Data[3][5] != b[3][5] {
		t.Fatalf("get: %v", err)
	}
}

func TestMalformedRejected(t *testing.T) {
	ctx := context.Background()
	c, d := newDevice(t)
	l, q := lowered(t)
	raw, err := l.Program.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]byte(nil), raw...)
	bad[len(bad)/2] ^= 0x40
	for name, prog := range map[string][]byte{"flipped byte": bad, "truncated": raw[:len(raw)-9], "empty": nil, "garbage": []byte("not a program")} {
		if err := c.progSet(ctx, "x", prog); code(err) != codes.InvalidArgument {
			t.Errorf("ProgSet %s: %v, want InvalidArgument", name, err)
		}
	}
	if err := c.progSet(ctx, "ok", raw); err != nil {
		t.Fatal(err)
	}
	other, _ := (&isa.Program{Config: l.Program.Config}).MarshalBinary()
	if err := c.progSet(ctx, "ok", other); code(err) != codes.InvalidArgument {
		t.Errorf("ProgSet over a taken name: %v", err)
	}
	// Objects.
	good := limbsOf(q, 2, 3)
	for name, put := range map[string]func() error{
		"limb count": func() error { _, err := c.put(ctx, "o", store.KindCiphertext, 2, 3, good); return err },
		"ragged limb": func() error {
			_, err := c.put(ctx, "o", store.KindCiphertext, 2, 2, append(good[:3:3], good[3][:100]))
			return err
		},
		"kind":       func() error { _, err := c.put(ctx, "o", 9, 2, 2, good); return err },
		"empty name": func() error { _, err := c.put(ctx, "", store.KindCiphertext, 2, 2, good); return err },
		"no limbs":   func() error { _, err := c.put(ctx, "o", store.KindCiphertext, 0, 0, nil); return err },
		"odd N": func() error {
			_, err := c.put(ctx, "o", store.KindCiphertext, 1, 1, [][]uint64{make([]uint64, 3)})
			return err
		},
		"missing get":  func() error { _, err := c.get(ctx, "nope"); return err },
		"missing del":  func() error { return c.del(ctx, "nope") },
		"unknown prog": func() error { _, err := c.Send(ctx, &devicepb.SendRequest{Program: "nope"}); return err },
	} {
		if err := put(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Jobs with bad bindings.
	a := limbsOf(q, 2, 4)
	mk := func(b *devicepb.Binding) *devicepb.SendRequest {
		return &devicepb.SendRequest{Program: "ok", Inputs: []*devicepb.Binding{dram(1, 2, 2).inline(a), b}, Output: dram(3, 2, 2).output()}
	}
	for name, b := range map[string]*devicepb.Binding{
		"missing stored":  dram(2, 2, 2).stored("nope"),
		"missing job":     dram(2, 2, 2).job(999),
		"short inline":    dram(2, 2, 2).inline(a[:3]),
		"duplicate":       dram(1, 2, 2).inline(a),
		"bad space":       testObject{9, 2, 2, 2}.inline(a),
		"too many limbs":  dram(2, 200, 200).inline(a),
		"wrong ring size": dram(2, 1, 1).inline([][]uint64{make([]uint64, 1024)}),
		"no source":       dram(2, 2, 2).binding(),
	} {
		if _, err := c.Send(ctx, mk(b)); err == nil {
			t.Errorf("Send with %s operand accepted", name)
		}
	}
	// A stored operand too short for the program.
	if _, err := c.put(ctx, "short", store.KindCiphertext, 1, 2, good[:2]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send(ctx, mk(dram(2, 2, 2).stored("short"))); code(err) != codes.InvalidArgument {
		t.Errorf("stored operand with too few polys: %v", err)
	}
	// Memory bound: uploads beyond MaxResidentBytes are refused.
	var refs []engine.Ref
	for {
		ref, err := c.upload(a, 2)
		if err != nil {
			if code(err) != codes.ResourceExhausted {
				t.Fatalf("upload past the limit: %v", err)
			}
			break
		}
		refs = append(refs, ref)
		if len(refs) > 1000 {
			t.Fatal("no memory bound")
		}
	}
	if err := c.free(refs...); err != nil {
		t.Fatal(err)
	}
	// ISP mode: a conventional write waits while a job runs, and lands
	// once the job has left.
	d.enterISP()
	done := make(chan error, 1)
	go func() {
		_, err := c.put(ctx, "during-job", store.KindCiphertext, 2, 2, good)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Put during a job returned at once: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	d.leaveISP()
	if err := <-done; err != nil {
		t.Errorf("Put after the job left: %v", err)
	}
	if _, err := c.put(ctx, "after-job", store.KindCiphertext, 2, 2, good); err != nil {
		t.Errorf("Put after the job: %v", err)
	}
}

// rawCodec sends a request's bytes as they are and ignores the reply.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.([]byte))}, nil
}
func (rawCodec) Unmarshal(mem.BufferSlice, any) error { return nil }
func (rawCodec) Name() string                         { return "proto" }

// rawCall invokes method with body as the encoded request.
func rawCall(c *testClient, method string, body []byte) error {
	var reply []byte
	return c.Conn().Invoke(context.Background(), "/"+api.ServiceName+"/"+method, body, &reply, grpc.ForceCodecV2(rawCodec{}))
}

func marshalPB(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Malformed RPC payloads get InvalidArgument naming the problem: bytes
// that are no protobuf message, and messages that break the wire limits.
func TestMalformedRPCPayloads(t *testing.T) {
	c, _ := newDevice(t)
	limb := make([]byte, 8*4)
	in := &pb.Binding{Space: uint32(isa.SpaceDRAM), Id: 1, Polys: 1, Limbs: 1, Source: &pb.Binding_Inline{Inline: &pb.Inline{Data: [][]byte{limb}}}}
	many := &pb.SendRequest{Program: "p", Output: &pb.Object{Space: uint32(isa.SpaceDRAM), Id: 2, Polys: 1, Limbs: 1}}
	for range api.MaxBindings + 1 {
		many.Inputs = append(many.Inputs, in)
	}
	for _, tc := range []struct {
		name, method string
		body         []byte
		want         string
	}{
		{"truncated put", "Put", []byte{0x0a, 5, 'a', 'b'}, "malformed request"},
		{"truncated varint", "Recv", []byte{0x08, 0x80}, "malformed request"},
		{"varint overflow", "Recv", append([]byte{0x08}, bytes.Repeat([]byte{0xff}, 11)...), "malformed request"},
		{"invalid UTF-8 name", "Get", []byte{0x0a, 1, 0xff}, "malformed request"},
		{"huge name", "Get", marshalPB(t, &pb.GetRequest{Name: strings.Repeat("a", api.MaxNameBytes+1)}), "name of 256 bytes"},
		{"kind beyond a byte", "Put", marshalPB(t, &pb.PutRequest{Name: "a", Kind: 256, Polys: 1, Limbs: 1, Data: [][]byte{limb}}), "kind 256"},
		{"limb length 0", "Put", marshalPB(t, &pb.PutRequest{Name: "a", Kind: 2, Polys: 1, Limbs: 1, Data: [][]byte{{}}}), "limbs of 0 words"},
		{"limb not whole words", "Put", marshalPB(t, &pb.PutRequest{Name: "a", Kind: 2, Polys: 1, Limbs: 1, Data: [][]byte{limb[:7]}}), "limb 0 has 7 bytes, not whole 8-byte words"},
		{"ragged limbs", "Put", marshalPB(t, &pb.PutRequest{Name: "a", Kind: 2, Polys: 1, Limbs: 2, Data: [][]byte{limb, limb[:8]}}), "limb 1 has 1 words, limb 0 has 4"},
		{"no operand source", "Send", marshalPB(t, &pb.SendRequest{Program: "p", Inputs: []*pb.Binding{{Space: 2, Id: 1, Polys: 1, Limbs: 1}}}), "no source"},
		{"too many inputs", "Send", marshalPB(t, many), "more than 16 inputs"},
		{"space beyond a byte", "Send", marshalPB(t, &pb.SendRequest{Program: "p", Inputs: []*pb.Binding{in}, Output: &pb.Object{Space: 300}}), "output space 300"},
		{"too many jobs", "Release", marshalPB(t, &pb.ReleaseRequest{Jobs: make([]uint64, api.MaxRelease+1)}), "more than 65536 jobs"},
	} {
		err := rawCall(c, tc.method, tc.body)
		if code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want InvalidArgument naming %q", tc.name, err, tc.want)
		}
	}
}

// A stored object with an unreduced coefficient, and a resident operand of
// the wrong shape, make the job fail with a clear error; with Async the
// failure surfaces when the result is fetched.
func TestBadOperandsFailJobs(t *testing.T) {
	ctx := context.Background()
	c, _ := newDevice(t)
	l, q := lowered(t)
	a := limbsOf(q, 2, 5)
	bad := limbsOf(q, 2, 6)
	bad[1][7] = q[1] // not reduced modulo q_1
	if _, err := c.put(ctx, "bad", store.KindCiphertext, 2, 2, bad); err != nil {
		t.Fatal(err)
	}
	_, _, err := c.runLowered(l, []engine.Operand{{Limbs: a}, {Ref: engine.StoredRef("bad", 0)}}, engine.Operand{})
	if err == nil || !strings.Contains(err.Error(), "not reduced") {
		t.Fatalf("unreduced stored coefficient: %v", err)
	}
	small, err := c.upload(a[:2], 1) // one poly where the program wants two
	if err != nil {
		t.Fatal(err)
	}
	c.run = resident.New(c.Client, resident.Async()) // a failure surfaces at the fetch
	ref, _, err := c.runResident(l, []engine.Operand{{Limbs: a}, {Ref: small}}, engine.Operand{})
	if err != nil {
		t.Fatalf("async send: %v", err)
	}
	if _, err := c.fetch(ref); err == nil || !strings.Contains(err.Error(), "holds 1 polys") {
		t.Fatalf("fetch of a job with a mis-shaped operand: %v", err)
	}
	if err := c.free(ref, small); err != nil {
		t.Fatal(err)
	}
}

// A released job that is still running keeps its bytes counted until it
// ends (it still holds its memory), and no longer after.
func TestReleasedRunningJobStaysCounted(t *testing.T) {
	_, d := newDevice(t)
	j := &job{done: make(chan struct{}), polys: 1, bytes: 1 << 20}
	id, err := d.register(j)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Release(context.Background(), &pb.ReleaseRequest{Jobs: []uint64{id}}); err != nil {
		t.Fatal(err)
	}
	resident := func() int64 {
		st, _ := d.Stats(context.Background(), &pb.StatsRequest{})
		return int64(st.ResidentBytes)
	}
	if got := resident(); got != 1<<20 {
		t.Fatalf("resident after releasing a running job: %d, want %d", got, 1<<20)
	}
	close(j.done)
	for i := 0; i < 1000 && resident() != 0; i++ {
		time.Sleep(time.Millisecond)
	}
	if got := resident(); got != 0 {
		t.Fatalf("resident after the released job ended: %d, want 0", got)
	}
}

// A device of a cluster copies only from registered devices: any other
// address is refused before it is dialled.
func TestCopyOnlyFromCheckedSources(t *testing.T) {
	c, d := newDevice(t)
	var asked []string
	d.CheckSourcesWith(func(_ context.Context, addr string) error {
		asked = append(asked, addr)
		return errors.New("not registered")
	})
	_, err := c.CopyFrom(context.Background(), &pb.CopyFromRequest{Source: "127.0.0.1:22", Prefix: "acct/"})
	if code(err) != codes.PermissionDenied || strings.Contains(err.Error(), "not registered") {
		t.Fatalf("copy from an unregistered source: %v, want PermissionDenied without the check's reason", err)
	}
	if len(asked) != 1 || asked[0] != "127.0.0.1:22" {
		t.Fatalf("the check was asked %v", asked)
	}
}
