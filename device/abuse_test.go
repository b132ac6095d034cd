package device

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	pb "github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// Security issue item 4: no identity can starve or bloat the daemon.

// emptyInstancesRequest is a RunStreamRequest with one node of k empty
// Instances: two wire bytes each, tens of heap bytes each once decoded.
func emptyInstancesRequest(k int) []byte {
	node := protowire.AppendTag(nil, 2, protowire.BytesType)
	node = protowire.AppendBytes(node, bytes.Repeat([]byte{0x12, 0x00}, k))
	return append(protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "p"), node...)
}

// Probe 1: 16 MB of empty Instances grew the daemon's heap by ~25× their
// size before the conversion counted them. They are refused with
// InvalidArgument before decoding: the call allocates less than 4× the
// message (the wire buffers; before, 400 MB).
func TestEmptyInstancesRefusedBeforeDecoding(t *testing.T) {
	c, _ := newDevice(t)
	body := emptyInstancesRequest(8 << 20)
	// A first call warms gRPC's buffers and connection.
	if err := rawCall(c, "RunStream", emptyInstancesRequest(4)); err == nil {
		t.Fatal("a run of an unset program succeeded")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := rawCall(c, "RunStream", body)
	runtime.ReadMemStats(&after)
	if code(err) != codes.InvalidArgument || !errors.Is(api.FromStatus(err), api.ErrInvalid) {
		t.Fatalf("RunStream of %d empty instances: %v, want InvalidArgument", 8<<20, err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4*uint64(len(body)) {
		t.Fatalf("refusing a %d-byte request allocated %d bytes (%.1f×)", len(body), grew, float64(grew)/float64(len(body)))
	}
}

// Probe 2: one identity filling the program tables locked every other
// out until a restart. Now bob's programs evict bob's own: alice sets and
// keeps hers.
func TestAnotherCallerCannotFillProgramTables(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	lim := DefaultLimits()
	lim.MaxPrograms, lim.MaxProgramsPerCaller = 16, 4
	addr, d := tlsDeviceWith(t, dir, true, lim)
	alice, bob := as(t, dir, "alice", addr), as(t, dir, "bob", addr)
	l, _ := lowered(t)
	prog, err := l.Program.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	stream := streamProgram(t)
	if _, err := alice.ProgSet(ctx, &devicepb.ProgSetRequest{Name: "mine", Program: prog}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.SetStream(ctx, &devicepb.SetStreamRequest{Name: "mine", Program: stream}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 * lim.MaxPrograms {
		name := fmt.Sprintf("p%d", i)
		if _, err := bob.ProgSet(ctx, &devicepb.ProgSetRequest{Name: name, Program: prog}); err != nil {
			t.Fatalf("bob's program %d: %v", i, err)
		}
		if _, err := bob.SetStream(ctx, &devicepb.SetStreamRequest{Name: name, Program: stream}); err != nil {
			t.Fatalf("bob's stream program %d: %v", i, err)
		}
	}
	if got := d.progs.usedBy("bob"); got != int64(lim.MaxProgramsPerCaller) {
		t.Fatalf("bob holds %d programs, his share is %d", got, lim.MaxProgramsPerCaller)
	}
	if got := d.streams.progs.usedBy("bob"); got != int64(lim.MaxProgramsPerCaller) {
		t.Fatalf("bob holds %d stream programs, his share is %d", got, lim.MaxProgramsPerCaller)
	}
	// Alice's programs are still set (a run of them gets past the lookup
	// to its bad operands), and she sets new ones.
	if _, err := alice.Send(ctx, &devicepb.SendRequest{Program: "mine", Inputs: []*devicepb.Binding{dram(0, 0, 0).inline([][]uint64{{1}})}}); err == nil || errors.Is(err, api.ErrNotFound) {
		t.Fatalf("alice's program after bob's flood: %v, want it found", err)
	}
	if _, err := alice.RunStream(ctx, &devicepb.RunStreamRequest{Program: "mine"}); err == nil || errors.Is(err, api.ErrNotFound) {
		t.Fatalf("alice's stream program after bob's flood: %v, want it found", err)
	}
	if _, err := alice.ProgSet(ctx, &devicepb.ProgSetRequest{Name: "next", Program: prog}); err != nil {
		t.Fatalf("alice's ProgSet after bob's flood: %v", err)
	}
	if _, err := alice.SetStream(ctx, &devicepb.SetStreamRequest{Name: "next", Program: stream}); err != nil {
		t.Fatalf("alice's SetStream after bob's flood: %v", err)
	}
}

// streamProgram is a small valid stream program.
func streamProgram(t *testing.T) []byte {
	t.Helper()
	ps, err := rns.NTTPrimesBelow(30, 11, 2)
	if err != nil {
		t.Fatal(err)
	}
	sp := &lower.StreamProgram{Scheme: fhe.CKKS, Ring: lower.Ring{LogN: 11, Q: ps[:1], P: ps[1:]}, Nodes: []lower.StreamNode{
		{Node: 7, Kind: lower.StreamInput, Name: "x", Count: 1, Polys: 2, Limbs: 1, Out: true}}}
	b, err := sp.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Probe 3: malformed requests from a caller the guard then refused were
// kept (with their half-decoded messages) in the codec's map for the
// daemon's life. The first interceptor takes every record: after such
// calls nothing is retained and no intake budget is held.
func TestRejectedCallerLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	if err := certs.Init(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"dev0", "alice"} {
		role := certs.RoleUser
		if name == "dev0" {
			role = certs.RoleDevice
		}
		if err := certs.Issue(dir, name, role, nil); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := certs.ServerConfig(certs.InDir(dir, "dev0"), false) // --client-cert-auth=false
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.TempDir(), layout.Layout{Channels: 2, PageSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	d, err := New(st, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	g := newGRPCServer(d, newOptions([]Option{WithTLS(cfg), WithLogger(quietLog())}))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go g.srv.Serve(lis)
	t.Cleanup(g.srv.Stop)
	noCert, err := certs.ClientConfig(certs.InDir(dir, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	noCert.Certificates = nil
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(credentials.NewTLS(noCert.Clone())),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	limb := make([]byte, 8<<20)
	putLimb := protowire.AppendBytes(protowire.AppendTag(nil, 5, protowire.BytesType), limb)
	for name, body := range map[string][]byte{
		"truncated":        putLimb[:len(putLimb)-1],                                              // Prescan refuses
		"bad UTF-8 name":   append(protowire.AppendBytes([]byte{0x0a}, []byte{0xff}), putLimb...), // proto.Unmarshal refuses
		"too many limbs":   bytes.Repeat(protowire.AppendBytes([]byte{0x2a}, make([]byte, 8)), api.MaxRequestLimbs+1),
		"well-formed, big": putLimb,
	} {
		var reply []byte
		err := cc.Invoke(context.Background(), "/"+api.ServiceName+"/Put", body, &reply, grpc.ForceCodecV2(rawCodec{}))
		if code(err) != codes.Unauthenticated {
			t.Errorf("%s without a certificate: %v, want Unauthenticated", name, err)
		}
	}
	if n := g.codec.pendingLen(); n != 0 {
		t.Fatalf("%d decode records retained for a refused caller", n)
	}
	if n := g.codec.intake.inUse(); n != 0 {
		t.Fatalf("%d intake bytes held after the calls ended", n)
	}
}

// Probe (by reading): a stored prefix without "/" named another
// database's objects ("acct" + "000000"). It is refused.
func TestPrefixWithoutSlashRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	addr := tlsDevice(t, dir, true)
	alice := as(t, dir, "alice", addr)
	for _, p := range []string{"acct", "acct2"} {
		_, err := alice.RunStream(ctx, &devicepb.RunStreamRequest{Program: "p", Stored: []*devicepb.StoredBinding{{Node: 1, Prefix: p, PerObject: 1}}})
		if code(err) != codes.InvalidArgument || !errors.Is(err, api.ErrInvalid) {
			t.Errorf("RunStream with stored prefix %q: %v, want InvalidArgument", p, err)
		}
	}
	_, err := alice.RunStream(ctx, &devicepb.RunStreamRequest{Program: "p", Stored: []*devicepb.StoredBinding{{Node: 1, Prefix: "acct/pt/", PerObject: 1}}})
	if !errors.Is(err, api.ErrNotFound) {
		t.Errorf("RunStream with a prefix of her own database: %v, want NotFound (no such program)", err)
	}
}

// The decoded stream keys are cached per caller within a share: one
// caller reading many keys evicts its own, never another's within its
// share, and the cache stays within its bytes.
func TestStreamKeyCachePerCaller(t *testing.T) {
	st, err := store.Open(t.TempDir(), layout.Layout{Channels: 2, PageSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	moduli := []uint64{(1 << 20) + 7}
	const n = 256
	keyBytes := int64(8 * n)
	lim := DefaultLimits()
	lim.StreamKeyBytes, lim.StreamKeyBytesPerCaller = 4*keyBytes, 2*keyBytes
	d, err := New(st, lim)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		raw := make([]byte, keyBytes)
		raw[0] = byte(i)
		if _, err := st.Put(fmt.Sprintf("k/%d", i), store.KindKey, store.Shape{Polys: 1, Limbs: 1, LogN: 8, WordSize: 8}, [][]byte{raw}); err != nil {
			t.Fatal(err)
		}
	}
	gen := func(name string) store.Generation {
		info, err := st.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		return info.Generation
	}
	k, err := d.streamKey("alice", "k/0", moduli)
	if err != nil || k[0][0] != 0 {
		t.Fatalf("alice's key: %v %v", k, err)
	}
	for i := range 6 {
		k, err := d.streamKey("mallory", fmt.Sprintf("k/%d", i), moduli)
		if err != nil || k[0][0] != uint64(i) {
			t.Fatalf("mallory's key %d: %v", i, err)
		}
	}
	if got := d.streams.keys.usedBy("mallory"); got != 2*keyBytes {
		t.Fatalf("mallory holds %d key bytes, her share is %d", got, 2*keyBytes)
	}
	if _, ok := d.streams.keys.get(keyEntry("alice", "k/0", gen("k/0"))); !ok {
		t.Fatal("mallory's keys evicted alice's")
	}
	if _, ok := d.streams.keys.get(keyEntry("mallory", "k/0", gen("k/0"))); ok {
		t.Fatal("mallory's least recently used key kept past her share")
	}
	// A key bigger than a caller's share is served, uncached.
	d.streams.keys = newCallerTable[[][]uint64]("key bytes", keyBytes/2, keyBytes)
	if k, err := d.streamKey("alice", "k/3", moduli); err != nil || k[0][0] != 3 || d.streams.keys.len() != 0 {
		t.Fatalf("an oversized key: %v (cached %d)", err, d.streams.keys.len())
	}
}

// The intake budget: requests past it wait, then are Busy; released
// bytes let a waiter in; small requests are never weighed.
func TestIntakeBudget(t *testing.T) {
	in := newIntake(IntakeLimits{Bytes: 100 * intakeFactor, Wait: 50 * time.Millisecond, Small: 1})
	a, err := in.acquire(80 * intakeFactor)
	if err != nil || a != 80*intakeFactor {
		t.Fatalf("first: %d %v", a, err)
	}
	if _, err := in.acquire(30 * intakeFactor); !errors.Is(err, api.ErrBusy) {
		t.Fatalf("past the budget: %v, want ErrBusy", err)
	}
	if s, err := in.acquire(intakeFactor); s != 0 || err != nil {
		t.Fatalf("a small request: %d %v", s, err)
	}
	in.lim.Wait = time.Minute
	got := make(chan error, 1)
	go func() {
		_, err := in.acquire(30 * intakeFactor)
		got <- err
	}()
	in.release(a)
	if err := <-got; err != nil {
		t.Fatalf("a waiter after a release: %v", err)
	}
	// Larger than the whole budget: it goes alone.
	in.release(30 * intakeFactor)
	if all, err := in.acquire(1000 * intakeFactor); err != nil || all != 100*intakeFactor {
		t.Fatalf("an oversized request: %d %v", all, err)
	}
}

// Every device call gets a server deadline, the waiting ones the long one.
func TestServerDeadlines(t *testing.T) {
	g := &grpcServer{codec: &deferCodec{intake: newIntake(IntakeLimits{})}, deadlines: Deadlines{Call: time.Hour, Long: 5 * time.Hour}}
	for method, want := range map[string]time.Duration{"Get": time.Hour, "Put": time.Hour, "RunStream": 5 * time.Hour, "Recv": 5 * time.Hour} {
		var dl time.Time
		start := time.Now()
		_, err := g.intakeUnary(context.Background(), &pb.GetRequest{}, &grpc.UnaryServerInfo{FullMethod: "/" + api.ServiceName + "/" + method},
			func(ctx context.Context, _ any) (any, error) {
				var ok bool
				if dl, ok = ctx.Deadline(); !ok {
					return nil, errors.New("no deadline")
				}
				return nil, nil
			})
		end := time.Now()
		// The deadline is want after some instant of the call.
		if err != nil || dl.Before(start.Add(want)) || dl.After(end.Add(want)) {
			t.Errorf("%s: deadline %v after the call began (%v), want %v", method, dl.Sub(start), err, want)
		}
	}
}

// One identity's uploads fill its share of device DRAM and jobs, not the
// device's: alice uploads after bob is refused, and bob's share is free
// again once he releases.
func TestAnotherCallerCannotFillDeviceMemory(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	lim := DefaultLimits()
	lim.MaxResidentBytes, lim.MaxJobs = 1<<20, 64
	addr, d := tlsDeviceWith(t, dir, true, lim)
	alice, bob := as(t, dir, "alice", addr), as(t, dir, "bob", addr)
	_, q := lowered(t)
	uploadTo := func(c api.Device) (uint64, error) {
		r, err := c.Send(ctx, upload(limbsOf(q, 2, 1), 2))
		if err != nil {
			return 0, err
		}
		return r.Job, nil
	}
	var bobs []uint64
	for {
		job, err := uploadTo(bob)
		if err != nil {
			if !errors.Is(err, api.ErrExhausted) {
				t.Fatalf("bob's upload %d: %v, want ErrExhausted", len(bobs), err)
			}
			break
		}
		bobs = append(bobs, job)
		if len(bobs) > lim.MaxJobs {
			t.Fatal("bob uploaded past the device's jobs")
		}
	}
	if len(bobs) == 0 || len(bobs) > lim.MaxJobs/4 {
		t.Fatalf("bob held %d jobs; his share is %d", len(bobs), lim.MaxJobs/4)
	}
	if _, err := uploadTo(alice); err != nil {
		t.Fatalf("alice's upload with bob's share full: %v", err)
	}
	if _, err := bob.Release(ctx, &devicepb.ReleaseRequest{Jobs: bobs}); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	_, held := d.usage["bob"]
	d.mu.Unlock()
	if held {
		t.Fatal("bob's share still charged after he released every job")
	}
	if _, err := uploadTo(bob); err != nil {
		t.Fatalf("bob's upload after releasing: %v", err)
	}
}
