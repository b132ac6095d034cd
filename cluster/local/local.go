// Package local runs a Rosemary cluster on this machine for trials: an
// embedded etcd (or an existing one) and device processes on loopback,
// each on its own store. It is apart from package cluster so that clients
// of a cluster do not link an etcd server.
package local

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/tlsutil"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/device/certs"
)

// Cluster is a cluster on this machine for trials: an embedded etcd (or an
// existing one) and device processes on loopback, each on its own store.
type Cluster struct {
	Endpoint string
	Devices  []Device
	etcd     *embed.Etcd
}

// Device is one device process of a Cluster.
type Device struct {
	ID, Addr, Store string
	cmd             *exec.Cmd
}

// StartEtcd starts a one-member etcd server in this process, its data in
// dir and its clients served at listen (host:port; port 0: any free
// port), logging only errors, and waits until it serves. Its peers' port
// is any free one on the same host: nobody else joins it.
//
// With sec (a server certificate, certs.Issue --role server, its key and
// the cluster's CA) clients and peers speak TLS 1.3 and must present a
// certificate that CA signed (etcd's --client-cert-auth and
// --peer-client-cert-auth); etcd then takes a client's common name for its
// user (SetupAuth turns the users' rights on). Without sec it serves
// plaintext, on a loopback address only.
func StartEtcd(dir, listen string, sec certs.Files) (*embed.Etcd, error) {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("%w: embedded etcd address: %w", cluster.ErrEtcd, err)
	}
	cfg, err := memberConfig(dir, listen, net.JoinHostPort(host, "0"), sec)
	if err != nil {
		return nil, err
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: start embedded etcd: %w", cluster.ErrEtcd, err)
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case <-time.After(30 * time.Second):
		e.Close()
		return nil, fmt.Errorf("%w: embedded etcd did not start", cluster.ErrEtcd)
	}
}

// memberConfig is the configuration of a one-member etcd with its data in
// dir serving clients at client and peers at peer (host:port), logging only
// errors, on TLS 1.3 with client certificates when sec is set (see
// StartEtcd), else plaintext on loopback.
func memberConfig(dir, client, peer string, sec certs.Files) (*embed.Config, error) {
	scheme := "https"
	if !sec.Set() {
		if err := certs.CheckLoopback(client); err != nil {
			return nil, fmt.Errorf("%w: a plaintext etcd: %w", cluster.ErrEtcd, err)
		}
		scheme = "http"
	}
	cu := &url.URL{Scheme: scheme, Host: client}
	pu := &url.URL{Scheme: scheme, Host: peer}
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.Name + "=" + pu.String()
	cfg.LogLevel = "error"
	if sec.Set() {
		if _, err := certs.ServerConfig(sec, true); err != nil { // the files' own checks: all three, key 0600
			return nil, fmt.Errorf("%w: embedded etcd: %w", cluster.ErrEtcd, err)
		}
		members, err := peerNames(sec)
		if err != nil {
			return nil, err
		}
		info := transport.TLSInfo{CertFile: sec.Cert, KeyFile: sec.Key, TrustedCAFile: sec.CA, ClientCertAuth: true}
		cfg.ClientTLSInfo, cfg.PeerTLSInfo = info, info
		cfg.PeerTLSInfo.AllowedCNs = members
		cfg.TlsMinVersion = string(tlsutil.TLSVersion13)
	}
	return cfg, nil
}

// ErrMemberCert is returned for an etcd member certificate that is not a
// control-plane server's (certs.RoleServer).
var ErrMemberCert = errors.New("etcd member certificate")

// peerNames are the common names etcd's peer port takes (its AllowedCNs):
// the members', that is the name of sec's certificate, which every member
// of a local cluster presents. Without the list the peer port takes any
// certificate of the CA, a user's too (etcd's --peer-client-cert-auth
// checks only the CA), and its API (/members, /raft/…) sits below RBAC.
// Names, not a peer CA of their own: a deployment keeps one CA (package
// certs) and only its holder gives names; the certificate must carry the
// server role so that the name is one the CA gave a control-plane server.
func peerNames(sec certs.Files) ([]string, error) {
	id, err := certs.ReadIdentity(sec.Cert)
	if err != nil {
		return nil, fmt.Errorf("%w: %w: %w", cluster.ErrEtcd, ErrMemberCert, err)
	}
	if id.Role != certs.RoleServer {
		return nil, fmt.Errorf("%w: %w: %s is %s, want a server's (rosemary certs issue --role server)", cluster.ErrEtcd, ErrMemberCert, sec.Cert, id)
	}
	return []string{id.Name}, nil
}

// Config says what Start runs.
type Config struct {
	Dir     string // the stores (Dir/dN) and the embedded etcd's data (Dir/etcd)
	Devices int    // device processes d0, d1, …
	// Endpoint names an existing etcd; empty: an embedded one on
	// 127.0.0.1:2379.
	Endpoint string
	// EtcdTLS is the embedded etcd's certificate, key and CA (StartEtcd);
	// zero: plaintext on loopback.
	EtcdTLS certs.Files
	// Admin is how the cluster's admin (an admin certificate) reaches
	// etcd; with it Start turns etcd's RBAC on (cluster.SetupAuth) and
	// makes every device a user before it starts. nil: plaintext, no auth.
	Admin *tls.Config
	// Serve is the device command (`rosemary device serve`, say), given
	// --store, --listen, --etcd, --id and what DeviceArgs returns for the
	// device's id (its TLS flags).
	Serve      []string
	DeviceArgs func(id string) []string
}

// Start starts cfg.Devices devices under cfg.Dir, and an embedded etcd
// unless cfg.Endpoint names one.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	l := &Cluster{Endpoint: cfg.Endpoint}
	if cfg.Endpoint == "" {
		e, err := StartEtcd(filepath.Join(cfg.Dir, "etcd"), "127.0.0.1:2379", cfg.EtcdTLS)
		if err != nil {
			return nil, err
		}
		l.etcd, l.Endpoint = e, e.Clients[0].Addr().String()
	}
	var ids []string
	for i := 0; i < cfg.Devices; i++ {
		ids = append(ids, fmt.Sprintf("d%d", i))
	}
	if cfg.Admin != nil {
		if err := Authorize(ctx, cluster.Etcd{Endpoints: []string{l.Endpoint}, TLS: cfg.Admin}, ids); err != nil {
			l.Stop()
			return nil, err
		}
	}
	for _, id := range ids {
		d := Device{ID: id, Store: filepath.Join(cfg.Dir, id)}
		args := append(append([]string(nil), cfg.Serve[1:]...), "--store", d.Store, "--listen", "127.0.0.1:0", "--etcd", l.Endpoint, "--id", d.ID)
		if cfg.DeviceArgs != nil {
			args = append(args, cfg.DeviceArgs(d.ID)...)
		}
		d.cmd = exec.CommandContext(ctx, cfg.Serve[0], args...)
		d.cmd.Stderr = os.Stderr
		out, err := d.cmd.StdoutPipe()
		if err != nil {
			l.Stop()
			return nil, err
		}
		if err := d.cmd.Start(); err != nil {
			l.Stop()
			return nil, fmt.Errorf("cluster: start device %s: %w", d.ID, err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			l.Stop()
			return nil, fmt.Errorf("cluster: device %s did not start: %w", d.ID, err)
		}
		d.Addr = strings.TrimSpace(strings.TrimPrefix(line, "listening "))
		l.Devices = append(l.Devices, d)
	}
	return l, nil
}

// Authorize turns on the RBAC of the etcd admin reaches (cluster.SetupAuth:
// admin's certificate becomes a root user) and makes each of devices a
// device user, who may write only its own registry key.
func Authorize(ctx context.Context, admin cluster.Etcd, devices []string) error {
	id, err := admin.Identity()
	if err != nil {
		return err
	}
	cli, err := cluster.Connect(ctx, admin)
	if err != nil {
		return err
	}
	defer cli.Close()
	actx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := cluster.SetupAuth(actx, cli, id); err != nil {
		return err
	}
	for _, d := range devices {
		if err := cluster.AddUser(actx, cli, certs.Identity{Name: d, Role: certs.RoleDevice}); err != nil {
			return err
		}
	}
	return nil
}

// Stop ends the devices (SIGTERM: graceful) and the embedded etcd.
func (l *Cluster) Stop() {
	for _, d := range l.Devices {
		if d.cmd != nil && d.cmd.Process != nil {
			d.cmd.Process.Signal(os.Interrupt)
			d.cmd.Wait()
		}
	}
	if l.etcd != nil {
		l.etcd.Close()
	}
}
