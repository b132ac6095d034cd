package device

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/encoding"
	protocodec "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/authz"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/guard"
	"github.com/rosemary-fhe/rosemary/device/store"
)

// grpcMessageLimit bounds one gRPC message either way: MaxMessageBytes of
// payload plus room for the protobuf framing of its limbs.
const grpcMessageLimit = api.MaxMessageBytes + 1<<20

// Option configures NewGRPCServer and Serve.
type Option func(*options)

type options struct {
	bulkPerCaller int
	intake        IntakeLimits
	deadlines     Deadlines
	maxStreams    uint32
	log           *slog.Logger
	grace         time.Duration
	server        []grpc.ServerOption
	tls           *tls.Config
	plain         bool
}

// WithTLS serves over TLS with cfg (package certs makes it: TLS 1.3,
// client certificates required); callers are the identities their
// certificates name.
func WithTLS(cfg *tls.Config) Option { return func(o *options) { o.tls = cfg } }

// WithPlaintext serves without TLS: every caller is the one identity
// guard.Plaintext. Serve accepts it on loopback and in-memory listeners
// only.
func WithPlaintext() Option { return func(o *options) { o.plain = true } }

// ErrNoTransport is returned by Serve when neither WithTLS nor
// WithPlaintext was given.
var ErrNoTransport = errors.New("device: no transport security chosen (WithTLS, or WithPlaintext on loopback)")

// WithLogger sets the server's logger (default slog.Default()): one Debug
// line per RPC, a Warn line per failed RPC, start and stop at Info.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithGrace sets how long Serve lets running RPCs finish once its context
// ends before it stops them (default 30s; ≤ 0 stops them at once).
func WithGrace(d time.Duration) Option { return func(o *options) { o.grace = d } }

// WithServerOptions adds gRPC server options (interceptors chained after
// the device's own, say).
func WithServerOptions(opts ...grpc.ServerOption) Option {
	return func(o *options) { o.server = append(o.server, opts...) }
}

// Deadlines are the server's own deadlines for calls (≤ 0: none): Long
// for calls that wait for a run or a job or copy a database (RunStream,
// Recv, CopyFrom), Call for every other.
type Deadlines struct {
	Call, Long time.Duration
}

// DefaultDeadlines: two minutes for a call, fifteen for a run (past the
// default run timeout of ten).
var DefaultDeadlines = Deadlines{Call: 2 * time.Minute, Long: 15 * time.Minute}

// WithDeadlines sets the server's deadlines (default DefaultDeadlines).
func WithDeadlines(d Deadlines) Option { return func(o *options) { o.deadlines = d } }

// DefaultMaxStreams bounds the calls one connection has going at once.
const DefaultMaxStreams = 64

// WithMaxStreams sets how many calls one connection may have going at
// once (default DefaultMaxStreams).
func WithMaxStreams(n uint32) Option { return func(o *options) { o.maxStreams = n } }

// WithIntake sets the intake budget (default DefaultIntake).
func WithIntake(l IntakeLimits) Option { return func(o *options) { o.intake = l } }

func newOptions(opts []Option) options {
	o := options{log: slog.Default(), grace: 30 * time.Second, deadlines: DefaultDeadlines, maxStreams: DefaultMaxStreams,
		intake: DefaultIntake, bulkPerCaller: DefaultBulkCallsPerCaller}
	for _, f := range opts {
		f(&o)
	}
	if o.log == nil {
		o.log = slog.Default()
	}
	if o.maxStreams == 0 {
		o.maxStreams = DefaultMaxStreams
	}
	return o
}

// KeepaliveEnforcement lets clients ping as often as remote.Keepalive
// does (gRPC's default, one ping per 5 minutes, would close their
// connections as abusive).
var KeepaliveEnforcement = keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true}

// KeepaliveServer is how the device notices a client that stopped
// answering mid-call (its stream runs cancelled, their memory freed): a
// ping after 30 s of silence, the connection closed after 10 s more.
var KeepaliveServer = keepalive.ServerParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}

// errorKind is the sentinel of the error table (api.StatusOf) that err
// stands for, errors of the device's own packages included.
func errorKind(err error) error {
	// A full disk first: a write that ran out of space may also be
	// wrapped as an invalid request by the path that made it.
	if errors.Is(err, syscall.ENOSPC) {
		return api.ErrDiskFull
	}
	if s := api.Sentinel(err); s != nil {
		return s
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return api.ErrNotFound
	case errors.Is(err, authz.ErrReserved), errors.Is(err, authz.ErrNoName):
		return api.ErrInvalid
	case errors.Is(err, store.ErrCorrupt):
		return api.ErrChecksum
	case errors.Is(err, store.ErrISPMode):
		return api.ErrInUse
	}
	return nil
}

// toStatus maps a device error to a gRPC status from the one error table:
// its code and an ErrorInfo whose reason the client maps back to the same
// sentinel.
func toStatus(err error) error { return api.StatusOf(err, errorKind(err)).Err() }

// asStatus leaves a status error alone and maps any other.
func asStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(interface{ GRPCStatus() *status.Status }); ok {
		return err
	}
	return toStatus(err)
}

// deferCodec is the server's protobuf codec. Before it decodes a request
// it bounds it: the request type's size limit, api.Prescan's counts of
// its repeated fields (over the pieces gRPC received, not gathered), and
// a share of the intake budget (bytes in flight) — so no client-chosen
// count is materialised unchecked. gRPC
// reports a codec error as Internal; this codec records the failure
// instead, with the budget the request holds, and the first interceptor
// takes the record (every request the codec decoded reaches it, whatever
// the later interceptors decide), answering InvalidArgument or Busy.
type deferCodec struct {
	encoding.CodecV2
	intake  *intake
	pending sync.Map // message → decoded, until the first interceptor takes it
}

// decoded is what the codec left for the first interceptor of a request.
type decoded struct {
	err  error
	held int64 // intake bytes, released when the call ends
}

// intakeFactor is the memory one request byte costs while it is decoded
// and converted: the wire buffer, the decoded message, the request the
// device works on.
const intakeFactor = 3

func (c *deferCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return c.CodecV2.Unmarshal(data, v)
	}
	n := data.Len()
	if limit := api.RequestLimit(m); n > limit {
		c.pending.Store(v, decoded{err: fmt.Errorf("malformed request: %w: %d bytes exceed %d", api.ErrInvalid, n, limit)})
		return nil
	}
	// The counts first, over the pieces gRPC received: a refused request
	// is never gathered into one buffer, let alone decoded.
	pieces := make([][]byte, len(data))
	for i, buf := range data {
		pieces[i] = buf.ReadOnlyData()
	}
	if err := api.PrescanPieces(m, pieces); err != nil {
		c.pending.Store(v, decoded{err: fmt.Errorf("malformed request: %w", err)})
		return nil
	}
	held, err := c.intake.acquire(int64(n) * intakeFactor)
	if err != nil {
		c.pending.Store(v, decoded{err: err})
		return nil
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	b := buf.ReadOnlyData()
	if err := proto.Unmarshal(b, m); err != nil {
		c.pending.Store(v, decoded{err: fmt.Errorf("malformed request: %w: %w", api.ErrInvalid, err), held: held})
		return nil
	}
	if held > 0 {
		c.pending.Store(v, decoded{held: held})
	}
	return nil
}

// take returns and forgets what the codec recorded for m.
func (c *deferCodec) take(m any) decoded {
	if e, ok := c.pending.LoadAndDelete(m); ok {
		return e.(decoded)
	}
	return decoded{}
}

// pendingLen counts the records not yet taken (tests: none once calls end).
func (c *deferCodec) pendingLen() int {
	n := 0
	c.pending.Range(func(any, any) bool { n++; return true })
	return n
}

// grpcServer is a device's gRPC server with its health service.
type grpcServer struct {
	gate       *callGate
	deadlines  Deadlines
	srv        *grpc.Server
	health     *health.Server
	codec      *deferCodec
	log        *slog.Logger
	rpcSeconds *prometheus.HistogramVec
}

func methodName(full string) string {
	if i := strings.LastIndexByte(full, '/'); i >= 0 {
		return full[i+1:]
	}
	return full
}

func (g *grpcServer) logRPC(ctx context.Context, method string, start time.Time, err error) {
	took := time.Since(start)
	g.rpcSeconds.WithLabelValues(methodName(method), status.Code(err).String()).Observe(took.Seconds())
	attrs := []any{"method", method, "duration", took}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		attrs = append(attrs, "peer", p.Addr.String())
	}
	if err != nil {
		attrs = append(attrs, "code", status.Code(err).String(), "error", status.Convert(err).Message())
		// A missing object is an answer (clients probe for databases), not
		// a fault of the device.
		if status.Code(err) == codes.NotFound {
			g.log.Debug("rpc failed", attrs...)
			return
		}
		g.log.Warn("rpc failed", attrs...)
		return
	}
	g.log.Debug("rpc", attrs...)
}

type decodeErrKey struct{}

// deadline is the server's deadline for method: calls that wait for a run
// or a job, or copy a database, get the long one.
func (g *grpcServer) deadline(method string) time.Duration {
	switch methodName(method) {
	case "RunStream", "QueryLWE", "Recv", "CopyFrom":
		return g.deadlines.Long
	}
	return g.deadlines.Call
}

// intakeUnary is the first interceptor: it takes what the codec recorded
// for the request (so a call refused later, by authentication say, leaves
// nothing behind), holds the request's intake bytes until the call ends,
// and gives the call its server deadline.
func (g *grpcServer) intakeUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	dec := g.codec.take(req)
	defer g.codec.intake.release(dec.held)
	if dec.err != nil {
		ctx = context.WithValue(ctx, decodeErrKey{}, dec.err)
	}
	if d := g.deadline(info.FullMethod); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	return h(ctx, req)
}

// intakeStream gives a streaming call (of the reflection service: the
// device's calls are unary; the health service's watch is exempt) its
// server deadline.
func (g *grpcServer) intakeStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if d := g.deadlines.Call; d > 0 && !strings.HasPrefix(info.FullMethod, "/"+healthpb.Health_ServiceDesc.ServiceName+"/") {
		ctx, cancel := context.WithTimeout(ss.Context(), d)
		defer cancel()
		ss = &ctxStream{ServerStream: ss, ctx: ctx}
	}
	return h(srv, ss)
}

type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *ctxStream) Context() context.Context { return s.ctx }

func (g *grpcServer) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	start := time.Now()
	var resp any
	var err error
	if derr, ok := ctx.Value(decodeErrKey{}).(error); ok {
		err = toStatus(fmt.Errorf("device: %s: %w", methodName(info.FullMethod), derr))
	} else {
		resp, err = h(ctx, req)
		err = asStatus(err)
	}
	g.logRPC(ctx, info.FullMethod, start, err)
	return resp, err
}

// checkedStream reports a message that did not parse as InvalidArgument.
type checkedStream struct {
	grpc.ServerStream
	codec  *deferCodec
	method string
}

func (s *checkedStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	// Taken at once, whatever happened: a stream's messages are decoded
	// one by one as the handler asks, with nothing between.
	dec := s.codec.take(m)
	s.codec.intake.release(dec.held)
	if err != nil {
		return err
	}
	if dec.err != nil {
		return toStatus(fmt.Errorf("device: %s: %w", methodName(s.method), dec.err))
	}
	return nil
}

func (g *grpcServer) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	start := time.Now()
	err := asStatus(h(srv, &checkedStream{ServerStream: ss, codec: g.codec, method: info.FullMethod}))
	g.logRPC(ss.Context(), info.FullMethod, start, err)
	return err
}

func newGRPCServer(d *Device, o options) *grpcServer {
	if d.wire == nil {
		d.wire = &api.PayloadCounter{}
	}
	g := &grpcServer{codec: &deferCodec{CodecV2: encoding.GetCodecV2(protocodec.Name), intake: newIntake(o.intake)},
		health: health.NewServer(), log: o.log, rpcSeconds: d.rpcSeconds, deadlines: o.deadlines}
	mode := guard.MutualTLS
	opts := []grpc.ServerOption{grpc.ForceServerCodecV2(g.codec), grpc.StatsHandler(d.wire),
		grpc.MaxRecvMsgSize(grpcMessageLimit), grpc.MaxSendMsgSize(grpcMessageLimit),
		grpc.MaxConcurrentStreams(o.maxStreams),
		grpc.KeepaliveEnforcementPolicy(KeepaliveEnforcement), grpc.KeepaliveParams(KeepaliveServer)}
	if o.tls != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(o.tls)))
	} else {
		mode = guard.PlaintextLoopback
	}
	g.gate = newCallGate(mode, o.bulkPerCaller)
	opts = append(opts, grpc.InTapHandle(g.gate.tap))
	// The guard runs first: a panic anywhere below becomes Internal, and
	// every call but the health check carries its caller's identity.
	healthService := healthpb.Health_ServiceDesc.ServiceName
	// The intake interceptors run before even the guard: they release what
	// the codec recorded for a request whoever its caller turns out to be.
	opts = append(opts, grpc.ChainUnaryInterceptor(g.intakeUnary, guard.Unary(mode, o.log, healthService), g.unary),
		grpc.ChainStreamInterceptor(g.intakeStream, guard.Stream(mode, o.log, healthService), g.stream))
	g.srv = grpc.NewServer(append(opts, o.server...)...)
	devicepb.RegisterDeviceServer(g.srv, api.NewServer(d.guarded))
	healthpb.RegisterHealthServer(g.srv, g.health)
	reflection.Register(g.srv)
	// The device holds an open store from New on: it serves at once.
	g.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	g.health.SetServingStatus(api.ServiceName, healthpb.HealthCheckResponse_SERVING)
	return g
}

// NewGRPCServer returns a gRPC server exposing d: the device service, the
// standard health service (SERVING) and server reflection.
func NewGRPCServer(d *Device, opts ...Option) *grpc.Server {
	return newGRPCServer(d, newOptions(opts)).srv
}

// Serve runs the device service on lis until ctx ends, then shuts down
// gracefully: health turns NOT_SERVING, the listener closes, and running
// RPCs get the grace period (WithGrace) to finish before they are stopped.
// It returns nil after such a shutdown.
func Serve(ctx context.Context, d *Device, lis net.Listener, opts ...Option) error {
	o := newOptions(opts)
	switch {
	case o.tls == nil && !o.plain:
		return ErrNoTransport
	case o.tls == nil:
		if tcp, ok := lis.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
			return fmt.Errorf("device: serve on %s: %w", lis.Addr(), certs.ErrNotLoopback)
		}
		o.log.Warn("serving PLAINTEXT: no TLS, no client authentication; every caller is one identity (loopback only)",
			"addr", lis.Addr().String())
	}
	g := newGRPCServer(d, o)
	o.log.Info("device serving", "addr", lis.Addr().String(), "service", api.ServiceName)
	errc := make(chan error, 1)
	go func() { errc <- g.srv.Serve(lis) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		g.health.Shutdown()
		g.srv.Stop()
		o.log.Error("device server failed", "error", err)
		return fmt.Errorf("device: serve: %w", err)
	}
	o.log.Info("device stopping", "grace", o.grace)
	g.health.Shutdown()
	stopped := make(chan struct{})
	go func() {
		g.srv.GracefulStop()
		close(stopped)
	}()
	timer := time.NewTimer(max(o.grace, 0))
	defer timer.Stop()
	select {
	case <-stopped:
	case <-timer.C:
		o.log.Warn("grace period over: stopping running RPCs", "grace", o.grace)
		g.srv.Stop()
		<-stopped
	}
	<-errc
	o.log.Info("device stopped")
	return nil
}
