package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sync"

	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/runtime"
)

// Device is what the client needs of a Rosemary device: *device.Client
// (a daemon over gRPC) and *device.Device (in process) both are one.
type Device interface {
	runtime.StreamDevice
	runtime.ObjectLister
	DeleteObject(ctx context.Context, req *device.DeleteRequest) (*device.DeleteResponse, error)
}

// Client is a user's handle on a device: their keys stay here, their
// databases live on the device. Safe for concurrent use.
type Client struct {
	dev   Device
	keys  *Keys
	close func() error

	mu        sync.Mutex
	sessions  map[string]*runtime.PIRSession    // by database@generation
	vsessions map[string]*runtime.VectorSession // by database@generation
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
	ErrIndexOutOfRange = runtime.ErrIndex
)

// Open connects to a device: target is the address of a `rosemary device
// serve` daemon (host:port), or a directory, which is opened as the store
// of an in-process device (created if absent). The keys are the user's.
func Open(ctx context.Context, target string, keys *Keys) (*Client, error) {
	if keys == nil {
		return nil, fmt.Errorf("%w: Open needs the user's keys", ErrNoKeys)
	}
	if isDir(target) {
		return OpenStore(ctx, target, keys)
	}
	c, err := device.Dial(target)
	if err != nil {
		return nil, err
	}
	if _, err := c.Config(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("client: device %s: %w", target, err)
	}
	return New(c, keys, c.Close), nil
}

// OpenStore opens (or creates) a store directory behind an in-process
// device.
func OpenStore(_ context.Context, dir string, keys *Keys) (*Client, error) {
	st, err := store.Open(dir, layout.Layout{})
	if err != nil {
		return nil, err
	}
	d, err := device.New(st, device.DefaultLimits())
	if err != nil {
		st.Close()
		return nil, err
	}
	return New(d, keys, st.Close), nil
}

// New is a client on a device the caller opened; closeFn (may be nil)
// runs at Close.
func New(dev Device, keys *Keys, closeFn func() error) *Client {
	return &Client{dev: dev, keys: keys, close: closeFn, sessions: map[string]*runtime.PIRSession{},
		vsessions: map[string]*runtime.VectorSession{}}
}

// Device is the device the client talks to.
func (c *Client) Device() Device { return c.dev }

// Close releases the device connection (or the in-process store).
func (c *Client) Close() error {
	if c.close == nil {
		return nil
	}
	return c.close()
}

// isDir: an existing directory, or a path that cannot be a host:port.
func isDir(target string) bool {
	if fi, err := os.Stat(target); err == nil {
		return fi.IsDir()
	}
	return !hostPort.MatchString(target)
}

var hostPort = regexp.MustCompile(`^[A-Za-z0-9.\-\[\]:]*:[0-9]+$`)

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func checkName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("%w %q: 1–64 letters, digits, '.', '_' or '-', starting with a letter or digit", ErrName, name)
	}
	return nil
}
