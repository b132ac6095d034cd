package device

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	pb "github.com/rosemary-fhe/rosemary/device/devicepb"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/engine"
)

// Client talks to a device over gRPC. It implements engine.ResidentDevice
// (operand references: "j:<job>" for resident values, StoredRef for stored
// objects) and counts the payload bytes it sends and receives. Safe for
// concurrent use.
type Client struct {
	conn    *grpc.ClientConn
	rpc     pb.DeviceClient
	traffic *wireStats
	// ctx is the context of the engine.DeviceRunner and
	// engine.ResidentDevice methods (RunLowered, RunResident, Upload, Fetch,
	// Free), whose engine interfaces take none; every other I/O method
	// takes its caller's context.
	ctx context.Context

	// Async makes RunResident return as soon as the job is sent, without
	// waiting for it (one RPC per operation instead of two): the device
	// orders jobs by the results they read, and a failure surfaces when a
	// dependent result is fetched. Its Stats are then zero (read the
	// device's counters instead).
	Async bool

	mu    sync.Mutex
	progs map[*isa.Program]string // programs already set, by identity
	named map[string]bool         // names (content hashes) already set
	close func() error
}

var _ engine.ResidentDevice = (*Client)(nil)

// Dial connects to a device at addr (host:port, plaintext loopback).
func Dial(addr string) (*Client, error) {
	return newClient(addr)
}

func newClient(target string, opts ...grpc.DialOption) (*Client, error) {
	c := &Client{traffic: &wireStats{}, ctx: context.Background(), progs: map[*isa.Program]string{}, named: map[string]bool{}}
	opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithStatsHandler(c.traffic),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(grpcMessageLimit), grpc.MaxCallSendMsgSize(grpcMessageLimit)))
	conn, err := grpc.NewClient(target, opts...)
	if err != nil {
		return nil, fmt.Errorf("device: dial %s: %w", target, err)
	}
	c.conn, c.rpc = conn, pb.NewDeviceClient(conn)
	c.close = conn.Close
	return c, nil
}

// InProcess starts a device over st behind a gRPC server on an in-memory
// listener and returns a client of it: the same code path as a daemon,
// without a socket. Close stops both.
func InProcess(st *store.Store, lim Limits) (*Client, *Device, error) {
	d, err := New(st, lim)
	if err != nil {
		return nil, nil, err
	}
	lis := bufconn.Listen(4 << 20)
	srv := NewGRPCServer(d)
	go func() { _ = srv.Serve(lis) }()
	c, err := newClient("passthrough:///bufconn", grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
		return lis.DialContext(ctx)
	}))
	if err != nil {
		srv.Stop()
		return nil, nil, err
	}
	conn := c.close
	c.close = func() error {
		err := conn()
		srv.Stop()
		return err
	}
	return c, d, nil
}

// Close closes the connection (and an in-process server).
func (c *Client) Close() error { return c.close() }

// Traffic returns the payload bytes this client sent and received: the
// protobuf-encoded size of every request and reply of the device service
// (gRPC's stats.OutPayload.Length and InPayload.Length), without gRPC's
// 5-byte message headers and HTTP/2 framing.
func (c *Client) Traffic() (sent, received int64) { return c.traffic.out.Load(), c.traffic.in.Load() }

// callCtx runs one RPC under ctx and converts its reply.
func callCtx[Q, P, R any](ctx context.Context, c *Client, method string, rpc func(context.Context, Q, ...grpc.CallOption) (P, error), req Q,
	conv func(P) (R, error)) (R, error) {
	var zero R
	resp, err := rpc(ctx, req)
	if err != nil {
		return zero, fmt.Errorf("device: %s: %w", method, err)
	}
	r, err := conv(resp)
	if err != nil {
		return zero, fmt.Errorf("device: %s: malformed reply: %w", method, err)
	}
	return r, nil
}

func ok[P any](P) (struct{}, error) { return struct{}{}, nil }

// Config returns the device's parameters.
func (c *Client) Config(ctx context.Context) (*ConfigResponse, error) {
	return callCtx(ctx, c, "Config", c.rpc.Config, &pb.ConfigRequest{},
		func(m *pb.ConfigResponse) (*ConfigResponse, error) { return configRespFromProto(m), nil })
}

// ProgSet registers an encoded mProgram.
func (c *Client) ProgSet(ctx context.Context, name string, program []byte) error {
	_, err := callCtx(ctx, c, "ProgSet", c.rpc.ProgSet, &pb.ProgSetRequest{Name: name, Program: program}, ok[*pb.ProgSetResponse])
	return err
}

// Put stores an object of polys × limbs limbs (poly-major).
func (c *Client) Put(ctx context.Context, name string, kind store.Kind, polys, limbs int, data [][]uint64) (*PutResponse, error) {
	req := putToProto(&PutRequest{Name: name, Kind: uint8(kind), Polys: uint32(polys), Limbs: uint32(limbs), Data: data})
	return callCtx(ctx, c, "Put", c.rpc.Put, req, func(m *pb.PutResponse) (*PutResponse, error) {
		return &PutResponse{Generation: m.GetGeneration(), Bytes: m.GetBytes()}, nil
	})
}

// Get reads a stored object.
func (c *Client) Get(ctx context.Context, name string) (*GetResponse, error) {
	return callCtx(ctx, c, "Get", c.rpc.Get, &pb.GetRequest{Name: name}, getRespFromProto)
}

// Delete deletes a stored object.
func (c *Client) Delete(ctx context.Context, name string) error {
	_, err := callCtx(ctx, c, "Delete", c.rpc.Delete, &pb.DeleteRequest{Name: name}, ok[*pb.DeleteResponse])
	return err
}

// Send starts a job.
func (c *Client) Send(ctx context.Context, req *SendRequest) (uint64, error) {
	return callCtx(ctx, c, "Send", c.rpc.Send, sendToProto(req), func(m *pb.SendResponse) (uint64, error) { return m.GetJob(), nil })
}

// Recv waits for a job.
func (c *Client) Recv(ctx context.Context, job uint64, fetch, release bool) (*RecvResponse, error) {
	return callCtx(ctx, c, "Recv", c.rpc.Recv, &pb.RecvRequest{Job: job, Fetch: fetch, Release: release}, recvRespFromProto)
}

// release drops jobs' results.
func (c *Client) release(ctx context.Context, jobs []uint64) error {
	_, err := callCtx(ctx, c, "Release", c.rpc.Release, &pb.ReleaseRequest{Jobs: jobs}, ok[*pb.ReleaseResponse])
	return err
}

// Stats returns the device counters.
func (c *Client) Stats(ctx context.Context) (*StatsResponse, error) {
	return callCtx(ctx, c, "Stats", c.rpc.Stats, &pb.StatsRequest{},
		func(m *pb.StatsResponse) (*StatsResponse, error) { return statsRespFromProto(m), nil })
}

// StoredRef is the operand reference of a stored object instance: the
// object name and the first poly of the instance within it.
func StoredRef(name string, poly int) string { return "s:" + strconv.Itoa(poly) + ":" + name }

func jobRef(id uint64) string { return "j:" + strconv.FormatUint(id, 10) }

func parseJobRef(ref string) (uint64, error) {
	s, ok := strings.CutPrefix(ref, "j:")
	if !ok {
		return 0, fmt.Errorf("device: %q is not a resident value", ref)
	}
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("device: bad job reference %q", ref)
	}
	return id, nil
}

// bind turns an operand into a binding of obj.
func bind(obj lower.Object, op engine.Operand) (Binding, error) {
	b := Binding{Space: uint8(obj.Space), ID: uint32(obj.ID), Polys: uint32(obj.Polys), Limbs: uint32(obj.Limbs)}
	switch {
	case op.Ref == "":
		b.Source, b.Inline = SourceInline, op.Limbs
	case strings.HasPrefix(op.Ref, "j:"):
		id, err := parseJobRef(op.Ref)
		if err != nil {
			return b, err
		}
		b.Source, b.Job = SourceResident, id
	case strings.HasPrefix(op.Ref, "s:"):
		polyS, name, ok := strings.Cut(op.Ref[2:], ":")
		poly, err := strconv.ParseUint(polyS, 10, 32)
		if !ok || err != nil || name == "" {
			return b, fmt.Errorf("device: bad stored reference %q", op.Ref)
		}
		b.Source, b.Name, b.Poly = SourceStored, name, uint32(poly)
	default:
		return b, fmt.Errorf("device: unknown operand reference %q", op.Ref)
	}
	return b, nil
}

// program sets l's program on the device once per client and names it by
// its content hash.
func (c *Client) program(ctx context.Context, p *isa.Program) (string, error) {
	c.mu.Lock()
	name, ok := c.progs[p]
	c.mu.Unlock()
	if ok {
		return name, nil
	}
	raw, err := p.MarshalBinary()
	if err != nil {
		return "", fmt.Errorf("device: encode program: %w", err)
	}
	sum := sha256.Sum256(raw)
	name = "p-" + hex.EncodeToString(sum[:12])
	c.mu.Lock()
	set := c.named[name]
	c.mu.Unlock()
	if !set {
		if err := c.ProgSet(ctx, name, raw); err != nil {
			return "", err
		}
	}
	c.mu.Lock()
	c.progs[p], c.named[name] = name, true
	c.mu.Unlock()
	return name, nil
}

func (c *Client) send(ctx context.Context, l *lower.Program, inputs []engine.Operand, key engine.Operand) (uint64, error) {
	if len(inputs) != len(l.Inputs) {
		return 0, fmt.Errorf("device: %d operands for %d inputs", len(inputs), len(l.Inputs))
	}
	name, err := c.program(ctx, l.Program)
	if err != nil {
		return 0, err
	}
	req := &SendRequest{Program: name, Output: Binding{Space: uint8(l.Output.Space), ID: uint32(l.Output.ID),
		Polys: uint32(l.Output.Polys), Limbs: uint32(l.Output.Limbs)}}
	for i, obj := range l.Inputs {
		b, err := bind(obj, inputs[i])
		if err != nil {
			return 0, err
		}
		req.Inputs = append(req.Inputs, b)
	}
	if len(l.Keys) > 0 {
		b, err := bind(l.Keys[0], key)
		if err != nil {
			return 0, err
		}
		req.HasKey, req.Key = true, b
	}
	return c.Send(ctx, req)
}

func statsOf(r *RecvResponse) engine.Stats {
	return engine.Stats{Instructions: int64(r.Instructions), MicroOps: int64(r.MicroOps)}
}

// RunLowered implements engine.DeviceRunner: the result comes back with
// the reply and is released on the device. Like the other engine methods
// below (whose interfaces take no context), it runs under the client's
// default context, context.Background().
func (c *Client) RunLowered(l *lower.Program, inputs []engine.Operand, key engine.Operand) ([][]uint64, engine.Stats, error) {
	id, err := c.send(c.ctx, l, inputs, key)
	if err != nil {
		return nil, engine.Stats{}, err
	}
	r, err := c.Recv(c.ctx, id, true, true)
	if err != nil {
		return nil, engine.Stats{}, err
	}
	return r.Data, statsOf(r), nil
}

// RunResident implements engine.ResidentDevice: the result stays on the
// device.
func (c *Client) RunResident(l *lower.Program, inputs []engine.Operand, key engine.Operand) (string, engine.Stats, error) {
	id, err := c.send(c.ctx, l, inputs, key)
	if err != nil {
		return "", engine.Stats{}, err
	}
	if c.Async {
		return jobRef(id), engine.Stats{}, nil
	}
	r, err := c.Recv(c.ctx, id, false, false)
	if err != nil {
		_ = c.release(c.ctx, []uint64{id})
		return "", engine.Stats{}, err
	}
	return jobRef(id), statsOf(r), nil
}

// Upload implements engine.ResidentDevice.
func (c *Client) Upload(limbs [][]uint64, polys int) (string, error) {
	if polys < 1 || len(limbs) == 0 || len(limbs)%polys != 0 {
		return "", fmt.Errorf("device: upload of %d limbs in %d polys", len(limbs), polys)
	}
	id, err := c.Send(c.ctx, &SendRequest{Inputs: []Binding{{Space: uint8(isa.SpaceDRAM), Polys: uint32(polys),
		Limbs: uint32(len(limbs) / polys), Source: SourceInline, Inline: limbs}}})
	if err != nil {
		return "", err
	}
	return jobRef(id), nil
}

// Fetch implements engine.ResidentDevice.
func (c *Client) Fetch(ref string) ([][]uint64, error) {
	id, err := parseJobRef(ref)
	if err != nil {
		return nil, err
	}
	r, err := c.Recv(c.ctx, id, true, false)
	if err != nil {
		return nil, err
	}
	return r.Data, nil
}

// Free implements engine.ResidentDevice.
func (c *Client) Free(refs ...string) error {
	var jobs []uint64
	for _, ref := range refs {
		id, err := parseJobRef(ref)
		if err != nil {
			return err
		}
		jobs = append(jobs, id)
	}
	return c.release(c.ctx, jobs)
}
