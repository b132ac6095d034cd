package authz

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/guard"
	"github.com/rosemary-fhe/rosemary/device/objname"
)

// Guarded is a Device that asks an Authorizer before every call, on
// behalf of the identity in the call's context (package guard puts it
// there). It also keeps callers apart where the device itself does not:
// program names live in one namespace per caller, and jobs get random
// ids that only their caller can use (another caller's id is NotFound,
// as an id that never existed).
type Guarded struct {
	next api.Device
	a    *Authorizer

	mu   sync.Mutex
	jobs map[uint64]job // public id → the device's id and the owner
}

type job struct {
	id    uint64
	owner string
}

var _ api.Device = (*Guarded)(nil)

// Guard returns next behind a.
func Guard(next api.Device, a *Authorizer) *Guarded {
	return &Guarded{next: next, a: a, jobs: map[uint64]job{}}
}

func caller(ctx context.Context) (certs.Identity, error) {
	id, ok := guard.IdentityFrom(ctx)
	if !ok {
		return certs.Identity{}, api.ErrUnauthenticated
	}
	return id, nil
}

// programName places a program name in the caller's namespace.
func programName(id certs.Identity, name string) string {
	if name == "" {
		return "" // a holding job runs no program
	}
	sum := sha256.Sum256([]byte(id.Name))
	return "u" + hex.EncodeToString(sum[:8]) + "." + name
}

func (g *Guarded) Config(ctx context.Context, req *devicepb.ConfigRequest) (*devicepb.ConfigResponse, error) {
	id, err := g.call(ctx, "Config", req)
	if err != nil {
		return nil, err
	}
	resp, err := g.next.Config(ctx, req)
	if err != nil {
		return nil, err
	}
	resp.Caller = id.Name // a reply the device made for this call
	return resp, nil
}

// Grant lets an owner give or take a role on its database.
func (g *Guarded) Grant(ctx context.Context, req *devicepb.GrantRequest) (*devicepb.GrantResponse, error) {
	id, err := g.call(ctx, "Grant", req)
	if err != nil {
		return nil, err
	}
	if err := api.CheckGrant(req); err != nil {
		return nil, err
	}
	if err := g.a.Grant(id, req.Database, req.Identity, req.Role); err != nil {
		return nil, err
	}
	return &devicepb.GrantResponse{}, nil
}

func (g *Guarded) Stats(ctx context.Context, req *devicepb.StatsRequest) (*devicepb.StatsResponse, error) {
	if _, err := g.call(ctx, "Stats", req); err != nil {
		return nil, err
	}
	return g.next.Stats(ctx, req)
}

func (g *Guarded) ProgSet(ctx context.Context, req *devicepb.ProgSetRequest) (*devicepb.ProgSetResponse, error) {
	id, err := g.call(ctx, "ProgSet", req)
	if err != nil {
		return nil, err
	}
	return g.next.ProgSet(ctx, &devicepb.ProgSetRequest{Name: programName(id, req.GetName()), Program: req.GetProgram()})
}

func (g *Guarded) SetStream(ctx context.Context, req *devicepb.SetStreamRequest) (*devicepb.SetStreamResponse, error) {
	id, err := g.call(ctx, "SetStream", req)
	if err != nil {
		return nil, err
	}
	return g.next.SetStream(ctx, &devicepb.SetStreamRequest{Name: programName(id, req.GetName()), Program: req.GetProgram()})
}

func (g *Guarded) Put(ctx context.Context, req *devicepb.PutRequest) (*devicepb.PutResponse, error) {
	if _, err := g.call(ctx, "Put", req); err != nil {
		return nil, err
	}
	return g.next.Put(ctx, req)
}

func (g *Guarded) Delete(ctx context.Context, req *devicepb.DeleteRequest) (*devicepb.DeleteResponse, error) {
	if _, err := g.call(ctx, "Delete", req); err != nil {
		return nil, err
	}
	return g.next.Delete(ctx, req)
}

// Get: a database's readers may read its manifest (its shape, generation
// and sealing salt, tagged; no record) and its delta (the sealed changes
// since its current generation, which every query reads whole after the
// manifest) whole (getNeeds).
func (g *Guarded) Get(ctx context.Context, req *devicepb.GetRequest) (*devicepb.GetResponse, error) {
	if strings.HasPrefix(req.Name, objname.ACL("")) {
		// A device copying a database brings its access list along.
		id, err := caller(ctx)
		if err != nil {
			return nil, err
		}
		// (Without TLS every caller is one identity: nothing to separate.)
		if id.Role != certs.RoleDevice && id != guard.Plaintext {
			return nil, fmt.Errorf("%w: %w", api.ErrInvalid, ErrReserved)
		}
		return g.next.Get(ctx, req)
	}
	if _, err := g.call(ctx, "Get", req); err != nil {
		return nil, err
	}
	return g.next.Get(ctx, req)
}

// List shows the caller only the objects it may see.
func (g *Guarded) List(ctx context.Context, req *devicepb.ListRequest) (*devicepb.ListResponse, error) {
	id, err := g.call(ctx, "List", req)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(req.Prefix, ReservedPrefix) {
		return nil, fmt.Errorf("%w: %w", api.ErrInvalid, ErrReserved)
	}
	resp, err := g.next.List(ctx, req)
	if err != nil {
		return nil, err
	}
	out := &devicepb.ListResponse{Truncated: resp.Truncated}
	for _, o := range resp.Objects {
		if g.a.Listable(id, o.Name) {
			if db, err := DatabaseOf(o.Name); err == nil {
				o.Owner = g.a.Owner(db)
			}
			out.Objects = append(out.Objects, o)
		}
	}
	return out, nil
}

// CopyFrom is for devices only, and only of a database's objects.
func (g *Guarded) CopyFrom(ctx context.Context, req *devicepb.CopyFromRequest) (*devicepb.CopyFromResponse, error) {
	if _, err := g.call(ctx, "CopyFrom", req); err != nil {
		return nil, fmt.Errorf("copy: %w", err)
	}
	return g.next.CopyFrom(ctx, req)
}

// binding returns the operand of a job the device is to see: a resident
// one must be the caller's own job, and carries the device's job id in
// place of the public one (the stored ones were admitted by sendNeeds).
func (g *Guarded) binding(id certs.Identity, b *devicepb.Binding) (*devicepb.Binding, error) {
	switch src := b.GetSource().(type) {
	case *devicepb.Binding_ResidentJob:
		dev, err := g.own(id, src.ResidentJob)
		if err != nil {
			return nil, err
		}
		return &devicepb.Binding{Space: b.GetSpace(), Id: b.GetId(), Polys: b.GetPolys(), Limbs: b.GetLimbs(),
			Source: &devicepb.Binding_ResidentJob{ResidentJob: dev}}, nil
	}
	return b, nil
}

func (g *Guarded) Send(ctx context.Context, req *devicepb.SendRequest) (*devicepb.SendResponse, error) {
	id, err := g.call(ctx, "Send", req)
	if err != nil {
		return nil, err
	}
	r := &devicepb.SendRequest{Program: programName(id, req.GetProgram()), Output: req.GetOutput(),
		Inputs: make([]*devicepb.Binding, len(req.GetInputs()))}
	for i, in := range req.GetInputs() {
		if r.Inputs[i], err = g.binding(id, in); err != nil {
			return nil, err
		}
	}
	if req.GetKey() != nil {
		if r.Key, err = g.binding(id, req.GetKey()); err != nil {
			return nil, err
		}
	}
	resp, err := g.next.Send(ctx, r)
	if err != nil {
		return nil, err
	}
	pub, err := g.Adopt(id, resp.GetJob())
	if err != nil {
		return nil, err
	}
	return &devicepb.SendResponse{Job: pub}, nil
}

// Adopt gives the device's job dev a random public id owned by id (Send
// does for every job it starts).
func (g *Guarded) Adopt(id certs.Identity, dev uint64) (uint64, error) {
	var b [8]byte
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		if _, err := rand.Read(b[:]); err != nil {
			return 0, err
		}
		pub := binary.LittleEndian.Uint64(b[:]) >> 1 // positive as an int64 too
		if _, taken := g.jobs[pub]; !taken && pub != 0 {
			g.jobs[pub] = job{id: dev, owner: id.Name}
			return pub, nil
		}
	}
}

// own returns the device's id of the caller's public job id; another
// caller's job is NotFound, like one that never existed.
func (g *Guarded) own(id certs.Identity, pub uint64) (uint64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	j, ok := g.jobs[pub]
	if !ok || j.owner != id.Name {
		return 0, fmt.Errorf("%w: job %d", api.ErrNotFound, pub)
	}
	return j.id, nil
}

func (g *Guarded) forget(pubs ...uint64) {
	g.mu.Lock()
	for _, p := range pubs {
		delete(g.jobs, p)
	}
	g.mu.Unlock()
}

func (g *Guarded) Recv(ctx context.Context, req *devicepb.RecvRequest) (*devicepb.RecvResponse, error) {
	id, err := g.call(ctx, "Recv", req)
	if err != nil {
		return nil, err
	}
	dev, err := g.own(id, req.GetJob())
	if err != nil {
		return nil, err
	}
	resp, err := g.next.Recv(ctx, &devicepb.RecvRequest{Job: dev, Fetch: req.GetFetch(), Release: req.GetRelease()})
	// The device drops a released job whether it succeeded or failed; only
	// a call that ended before the job did leaves it there.
	if req.Release && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		g.forget(req.Job)
	}
	return resp, err
}

func (g *Guarded) Release(ctx context.Context, req *devicepb.ReleaseRequest) (*devicepb.ReleaseResponse, error) {
	id, err := g.call(ctx, "Release", req)
	if err != nil {
		return nil, err
	}
	r := &devicepb.ReleaseRequest{Jobs: make([]uint64, len(req.Jobs))}
	for i, pub := range req.Jobs {
		if r.Jobs[i], err = g.own(id, pub); err != nil {
			return nil, err
		}
	}
	resp, err := g.next.Release(ctx, r)
	if err == nil {
		g.forget(req.Jobs...)
	}
	return resp, err
}

// QueryLWE is a query of the database the generation belongs to: its
// generation prefix and its key prefix are checked as RunStream's stored
// and key bindings are (the keys lie in the caller's member area, or the
// caller owns the database).
func (g *Guarded) QueryLWE(ctx context.Context, req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
	if _, err := g.call(ctx, "QueryLWE", req); err != nil {
		return nil, err
	}
	return g.next.QueryLWE(ctx, req)
}

func (g *Guarded) RunStream(ctx context.Context, req *devicepb.RunStreamRequest) (*devicepb.RunStreamResponse, error) {
	id, err := g.call(ctx, "RunStream", req)
	if err != nil {
		return nil, err
	}
	return g.next.RunStream(ctx, &devicepb.RunStreamRequest{Program: programName(id, req.GetProgram()), Inputs: req.GetInputs(),
		Stored: req.GetStored(), Keys: req.GetKeys()})
}
