// Package resident runs an engine.Executor's device operations on a
// device: Runner adapts any api.Device (in process or remote) to
// engine.ResidentDevice, so values stay on the device between operations
// and stored objects and keys are passed by reference. Each lowered
// operation is one job (Send, then Recv); its mProgram is set once per
// runner, named by its content hash.
package resident

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/engine"
)

// Runner runs lowered operations on a device. Safe for concurrent use.
type Runner struct {
	dev   api.Device
	async bool

	mu    sync.Mutex
	progs map[*isa.Program]string // programs already set, by identity
	named map[string]bool         // names (content hashes) already set
}

var _ engine.ResidentDevice = (*Runner)(nil)

// Option configures a Runner.
type Option func(*Runner)

// Async makes RunResident return as soon as the job is sent, without
// waiting for it (one RPC per operation instead of two): the device
// orders jobs by the results they read, and a failure surfaces when a
// dependent result is fetched. Its Stats are then zero (read the device's
// counters instead).
func Async() Option { return func(r *Runner) { r.async = true } }

// New returns a runner of dev.
func New(dev api.Device, opts ...Option) *Runner {
	r := &Runner{dev: dev, progs: map[*isa.Program]string{}, named: map[string]bool{}}
	for _, f := range opts {
		f(r)
	}
	return r
}

// bind turns an operand into a binding of obj.
func bind(obj lower.Object, op engine.Operand) (*devicepb.Binding, error) {
	b := &devicepb.Binding{Space: uint32(obj.Space), Id: uint32(obj.ID), Polys: uint32(obj.Polys), Limbs: uint32(obj.Limbs)}
	switch op.Ref.Kind {
	case engine.RefNone:
		b.Source = &devicepb.Binding_Inline{Inline: &devicepb.Inline{Data: api.EncodeLimbs(op.Limbs)}}
	case engine.RefJob:
		b.Source = &devicepb.Binding_ResidentJob{ResidentJob: op.Ref.Job}
	case engine.RefStored:
		if op.Ref.Name == "" || op.Ref.Poly < 0 {
			return nil, fmt.Errorf("device: bad stored reference %v", op.Ref)
		}
		b.Source = &devicepb.Binding_Stored{Stored: &devicepb.Stored{Name: op.Ref.Name, Poly: uint32(op.Ref.Poly)}}
	default:
		return nil, fmt.Errorf("device: unknown operand reference %v", op.Ref)
	}
	return b, nil
}

// jobOf is the job a resident reference names.
func jobOf(ref engine.Ref) (uint64, error) {
	if ref.Kind != engine.RefJob {
		return 0, fmt.Errorf("device: %v is not a resident value", ref)
	}
	return ref.Job, nil
}

// program sets p on the device once per runner and names it by its
// content hash.
func (r *Runner) program(ctx context.Context, p *isa.Program) (string, error) {
	r.mu.Lock()
	name, ok := r.progs[p]
	r.mu.Unlock()
	if ok {
		return name, nil
	}
	raw, err := p.MarshalBinary()
	if err != nil {
		return "", fmt.Errorf("device: encode program: %w", err)
	}
	sum := sha256.Sum256(raw)
	name = "p-" + hex.EncodeToString(sum[:12])
	r.mu.Lock()
	set := r.named[name]
	r.mu.Unlock()
	if !set {
		if _, err := r.dev.ProgSet(ctx, &devicepb.ProgSetRequest{Name: name, Program: raw}); err != nil {
			return "", err
		}
	}
	r.mu.Lock()
	r.progs[p], r.named[name] = name, true
	r.mu.Unlock()
	return name, nil
}

func (r *Runner) send(ctx context.Context, l *lower.Program, inputs []engine.Operand, key engine.Operand) (uint64, error) {
	if len(inputs) != len(l.Inputs) {
		return 0, fmt.Errorf("device: %d operands for %d inputs", len(inputs), len(l.Inputs))
	}
	name, err := r.program(ctx, l.Program)
	if err != nil {
		return 0, err
	}
	req := &devicepb.SendRequest{Program: name, Output: &devicepb.Object{Space: uint32(l.Output.Space), Id: uint32(l.Output.ID),
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
		req.Key = b
	}
	resp, err := r.dev.Send(ctx, req)
	if err != nil {
		return 0, err
	}
	return resp.Job, nil
}

func statsOf(r *devicepb.RecvResponse) engine.Stats {
	return engine.Stats{Instructions: int64(r.Instructions), MicroOps: int64(r.MicroOps)}
}

// RunLowered implements engine.DeviceRunner: the result comes back with
// the reply and is released on the device.
func (r *Runner) RunLowered(ctx context.Context, l *lower.Program, inputs []engine.Operand, key engine.Operand) ([][]uint64, engine.Stats, error) {
	id, err := r.send(ctx, l, inputs, key)
	if err != nil {
		return nil, engine.Stats{}, err
	}
	resp, err := r.dev.Recv(ctx, &devicepb.RecvRequest{Job: id, Fetch: true, Release: true})
	if err != nil {
		return nil, engine.Stats{}, err
	}
	data, err := api.DecodeLimbs("result", resp.GetData())
	return data, statsOf(resp), err
}

// RunResident implements engine.ResidentDevice: the result stays on the
// device.
func (r *Runner) RunResident(ctx context.Context, l *lower.Program, inputs []engine.Operand, key engine.Operand) (engine.Ref, engine.Stats, error) {
	id, err := r.send(ctx, l, inputs, key)
	if err != nil {
		return engine.Ref{}, engine.Stats{}, err
	}
	if r.async {
		return engine.JobRef(id), engine.Stats{}, nil
	}
	resp, err := r.dev.Recv(ctx, &devicepb.RecvRequest{Job: id})
	if err != nil {
		_, _ = r.dev.Release(ctx, &devicepb.ReleaseRequest{Jobs: []uint64{id}})
		return engine.Ref{}, engine.Stats{}, err
	}
	return engine.JobRef(id), statsOf(resp), nil
}

// Upload implements engine.ResidentDevice: a holding job keeps the limbs.
func (r *Runner) Upload(ctx context.Context, limbs [][]uint64, polys int) (engine.Ref, error) {
	if polys < 1 || len(limbs) == 0 || len(limbs)%polys != 0 {
		return engine.Ref{}, fmt.Errorf("device: upload of %d limbs in %d polys", len(limbs), polys)
	}
	resp, err := r.dev.Send(ctx, &devicepb.SendRequest{Inputs: []*devicepb.Binding{{Space: uint32(isa.SpaceDRAM), Polys: uint32(polys),
		Limbs: uint32(len(limbs) / polys), Source: &devicepb.Binding_Inline{Inline: &devicepb.Inline{Data: api.EncodeLimbs(limbs)}}}}})
	if err != nil {
		return engine.Ref{}, err
	}
	return engine.JobRef(resp.Job), nil
}

// Fetch implements engine.ResidentDevice.
func (r *Runner) Fetch(ctx context.Context, ref engine.Ref) ([][]uint64, error) {
	id, err := jobOf(ref)
	if err != nil {
		return nil, err
	}
	resp, err := r.dev.Recv(ctx, &devicepb.RecvRequest{Job: id, Fetch: true})
	if err != nil {
		return nil, err
	}
	return api.DecodeLimbs("result", resp.GetData())
}

// Free implements engine.ResidentDevice.
func (r *Runner) Free(ctx context.Context, refs ...engine.Ref) error {
	var jobs []uint64
	for _, ref := range refs {
		id, err := jobOf(ref)
		if err != nil {
			return err
		}
		jobs = append(jobs, id)
	}
	_, err := r.dev.Release(ctx, &devicepb.ReleaseRequest{Jobs: jobs})
	return err
}
