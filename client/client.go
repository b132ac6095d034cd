package client

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"

	"github.com/rosemary-fhe/rosemary/client/internal/seal"
	"github.com/rosemary-fhe/rosemary/client/internal/session"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/remote"
)

// Client is a user's handle on a device: their keys stay here, their
// databases live on the device. Safe for concurrent use.
type Client struct {
	dev   api.Device
	addr  string // the device's address (Open), for errors
	wire  uint32 // the device's wire version (Open's Config; in process, this build's)
	keys  *Keys
	close func() error

	mu        sync.Mutex
	me        string                         // the caller's identity (grant.go)
	programs  Programs                       // BGV PIR and vector databases (programs.go)
	sessions  map[string]RecordQuerier       // BGV PIR, by database@generation
	vsessions map[string]VectorQuerier       // by database@generation
	lsessions map[string]*session.LWESession // by database@generation
	grants    map[string]dbKeys              // opened grants, by object (trust.go)
	lweMode   LWEMode                        // how LWE generations are queried (lwe.go)

	clean cleaner // deletes replaced delta segments (cleanup.go)
}

// Errors about databases (wrapped; test with errors.Is).
var (
	ErrNoDatabase = errors.New("client: no such database")
	ErrExists     = errors.New("client: database exists")
	ErrEmpty      = errors.New("client: database holds no records (load it)")
	ErrKind       = errors.New("client: wrong kind of database")
	ErrName       = errors.New("client: invalid database name")
	// ErrIndexOutOfRange: a record index outside the database (checked
	// here: the device never sees the index).
	ErrIndexOutOfRange = session.ErrIndex
	// ErrTampered: something the device returned does not verify — a
	// manifest whose tag fails, a grant not signed by a trusted owner, a
	// record that does not open under its generation's key at its index,
	// an answer that does not decode. It is fatal for the key involved
	// (trust.go, state.go).
	ErrTampered = seal.ErrOpen
)

// Open connects to the `rosemary device serve` daemon at addr (host:port)
// and checks that it answers. dial chooses the transport: remote.WithTLS
// (a certs.ClientConfig: the user's certificate, the deployment's CA) or
// remote.WithPlaintext to a loopback daemon. The keys are the user's;
// Close closes the connection.
func Open(ctx context.Context, addr string, keys *Keys, dial ...remote.Option) (*Client, error) {
	if keys == nil {
		return nil, fmt.Errorf("%w: Open needs the user's keys", ErrNoKeys)
	}
	rc, err := remote.Dial(addr, dial...)
	if err != nil {
		return nil, err
	}
	cfg, err := rc.Config(ctx, &devicepb.ConfigRequest{})
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("client: device %s: %w", addr, err)
	}
	c := New(rc, keys)
	c.close, c.addr = rc.Close, addr
	c.me = cfg.Caller // the identity the device sees (grant.go); asked once
	c.wire = cfg.WireVersion
	if c.me == "" {
		c.me = localIdentity
	}
	return c, nil
}

// New is a client on a device the caller opened and keeps: a remote one,
// or a device in this process (package device, over a store directory).
// Close leaves dev open.
func New(dev api.Device, keys *Keys) *Client {
	c := &Client{dev: dev, keys: keys, wire: api.WireVersion, sessions: map[string]RecordQuerier{},
		vsessions: map[string]VectorQuerier{}, lsessions: map[string]*session.LWESession{}, grants: map[string]dbKeys{}}
	c.clean.idle.L = &c.clean.mu
	return c
}

// deviceName names the device in errors: its address, or the in-process
// device.
func (c *Client) deviceName() string {
	if c.addr == "" {
		return "the in-process device"
	}
	return "device " + c.addr
}

// Device is the device the client talks to.
func (c *Client) Device() api.Device { return c.dev }

// Close waits for the client's background deletions of replaced delta
// segments, then closes the connection Open made (nothing more for a
// client of New).
func (c *Client) Close() error {
	c.waitCleanup()
	if c.close == nil {
		return nil
	}
	return c.close()
}

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func checkName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("%w %q: 1–64 letters, digits, '.', '_' or '-', starting with a letter or digit", ErrName, name)
	}
	return nil
}

// Keys is the client's key set.
func (c *Client) Keys() *Keys { return c.keys }
