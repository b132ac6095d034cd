package local

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"

	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/device/certs"
)

// EtcdCluster is an etcd cluster of several members on loopback, each of
// which can be stopped and started again over its own data: the etcd of a
// fault-injection run, whose members come and go. Members run in this
// process (a stop is a graceful close, which waits for the members'
// clients up to etcd's request timeout) or each in a process of its own
// (a stop is a SIGKILL: a crash).
type EtcdCluster struct {
	members []*EtcdMember
}

// MemberSpawner makes the command of a member process from the arguments
// ServeMember takes (`rosemary cluster etcd-member ARGS`, say).
type MemberSpawner func(args []string) *exec.Cmd

// EtcdMember is one member of an EtcdCluster.
type EtcdMember struct {
	Name  string
	spec  memberSpec
	spawn MemberSpawner // nil: in this process

	mu     sync.Mutex
	e      *embed.Etcd   // in process; nil while stopped
	cmd    *exec.Cmd     // a process; nil while stopped
	ready  chan struct{} // closed when the process says it serves
	exited chan struct{} // closed when the process ended
}

// memberSpec is what a member is started with, in process or as a
// process's arguments (ServeMember).
type memberSpec struct {
	name, dir, client, peer, initial, state string
	tls                                     certs.Files
}

func (s memberSpec) args() []string {
	a := []string{"--name", s.name, "--dir", s.dir, "--client", s.client, "--peer", s.peer, "--initial-cluster", s.initial, "--state", s.state}
	if s.tls.Set() {
		a = append(a, "--cert-file", s.tls.Cert, "--key-file", s.tls.Key, "--trusted-ca-file", s.tls.CA)
	}
	return a
}

func (s memberSpec) config() (*embed.Config, error) {
	cfg, err := memberConfig(filepath.Join(s.dir, s.name), s.client, s.peer, s.tls)
	if err != nil {
		return nil, err
	}
	cfg.Name = s.name
	cfg.InitialCluster = s.initial
	cfg.InitialClusterToken = "rosemary-local"
	cfg.ClusterState = s.state
	// Members that stop and start log their listeners' errors: into a
	// file of their own, not the terminal.
	cfg.LogOutputs = []string{filepath.Join(s.dir, s.name+".log")}
	return cfg, nil
}

// StartEtcdCluster starts n members (n odd: 1, 3, 5, 7) under dir (data in
// dir/mN, logs in dir/mN.log), each serving clients and peers on its own
// free loopback ports, with sec as StartEtcd takes it (zero: plaintext on
// loopback), in this process or, with spawn, each in its own process; and
// waits until they form a cluster.
func StartEtcdCluster(ctx context.Context, dir string, n int, sec certs.Files, spawn MemberSpawner) (*EtcdCluster, error) {
	if n < 1 || n%2 == 0 || n > 7 {
		return nil, fmt.Errorf("%w: an etcd cluster of %d members (want 1, 3, 5 or 7)", cluster.ErrEtcd, n)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: %w", cluster.ErrEtcd, err)
	}
	ports, err := FreePorts(2 * n)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", cluster.ErrEtcd, err)
	}
	scheme := "http"
	if sec.Set() {
		scheme = "https"
	}
	c := &EtcdCluster{}
	var initial []string
	for i := range n {
		s := memberSpec{name: fmt.Sprintf("m%d", i), dir: dir, client: "127.0.0.1:" + ports[2*i], peer: "127.0.0.1:" + ports[2*i+1],
			state: embed.ClusterStateFlagNew, tls: sec}
		initial = append(initial, s.name+"="+scheme+"://"+s.peer)
		c.members = append(c.members, &EtcdMember{Name: s.name, spec: s, spawn: spawn})
	}
	for _, m := range c.members {
		m.spec.initial = strings.Join(initial, ",")
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

// FreePorts returns n distinct ports that were free on loopback a moment
// ago (etcd needs to know its peers' ports before any of them listens).
func FreePorts(n int) ([]string, error) {
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
		eps = append(eps, m.spec.client)
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
	if m.e != nil || m.cmd != nil {
		return nil
	}
	defer func() {
		// A restarted member rejoins from its data directory: later starts
		// say the cluster exists (etcd ignores the initial cluster then).
		m.spec.state = embed.ClusterStateFlagExisting
	}()
	if m.spawn == nil {
		cfg, err := m.spec.config()
		if err != nil {
			return err
		}
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			return fmt.Errorf("%w: start etcd member %s: %w", cluster.ErrEtcd, m.Name, err)
		}
		m.e = e
		return nil
	}
	cmd := m.spawn(m.spec.args())
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%w: start etcd member %s: %w", cluster.ErrEtcd, m.Name, err)
	}
	ready, exited := make(chan struct{}), make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "ready" {
				close(ready)
				break
			}
		}
		io.Copy(io.Discard, out)
	}()
	go func() {
		cmd.Wait()
		close(exited)
	}()
	m.cmd, m.ready, m.exited = cmd, ready, exited
	return nil
}

// WaitReady waits up to limit until the member serves (it has joined a
// quorum of the cluster).
func (m *EtcdMember) WaitReady(ctx context.Context, limit time.Duration) error {
	m.mu.Lock()
	e, ready, exited := m.e, m.ready, m.exited
	running := m.e != nil || m.cmd != nil
	m.mu.Unlock()
	if !running {
		return fmt.Errorf("%w: etcd member %s is stopped", cluster.ErrEtcd, m.Name)
	}
	var errc <-chan error
	var readyNotify <-chan struct{}
	if e != nil {
		readyNotify, errc = e.Server.ReadyNotify(), e.Err()
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-readyNotify:
		return nil
	case <-ready:
		return nil
	case err := <-errc:
		return fmt.Errorf("%w: etcd member %s: %w", cluster.ErrEtcd, m.Name, err)
	case <-exited:
		return fmt.Errorf("%w: etcd member %s ended (its log: %s)", cluster.ErrEtcd, m.Name, filepath.Join(m.spec.dir, m.Name+".log"))
	case <-t.C:
		return fmt.Errorf("%w: etcd member %s not ready after %v", cluster.ErrEtcd, m.Name, limit)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stop stops the member: an in-process one closes (gracefully), a process
// is killed (a crash). Its data stays. Stopping a stopped member does
// nothing.
func (m *EtcdMember) Stop() {
	m.mu.Lock()
	e, cmd, exited := m.e, m.cmd, m.exited
	m.e, m.cmd = nil, nil
	m.mu.Unlock()
	if e != nil {
		e.Close()
	}
	if cmd != nil {
		cmd.Process.Signal(syscall.SIGKILL)
		<-exited
	}
}

// Running reports whether the member is started.
func (m *EtcdMember) Running() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.e != nil || m.cmd != nil
}

// ServeMember runs one member of an EtcdCluster in this process, as the
// arguments a MemberSpawner is given say, printing "ready" on stdout once
// it serves, until ctx ends or etcd fails.
func ServeMember(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("etcd-member", flag.ContinueOnError)
	var s memberSpec
	fs.StringVar(&s.name, "name", "", "member name")
	fs.StringVar(&s.dir, "dir", "", "the cluster's directory (data in DIR/NAME, log in DIR/NAME.log)")
	fs.StringVar(&s.client, "client", "", "client address host:port")
	fs.StringVar(&s.peer, "peer", "", "peer address host:port")
	fs.StringVar(&s.initial, "initial-cluster", "", "name=url,… of every member")
	fs.StringVar(&s.state, "state", embed.ClusterStateFlagNew, "new or existing")
	fs.StringVar(&s.tls.Cert, "cert-file", "", "server certificate")
	fs.StringVar(&s.tls.Key, "key-file", "", "its key")
	fs.StringVar(&s.tls.CA, "trusted-ca-file", "", "CA of clients and peers")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if s.name == "" || s.dir == "" || s.client == "" || s.peer == "" || s.initial == "" {
		return errors.New("etcd-member: --name, --dir, --client, --peer and --initial-cluster are required")
	}
	cfg, err := s.config()
	if err != nil {
		return err
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("%w: start etcd member %s: %w", cluster.ErrEtcd, s.name, err)
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
		fmt.Println("ready")
	case err := <-e.Err():
		return err
	case <-ctx.Done():
		return nil
	}
	select {
	case err := <-e.Err():
		return err
	case <-ctx.Done():
		return nil
	}
}
