package api

import (
	"context"
	"errors"

	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// Device is the host API of Rosemary's in-storage device (the paper's
// Table II and config()), one method per RPC of the gRPC service
// rosemary.device.v1.Device. The in-process device (package device) and
// the gRPC client (package device/remote) both implement it, so code
// written against a Device runs unchanged in process or over the network.
// Implementations are safe for concurrent use.
type Device interface {
	// Config returns the device's parameters and limits.
	Config(ctx context.Context, req *devicepb.ConfigRequest) (*devicepb.ConfigResponse, error)
	// ProgSet registers an encoded mProgram under a name; the same bytes
	// again are a no-op, different bytes under a taken name are refused.
	ProgSet(ctx context.Context, req *devicepb.ProgSetRequest) (*devicepb.ProgSetResponse, error)
	// Put stores an object (refused while jobs run: ISP mode).
	Put(ctx context.Context, req *devicepb.PutRequest) (*devicepb.PutResponse, error)
	// Get reads a stored object.
	Get(ctx context.Context, req *devicepb.GetRequest) (*devicepb.GetResponse, error)
	// Delete deletes a stored object (refused while jobs run).
	Delete(ctx context.Context, req *devicepb.DeleteRequest) (*devicepb.DeleteResponse, error)
	// List describes the stored objects under a prefix, in name order.
	List(ctx context.Context, req *devicepb.ListRequest) (*devicepb.ListResponse, error)
	// CopyFrom copies objects from another device, device to device.
	CopyFrom(ctx context.Context, req *devicepb.CopyFromRequest) (*devicepb.CopyFromResponse, error)
	// Grant gives an identity a role on a database, or takes it away.
	Grant(ctx context.Context, req *devicepb.GrantRequest) (*devicepb.GrantResponse, error)
	// Send starts a job: a program run on bound operands.
	Send(ctx context.Context, req *devicepb.SendRequest) (*devicepb.SendResponse, error)
	// Recv waits for a job, optionally fetching and releasing its result.
	Recv(ctx context.Context, req *devicepb.RecvRequest) (*devicepb.RecvResponse, error)
	// Release drops job results held in device memory.
	Release(ctx context.Context, req *devicepb.ReleaseRequest) (*devicepb.ReleaseResponse, error)
	// Stats returns the device counters.
	Stats(ctx context.Context, req *devicepb.StatsRequest) (*devicepb.StatsResponse, error)
	// SetStream registers a stream program (a device segment of a plan).
	SetStream(ctx context.Context, req *devicepb.SetStreamRequest) (*devicepb.SetStreamResponse, error)
	// RunStream runs a registered stream program; cancelling ctx stops it.
	RunStream(ctx context.Context, req *devicepb.RunStreamRequest) (*devicepb.RunStreamResponse, error)
	// QueryLWE answers one query of an LWE PIR database generation (the
	// typed PIR service, package device/pirserver; no program to set);
	// cancelling ctx stops it. Its messages are the contract's own.
	QueryLWE(ctx context.Context, req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error)
}

// Errors a request can fail with (wrapped; test with errors.Is). Each has
// one gRPC code and one reason in the table of errors.go, so the same
// sentinel comes back from a device in process and from one over gRPC.
var (
	ErrInvalid  = errors.New("invalid request")
	ErrNotFound = errors.New("not found")
	// ErrExhausted: the device's memory or one of its tables is full
	// (gRPC ResourceExhausted, reason EXHAUSTED).
	ErrExhausted = errors.New("device memory or table full")
	// ErrBusy: the device's run queue, or the bytes it takes in at once,
	// are full; the same request later may go through (gRPC
	// ResourceExhausted, reason BUSY).
	ErrBusy = errors.New("device busy")
	// ErrDiskFull: the device's store has no room for the write; retrying
	// does not help until something is deleted (gRPC ResourceExhausted,
	// reason DISK_FULL).
	ErrDiskFull = errors.New("device disk full")
	// ErrUnauthenticated: the call carries no identity (gRPC
	// Unauthenticated).
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrPermissionDenied: the caller may not do this (gRPC
	// PermissionDenied).
	ErrPermissionDenied = errors.New("permission denied")
	// ErrUnavailable: another party the request needs did not answer
	// (gRPC Unavailable).
	ErrUnavailable = errors.New("unavailable")
	// ErrStale: a compare-and-swap put found the object changed since the
	// caller read it (gRPC Aborted).
	ErrStale = errors.New("object changed since it was read")
	// ErrChecksum: data failed its checksum — a stored page, or an object
	// copied from another device that does not match the checksum its
	// source sent (gRPC DataLoss).
	ErrChecksum = errors.New("checksum mismatch")
	// ErrInUse: a conventional write refused while jobs read the store
	// (ISP mode; gRPC FailedPrecondition).
	ErrInUse = errors.New("the store is in use by running jobs")
)
