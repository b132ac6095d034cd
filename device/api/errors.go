package api

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrorDomain is the domain of the google.rpc.ErrorInfo a device attaches
// to every error status: its Reason names the sentinel (ErrorReason).
const ErrorDomain = "device.rosemary-fhe.github.io"

// errorKind is one row of the error table: a sentinel, its gRPC code and
// the machine-readable reason that tells sentinels sharing a code apart.
type errorKind struct {
	err    error
	code   codes.Code
	reason string
}

// errorTable is the one mapping between the device's errors and gRPC
// statuses, used by the server (StatusOf) and the client (FromStatus).
// Order matters where an error wraps several sentinels: the first row it
// matches wins (a write that found the disk full may also be wrapped as an
// invalid request by the path that made it, but it is not one).
var errorTable = []errorKind{
	{ErrDiskFull, codes.ResourceExhausted, "DISK_FULL"},
	{ErrBusy, codes.ResourceExhausted, "BUSY"},
	{ErrExhausted, codes.ResourceExhausted, "EXHAUSTED"},
	{ErrInvalid, codes.InvalidArgument, "INVALID"},
	{ErrNotFound, codes.NotFound, "NOT_FOUND"},
	{ErrUnauthenticated, codes.Unauthenticated, "UNAUTHENTICATED"},
	{ErrPermissionDenied, codes.PermissionDenied, "PERMISSION_DENIED"},
	{ErrUnavailable, codes.Unavailable, "UNAVAILABLE"},
	{ErrStale, codes.Aborted, "STALE"},
	{ErrChecksum, codes.DataLoss, "CHECKSUM"},
	{ErrInUse, codes.FailedPrecondition, "IN_USE"},
	{context.DeadlineExceeded, codes.DeadlineExceeded, "DEADLINE_EXCEEDED"},
	{context.Canceled, codes.Canceled, "CANCELED"},
}

// Sentinel returns the table's sentinel that err wraps (the first row it
// matches), or nil.
func Sentinel(err error) error {
	if k, ok := kindOf(err); ok {
		return k.err
	}
	return nil
}

func kindOf(err error) (errorKind, bool) {
	if err == nil {
		return errorKind{}, false
	}
	for _, k := range errorTable {
		if errors.Is(err, k.err) {
			return k, true
		}
	}
	return errorKind{}, false
}

// ErrorReason is the reason the table gives err's sentinel ("" if err
// wraps none).
func ErrorReason(err error) string {
	k, _ := kindOf(err)
	return k.reason
}

// StatusOf is the status a server answers err with: the code of the
// sentinel kind wraps (kind may be err itself, or a sentinel the caller
// chose for an error of its own packages), with an ErrorInfo naming it,
// and err's text as the message. An error that wraps no sentinel is
// Internal.
func StatusOf(err, kind error) *status.Status {
	k, ok := kindOf(kind)
	if !ok {
		return status.New(codes.Internal, err.Error())
	}
	st := status.New(k.code, err.Error())
	if d, derr := st.WithDetails(&errdetails.ErrorInfo{Reason: k.reason, Domain: ErrorDomain}); derr == nil {
		return d
	}
	return st
}

// byCode is what a status without the device's ErrorInfo (an older
// server, or gRPC itself: a message too large, a deadline) means.
var byCode = map[codes.Code]error{
	codes.ResourceExhausted:  ErrExhausted,
	codes.InvalidArgument:    ErrInvalid,
	codes.NotFound:           ErrNotFound,
	codes.Unauthenticated:    ErrUnauthenticated,
	codes.PermissionDenied:   ErrPermissionDenied,
	codes.Unavailable:        ErrUnavailable,
	codes.Aborted:            ErrStale,
	codes.DataLoss:           ErrChecksum,
	codes.FailedPrecondition: ErrInUse,
	codes.DeadlineExceeded:   context.DeadlineExceeded,
	codes.Canceled:           context.Canceled,
}

// FromStatus maps a status error from a device back to its sentinel: the
// result wraps both the sentinel (errors.Is holds as for a device in
// process) and err (status.Code still reads its code). Any other error
// comes back unchanged.
func FromStatus(err error) error {
	st, ok := status.FromError(err)
	if !ok || st.Code() == codes.OK {
		return err
	}
	if s := sentinelOf(st); s != nil {
		return fmt.Errorf("%w: %w", s, err)
	}
	return err
}

func sentinelOf(st *status.Status) error {
	for _, d := range st.Details() {
		info, ok := d.(*errdetails.ErrorInfo)
		if !ok || info.GetDomain() != ErrorDomain {
			continue
		}
		for _, k := range errorTable {
			// A reason with the wrong code is not trusted: the code is
			// what gRPC-level callers act on.
			if k.reason == info.GetReason() && k.code == st.Code() {
				return k.err
			}
		}
	}
	return byCode[st.Code()]
}
