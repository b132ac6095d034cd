package device

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	pb "github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/guard"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
)

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type served struct {
	d    *Device
	addr string
	errc chan error
	stop context.CancelFunc
	logs *syncBuffer
}

// serveTCP runs Serve on a loopback TCP listener with JSON logs at Debug.
func serveTCP(t *testing.T, opts ...Option) *served {
	t.Helper()
	st, err := store.Open(t.TempDir(), layout.Layout{Channels: 4, PageSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	d, err := New(st, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{d: d, addr: lis.Addr().String(), errc: make(chan error, 1), stop: cancel, logs: logs}
	go func() { s.errc <- Serve(ctx, d, lis, append([]Option{WithLogger(log), WithPlaintext()}, opts...)...) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.errc:
		case <-time.After(time.Minute):
			t.Error("Serve did not return")
		}
	})
	return s
}

func (s *served) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-s.errc:
		s.errc <- err // for the cleanup
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after its context ended")
		return nil
	}
}

func dialT(t *testing.T, addr string) *testClient {
	t.Helper()
	c, err := remote.Dial(addr, remote.WithPlaintext())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return newTestClient(c)
}

// Serve on a real TCP listener: an RPC works, health reports SERVING and
// turns NOT_SERVING at shutdown, Serve returns nil once its context ends,
// and the address refuses connections afterwards.
func TestServeShutdown(t *testing.T) {
	s := serveTCP(t)
	c := dialT(t, s.addr)
	cfg, err := c.config(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.WireVersion != api.WireVersion || cfg.Channels != 4 || cfg.MaxMessageBytes != api.MaxMessageBytes {
		t.Fatalf("config %+v", cfg)
	}
	hc := healthpb.NewHealthClient(c.Conn())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, svc := range []string{"", api.ServiceName} {
		r, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || r.Status != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health of %q: %v %v, want SERVING", svc, r, err)
		}
	}
	watch, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{Service: api.ServiceName})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := watch.Recv(); err != nil || r.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("watch: %v %v", r, err)
	}

	s.stop()
	if r, err := watch.Recv(); err != nil || r.Status != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("watch during shutdown: %v %v, want NOT_SERVING", r, err)
	}
	cancel() // ends the watch, the one RPC still running
	if err := s.wait(t); err != nil {
		t.Fatalf("Serve after shutdown: %v", err)
	}
	if conn, err := net.DialTimeout("tcp", s.addr, 2*time.Second); err == nil {
		conn.Close()
		t.Fatal("dial after shutdown succeeded")
	}
	late := dialT(t, s.addr)
	if _, err := late.Config(context.Background(), &devicepb.ConfigRequest{}); code(err) != codes.Unavailable {
		t.Fatalf("RPC after shutdown: %v, want Unavailable", err)
	}
	logs := s.logs.String()
	for _, want := range []string{`"msg":"device serving"`, `"msg":"device stopping"`, `"msg":"device stopped"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %s:\n%s", want, logs)
		}
	}
}

// A running RPC finishes within the grace period; one that outlasts it is
// stopped, and Serve still returns nil.
func TestServeGrace(t *testing.T) {
	ctx := context.Background()
	for _, finish := range []bool{true, false} {
		began := make(chan string, 8)
		s := serveTCP(t, WithGrace(300*time.Millisecond), WithServerOptions(grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			began <- info.FullMethod
			return h(ctx, req)
		})))
		c := dialT(t, s.addr)
		j := &job{done: make(chan struct{}), polys: 1, result: [][]uint64{{1, 2}}, bytes: 16}
		dev, err := s.d.register(j)
		if err != nil {
			t.Fatal(err)
		}
		id, err := s.d.guarded.Adopt(guard.Plaintext, dev)
		if err != nil {
			t.Fatal(err)
		}
		recv := make(chan error, 1)
		go func() { _, err := c.recv(ctx, id, true, true); recv <- err }()
		if m := <-began; m != pb.Device_Recv_FullMethodName {
			t.Fatalf("first RPC %s", m)
		}
		s.stop()
		if finish {
			time.Sleep(50 * time.Millisecond)
			close(j.done)
		}
		if err := s.wait(t); err != nil {
			t.Fatalf("finish=%v: Serve: %v", finish, err)
		}
		err = <-recv
		if finish && err != nil {
			t.Fatalf("RPC finishing within the grace period: %v", err)
		}
		if !finish {
			if err == nil {
				t.Fatal("RPC outlasting the grace period succeeded")
			}
			if !strings.Contains(s.logs.String(), "grace period over") {
				t.Errorf("no log of the forced stop:\n%s", s.logs.String())
			}
		}
	}
}

// The server offers reflection and logs one Debug line per RPC and a Warn
// line naming the method and error of a failed one (a missing object, an
// answer rather than a fault, at Debug).
func TestReflectionAndLogs(t *testing.T) {
	s := serveTCP(t)
	c := dialT(t, s.addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rc, err := reflectionpb.NewServerReflectionClient(c.Conn()).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	r, err := rc.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, svc := range r.GetListServicesResponse().GetService() {
		names = append(names, svc.GetName())
	}
	if got := strings.Join(names, " "); !strings.Contains(got, api.ServiceName) || !strings.Contains(got, healthpb.Health_ServiceDesc.ServiceName) {
		t.Fatalf("reflection lists %q", got)
	}
	rc.CloseSend()
	if api.ServiceName != pb.Device_ServiceDesc.ServiceName {
		t.Fatalf("api.ServiceName %q, generated %q", api.ServiceName, pb.Device_ServiceDesc.ServiceName)
	}

	if _, err := c.stats(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.get(ctx, "missing"); code(err) != codes.NotFound {
		t.Fatalf("get of a missing object: %v", err)
	}
	if _, err := c.get(ctx, ""); code(err) != codes.InvalidArgument {
		t.Fatalf("get of an empty name: %v", err)
	}
	var debug, warn, missing bool
	for _, line := range strings.Split(strings.TrimSpace(s.logs.String()), "\n") {
		var e struct {
			Level, Msg, Method, Code, Error string
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		switch {
		case e.Level == "DEBUG" && e.Msg == "rpc" && e.Method == pb.Device_Stats_FullMethodName:
			debug = true
		case e.Level == "DEBUG" && e.Method == pb.Device_Get_FullMethodName && e.Code == "NotFound" && strings.Contains(e.Error, "missing"):
			missing = true
		case e.Level == "WARN" && e.Method == pb.Device_Get_FullMethodName && e.Code == "InvalidArgument":
			warn = true
		}
	}
	if !debug || !warn || !missing {
		t.Fatalf("debug line %v, warn line %v, not-found line %v in:\n%s", debug, warn, missing, s.logs.String())
	}
}

// Traffic counts the protobuf payloads a client sends and receives, and
// the device counts the same bytes the other way.
func TestTraffic(t *testing.T) {
	ctx := context.Background()
	c, _ := newDevice(t)
	st0, err := c.stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sent0, recv0 := c.Traffic()
	data := [][]uint64{make([]uint64, 1024), make([]uint64, 1024)}
	if _, err := c.put(ctx, "o", store.KindCiphertext, 1, 2, data); err != nil {
		t.Fatal(err)
	}
	sent1, recv1 := c.Traffic()
	if d := sent1 - sent0; d < 2*8*1024 || d > 2*8*1024+64 {
		t.Fatalf("Put of 16 KiB counted %d bytes sent", d)
	}
	if recv1 <= recv0 {
		t.Fatal("no reply bytes counted")
	}
	st1, err := c.stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The device counted the Put and the first Stats exchange; the second
	// Stats reply is sent after the counters are read.
	sent2, _ := c.Traffic()
	if in := int64(st1.WireBytesIn - st0.WireBytesIn); in != sent2-sent0 {
		t.Fatalf("device counted %d bytes in, client sent %d", in, sent2-sent0)
	}
}

// CopyFrom copies the objects under a prefix from another device, every
// word size, byte for byte; a second copy skips what is there.
func TestCopyFrom(t *testing.T) {
	ctx := context.Background()
	a, b := serveTCP(t), serveTCP(t)
	ca, cb := dialT(t, a.addr), dialT(t, b.addr)
	limbs := [][]uint64{{1, 2, 3, 65535}, {4, 5, 6, 7}}
	for _, ws := range []uint8{8, 2, 1} {
		data := limbs
		if ws == 1 {
			data = [][]uint64{{1, 2, 3, 255}, {4, 5, 6, 7}}
		}
		name := fmt.Sprintf("db/x/%d", ws)
		if _, err := ca.Put(ctx, mustPut(name, object.Kind(2), 2, 1, data, int(ws))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ca.Put(ctx, mustPut("other", object.Kind(2), 1, 1, [][]uint64{{1, 2, 3, 4}}, 8)); err != nil {
		t.Fatal(err)
	}
	r, err := cb.CopyFrom(ctx, &devicepb.CopyFromRequest{Source: a.addr, Prefix: "db/"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Objects != 3 {
		t.Fatalf("copied %d objects, want 3", r.Objects)
	}
	for _, ws := range []uint8{8, 2, 1} {
		name := fmt.Sprintf("db/x/%d", ws)
		ga, err := getObject(ctx, ca, name)
		if err != nil {
			t.Fatal(err)
		}
		gb, err := getObject(ctx, cb, name)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(ga.Kind, ga.Polys, ga.Limbs, ga.Data) != fmt.Sprint(gb.Kind, gb.Polys, gb.Limbs, gb.Data) ||
			ga.CRC32C == nil || gb.CRC32C == nil || *ga.CRC32C != *gb.CRC32C {
			t.Fatalf("%s differs after the copy: %+v vs %+v", name, ga, gb)
		}
	}
	if _, err := cb.Get(ctx, &devicepb.GetRequest{Name: "other"}); code(err) != codes.NotFound {
		t.Fatalf("an object outside the prefix was copied: %v", err)
	}
	if r, err := cb.CopyFrom(ctx, &devicepb.CopyFromRequest{Source: a.addr, Prefix: "db/"}); err != nil || r.Objects != 0 {
		t.Fatalf("second copy: %+v, %v (want nothing copied)", r, err)
	}
}

// A copy cut short is completed by the next one, member objects included:
// the manifest is copied last, so until the copy is whole the database is
// not held here and its member objects are not refused.
func TestCopyCutShortCompletes(t *testing.T) {
	ctx := context.Background()
	a, b := serveTCP(t), serveTCP(t)
	ca, cb := dialT(t, a.addr), dialT(t, b.addr)
	member := objname.Members("db") + "m/keys/k"
	objects := []string{objname.Manifest("db"), member, "db/x/0"}
	for _, name := range objects {
		if _, err := ca.Put(ctx, mustPut(name, object.Kind(2), 1, 1, [][]uint64{{1, 2, 3, 4}}, 8)); err != nil {
			t.Fatal(err)
		}
	}
	// The first copy stops at the member object (here with another shape).
	if _, err := cb.Put(ctx, mustPut(member, object.Kind(2), 1, 2, [][]uint64{{1, 2, 3, 4}, {5, 6, 7, 8}}, 8)); err != nil {
		t.Fatal(err)
	}
	if _, err := cb.CopyFrom(ctx, &devicepb.CopyFromRequest{Source: a.addr, Prefix: "db/"}); !errors.Is(err, api.ErrPermissionDenied) {
		t.Fatalf("copy over an object of another shape: %v, want PermissionDenied", err)
	}
	if _, err := cb.Get(ctx, &devicepb.GetRequest{Name: objname.Manifest("db")}); code(err) != codes.NotFound {
		t.Fatalf("the manifest of a copy cut short is here: %v", err)
	}
	if _, err := cb.Delete(ctx, &devicepb.DeleteRequest{Name: member}); err != nil {
		t.Fatal(err)
	}
	if _, err := cb.CopyFrom(ctx, &devicepb.CopyFromRequest{Source: a.addr, Prefix: "db/"}); err != nil {
		t.Fatalf("the copy again: %v", err)
	}
	for _, name := range objects {
		ga, err := getObject(ctx, ca, name)
		if err != nil {
			t.Fatal(err)
		}
		gb, err := getObject(ctx, cb, name)
		if err != nil || fmt.Sprint(ga.Data) != fmt.Sprint(gb.Data) {
			t.Fatalf("%s after the copies: %+v, %v; want %+v", name, gb, err, ga)
		}
	}
}
