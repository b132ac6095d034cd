// Package remote is the gRPC client of a Rosemary device: Dial connects to
// a `rosemary device serve` daemon and returns an api.Device, the same
// contract the in-process device implements. It also counts the payload
// bytes it sends and receives (Traffic).
package remote

import (
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/certs"
)

// grpcMessageLimit bounds one gRPC message either way: MaxMessageBytes of
// payload plus room for the protobuf framing of its limbs.
const grpcMessageLimit = api.MaxMessageBytes + 1<<20

// Client is a device over gRPC. It implements api.Device; safe for
// concurrent use.
type Client struct {
	api.Device
	conn    *grpc.ClientConn
	traffic *api.PayloadCounter
	close   func() error
}

var _ api.Device = (*Client)(nil)

// Option configures Dial.
type Option func(*options)

type options struct {
	dial     []grpc.DialOption
	onClose  func()
	tls      *tls.Config
	plain    bool
	inMemory bool
}

// WithTLS connects over TLS with cfg (package certs makes it: TLS 1.3,
// presenting the client's certificate, trusting the deployment's CA).
func WithTLS(cfg *tls.Config) Option { return func(o *options) { o.tls = cfg } }

// WithPlaintext connects without TLS, to a loopback address only.
func WithPlaintext() Option { return func(o *options) { o.plain = true } }

// WithInMemory connects without TLS through a dialer given with
// WithDialOptions (an in-process server on an in-memory listener).
func WithInMemory() Option { return func(o *options) { o.inMemory = true } }

// ErrNoTransport is returned by Dial when no transport security was
// chosen.
var ErrNoTransport = errors.New("device: no transport security chosen (WithTLS, or WithPlaintext to a loopback address)")

// WithDialOptions adds gRPC dial options (a custom dialer, say).
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(o *options) { o.dial = append(o.dial, opts...) }
}

// WithOnClose runs f after Close has closed the connection (to stop what
// served it, such as an in-process server).
func WithOnClose(f func()) Option { return func(o *options) { o.onClose = f } }

// Keepalive is how a connection notices a device that stopped answering
// (frozen, its host gone, a half-open TCP connection): a ping after 10 s
// of silence (gRPC's least), the connection closed — failing its calls —
// if no answer comes within 5 s. A device accepts pings this often
// (device.KeepaliveEnforcement).
var Keepalive = keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 5 * time.Second, PermitWithoutStream: true}

// Dial connects to the device at target (host:port) over TLS (WithTLS) or
// plaintext on loopback (WithPlaintext). The connection is made lazily, on
// the first call.
func Dial(target string, opts ...Option) (*Client, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	var creds credentials.TransportCredentials
	switch {
	case o.tls != nil:
		creds = credentials.NewTLS(o.tls)
	case o.inMemory:
		creds = insecure.NewCredentials()
	case o.plain:
		if err := certs.CheckLoopback(target); err != nil {
			return nil, fmt.Errorf("device: dial %s: %w", target, err)
		}
		creds = insecure.NewCredentials()
	default:
		return nil, ErrNoTransport
	}
	c := &Client{traffic: &api.PayloadCounter{}}
	dial := append([]grpc.DialOption{grpc.WithKeepaliveParams(Keepalive)}, o.dial...)
	dial = append(dial, grpc.WithTransportCredentials(creds), grpc.WithStatsHandler(c.traffic),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(grpcMessageLimit), grpc.MaxCallSendMsgSize(grpcMessageLimit)))
	conn, err := grpc.NewClient(target, dial...)
	if err != nil {
		return nil, fmt.Errorf("device: dial %s: %w", target, err)
	}
	c.conn, c.Device = conn, api.NewClient(conn)
	c.close = func() error {
		err := conn.Close()
		if o.onClose != nil {
			o.onClose()
		}
		return err
	}
	return c, nil
}

// Conn is the client's gRPC connection (for raw calls and other services
// such as health and reflection).
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// Close closes the connection.
func (c *Client) Close() error { return c.close() }

// Traffic returns the payload bytes this client sent and received: the
// protobuf-encoded size of every request and reply of the device service
// (gRPC's stats.OutPayload.Length and InPayload.Length), without gRPC's
// 5-byte message headers and HTTP/2 framing.
func (c *Client) Traffic() (sent, received int64) { return c.traffic.Sent(), c.traffic.Received() }
