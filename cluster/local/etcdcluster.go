package local

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/server/v3/embed"

	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/device/certs"
)

// EtcdCluster is an etcd cluster of several members in this process, on
// loopback, each of which can be stopped and started again over its own
// data: the etcd of a fault-injection run, whose members come and go.
type EtcdCluster struct {
	members []*EtcdMember
}

// EtcdMember is one member of an EtcdCluster.
type EtcdMember struct {
	Name string
	cfg  embed.Config // as first started; a restart reuses its addresses and data

	mu sync.Mutex
	e  *embed.Etcd // nil while stopped
}

// StartEtcdCluster starts n members (n odd: 1, 3, 5) under dir (data in
// dir/mN, logs in dir/mN.log),
// each serving clients and peers on its own free loopback ports, with sec
// as StartEtcd takes it (zero: plaintext on loopback), and waits until they
// form a cluster.
func StartEtcdCluster(ctx context.Context, dir string, n int, sec certs.Files) (*EtcdCluster, error) {
	if n < 1 || n%2 == 0 || n > 7 {
		return nil, fmt.Errorf("%w: an etcd cluster of %d members (want 1, 3, 5 or 7)", cluster.ErrEtcd, n)
	}
	ports, err := freePorts(2 * n)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", cluster.ErrEtcd, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: %w", cluster.ErrEtcd, err)
	}
	c := &EtcdCluster{}
	var initial []string
	for i := range n {
		name := fmt.Sprintf("m%d", i)
		cfg, err := memberConfig(filepath.Join(dir, name), "127.0.0.1:"+ports[2*i], "127.0.0.1:"+ports[2*i+1], sec)
		if err != nil {
			return nil, err
		}
		cfg.Name = name
		// Members that stop and start log their listeners' errors: into a
		// file of their own, not the terminal.
		cfg.LogOutputs = []string{filepath.Join(dir, name+".log")}
		initial = append(initial, name+"="+cfg.AdvertisePeerUrls[0].String())
		c.members = append(c.members, &EtcdMember{Name: name, cfg: *cfg})
	}
	for _, m := range c.members {
		m.cfg.InitialCluster = strings.Join(initial, ",")
		m.cfg.InitialClusterToken = "rosemary-local"
	}
	// Every member waits for the others before it is ready: start them all,
	// then wait.
	for _, m := range c.members {
		if err := m.Start(); err != nil {
			c.Close()
			return nil, err
		}
	}
	for _, m := range c.members {
		if err := m.WaitReady(ctx, time.Minute); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// freePorts returns n distinct ports that were free on loopback a moment
// ago (etcd needs to know its peers' ports before any of them listens).
func freePorts(n int) ([]string, error) {
	var ports []string
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		_, p, _ := net.SplitHostPort(l.Addr().String())
		ports = append(ports, p)
	}
	return ports, nil
}

// Endpoints are the members' client addresses.
func (c *EtcdCluster) Endpoints() []string {
	var eps []string
	for _, m := range c.members {
		eps = append(eps, m.cfg.AdvertiseClientUrls[0].Host)
	}
	return eps
}

// Members are the cluster's members, in the order of Endpoints.
func (c *EtcdCluster) Members() []*EtcdMember { return c.members }

// Close stops every member.
func (c *EtcdCluster) Close() {
	for _, m := range c.members {
		m.Stop()
	}
}

// Start starts the member (again, over its data after a Stop); it does not
// wait for it to rejoin (WaitReady). Starting a running member does nothing.
func (m *EtcdMember) Start() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.e != nil {
		return nil
	}
	cfg := m.cfg
	e, err := embed.StartEtcd(&cfg)
	if err != nil {
		return fmt.Errorf("%w: start etcd member %s: %w", cluster.ErrEtcd, m.Name, err)
	}
	m.e = e
	// A restarted member rejoins from its data directory: later starts say
	// the cluster exists (etcd ignores the initial cluster then anyway).
	m.cfg.ClusterState = embed.ClusterStateFlagExisting
	return nil
}

// WaitReady waits up to limit until the member serves (it has joined a
// quorum of the cluster).
func (m *EtcdMember) WaitReady(ctx context.Context, limit time.Duration) error {
	m.mu.Lock()
	e := m.e
	m.mu.Unlock()
	if e == nil {
		return fmt.Errorf("%w: etcd member %s is stopped", cluster.ErrEtcd, m.Name)
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-e.Server.ReadyNotify():
		return nil
	case err := <-e.Err():
		return fmt.Errorf("%w: etcd member %s: %w", cluster.ErrEtcd, m.Name, err)
	case <-t.C:
		return fmt.Errorf("%w: etcd member %s not ready after %v", cluster.ErrEtcd, m.Name, limit)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stop stops the member, as a crashed one would leave the cluster (its
// data stays). Stopping a stopped member does nothing.
func (m *EtcdMember) Stop() {
	m.mu.Lock()
	e := m.e
	m.e = nil
	m.mu.Unlock()
	if e != nil {
		e.Close()
	}
}

// Running reports whether the member is started.
func (m *EtcdMember) Running() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.e != nil
}
