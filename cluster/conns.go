package cluster

import (
	"context"

	"github.com/rosemary-fhe/rosemary/client"
)

// deviceConn is one device connection shared by every call to that
// device. A connection found broken is forgotten (new calls dial afresh)
// but closed only when the last call using it has released it: one
// shard's failure never cancels another shard's call.
type deviceConn struct {
	cc        *client.Client
	refs      int
	forgotten bool
}

// acquire returns the connection to addr, dialling it if there is none,
// and a release to call once the caller's use of it ends.
func (c *Client) acquire(ctx context.Context, addr string) (*client.Client, func(), error) {
	c.mu.Lock()
	dc, ok := c.conns[addr]
	if ok {
		dc.refs++
		c.mu.Unlock()
		return dc.cc, func() { c.release(dc) }, nil
	}
	c.mu.Unlock()
	cc, err := client.Open(ctx, addr, c.keys, c.dial...)
	if err != nil {
		return nil, nil, err
	}
	if c.Programs != nil {
		cc.WithPrograms(c.Programs)
	}
	c.mu.Lock()
	if old, ok := c.conns[addr]; ok { // another call dialled meanwhile
		old.refs++
		c.mu.Unlock()
		cc.Close()
		return old.cc, func() { c.release(old) }, nil
	}
	dc = &deviceConn{cc: cc, refs: 1}
	c.conns[addr] = dc
	c.mu.Unlock()
	return cc, func() { c.release(dc) }, nil
}

func (c *Client) release(dc *deviceConn) {
	c.mu.Lock()
	dc.refs--
	closeNow := dc.forgotten && dc.refs == 0
	c.mu.Unlock()
	if closeNow {
		dc.cc.Close()
	}
}

// forget drops cc, found broken, from the pool: the next call to addr
// dials a new connection; cc closes once no call uses it. A connection
// already replaced is left alone.
func (c *Client) forget(addr string, cc *client.Client) {
	c.mu.Lock()
	dc, ok := c.conns[addr]
	if !ok || dc.cc != cc {
		c.mu.Unlock()
		return
	}
	delete(c.conns, addr)
	dc.forgotten = true
	closeNow := dc.refs == 0
	c.mu.Unlock()
	if closeNow {
		dc.cc.Close()
	}
}
