// Package local runs a Rosemary cluster on this machine for trials: an
// embedded etcd (or an existing one) and device processes on loopback,
// each on its own store. It is apart from package cluster so that clients
// of a cluster do not link an etcd server.
package local

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"go.etcd.io/etcd/server/v3/embed"

	"github.com/rosemary-fhe/rosemary/cluster"
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

// StartEtcd starts a one-member etcd server in this process, its
// data in dir and its clients served at clientURL (port 0: any free port),
// logging only errors, and waits until it serves. Its peers' port is any
// free one: nobody else joins it.
func StartEtcd(dir, clientURL string) (*embed.Etcd, error) {
	cu, err := url.Parse(clientURL)
	if err != nil {
		return nil, fmt.Errorf("%w: embedded etcd client URL: %w", cluster.ErrEtcd, err)
	}
	pu := &url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.Name + "=" + pu.String()
	cfg.LogLevel = "error"
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

// Start starts k devices (the command serveCmd, e.g. `rosemary device
// serve`, given --store, --listen, --etcd, --id and what deviceArgs
// returns for the device's id: its TLS flags, say) under dir, and an
// embedded etcd unless endpoint names one.
func Start(ctx context.Context, dir string, k int, endpoint string, serveCmd []string, deviceArgs func(id string) []string) (*Cluster, error) {
	l := &Cluster{Endpoint: endpoint}
	if endpoint == "" {
		e, err := StartEtcd(filepath.Join(dir, "etcd"), "http://127.0.0.1:2379")
		if err != nil {
			return nil, err
		}
		l.etcd, l.Endpoint = e, e.Clients[0].Addr().String()
	}
	for i := 0; i < k; i++ {
		d := Device{ID: fmt.Sprintf("d%d", i), Store: filepath.Join(dir, fmt.Sprintf("d%d", i))}
		args := append(append([]string(nil), serveCmd[1:]...), "--store", d.Store, "--listen", "127.0.0.1:0", "--etcd", l.Endpoint, "--id", d.ID)
		if deviceArgs != nil {
			args = append(args, deviceArgs(d.ID)...)
		}
		d.cmd = exec.CommandContext(ctx, serveCmd[0], args...)
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
