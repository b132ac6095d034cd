// Package guard is what every RPC to a device passes before it reaches
// the device: authentication (the caller's identity from its verified TLS
// certificate, put in the request's context) and a last line against
// panics (one becomes an Internal error, logged with its method and stack,
// and the server serves on; tests show no known input reaches it).
//
// A server without TLS (--insecure-plaintext, loopback only) has no way to
// tell callers apart: every caller is the one identity Plaintext, a user.
package guard

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/rosemary-fhe/rosemary/device/certs"
)

// Plaintext is every caller's identity on a server without TLS.
var Plaintext = certs.Plaintext

type identityKey struct{}

// WithIdentity returns ctx carrying id (what the interceptors do; an
// in-process caller that is not behind a server uses it directly).
func WithIdentity(ctx context.Context, id certs.Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the identity the interceptors put in ctx.
func IdentityFrom(ctx context.Context) (certs.Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(certs.Identity)
	return id, ok
}

// Mode says how a server authenticates.
type Mode uint8

const (
	// MutualTLS: the caller's verified client certificate names it.
	MutualTLS Mode = iota
	// PlaintextLoopback: no TLS (loopback only); every caller is the
	// identity Plaintext.
	PlaintextLoopback
)

// Authenticate finds the caller of ctx as the interceptors do (a call's
// context, or a stream's as an InTapHandle sees it).
func Authenticate(ctx context.Context, mode Mode) (certs.Identity, error) {
	return authenticate(ctx, mode)
}

// authenticate finds the caller of ctx.
func authenticate(ctx context.Context, mode Mode) (certs.Identity, error) {
	if mode == PlaintextLoopback {
		return Plaintext, nil
	}
	p, ok := peer.FromContext(ctx)
	if !ok {
		return certs.Identity{}, status.Error(codes.Unauthenticated, "no peer")
	}
	tlsInfo, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok {
		return certs.Identity{}, status.Error(codes.Unauthenticated, "the connection is not TLS")
	}
	chains := tlsInfo.State.VerifiedChains
	if len(chains) == 0 || len(chains[0]) == 0 {
		return certs.Identity{}, status.Error(codes.Unauthenticated, "no verified client certificate")
	}
	id, err := certs.IdentityOf(chains[0][0])
	if err != nil {
		return certs.Identity{}, status.Error(codes.Unauthenticated, err.Error())
	}
	return id, nil
}

// recovered turns a panic into an Internal error, logged with the method
// and the stack.
func recovered(log *slog.Logger, method string, err *error) {
	if r := recover(); r != nil {
		log.Error("panic in RPC", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		*err = status.Errorf(codes.Internal, "%s: internal error", method)
	}
}

// Unary is the unary interceptor: authenticate, then call, recovering a
// panic. Services listed in open (e.g. the health service) skip
// authentication.
func Unary(mode Mode, log *slog.Logger, open ...string) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer recovered(log, info.FullMethod, &err)
		if !isOpen(info.FullMethod, open) {
			id, err := authenticate(ctx, mode)
			if err != nil {
				return nil, err
			}
			ctx = WithIdentity(ctx, id)
		}
		return handler(ctx, req)
	}
}

// Stream is the streaming interceptor, like Unary.
func Stream(mode Mode, log *slog.Logger, open ...string) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer recovered(log, info.FullMethod, &err)
		if isOpen(info.FullMethod, open) {
			return handler(srv, ss)
		}
		id, err := authenticate(ss.Context(), mode)
		if err != nil {
			return err
		}
		return handler(srv, &identityStream{ServerStream: ss, ctx: WithIdentity(ss.Context(), id)})
	}
}

type identityStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *identityStream) Context() context.Context { return s.ctx }

// isOpen reports whether method (/service/Method) belongs to a service
// that needs no identity.
func isOpen(method string, open []string) bool {
	for _, svc := range open {
		if len(method) > len(svc)+1 && method[1:len(svc)+1] == svc && method[len(svc)+1] == '/' {
			return true
		}
	}
	return false
}
