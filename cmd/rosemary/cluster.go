package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/programs"
	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/cluster/local"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/remote"
)

func init() {
	register(command{name: "cluster", summary: "a local cluster of devices coordinated by etcd: up --devices K | status --etcd ADDR | user add --name N", run: runCluster})
}

const clusterUsage = "usage: rosemary cluster up --devices K [--etcd embedded|ADDR] [--dir DIR] [--insecure-plaintext] [--metrics-listen 127.0.0.1:PORT] [--reconcile-interval 1m] [--scrub-interval 24h] | " +
	"status --etcd ADDR [--json] [--cert F --key F --cacert F] | user add --etcd ADDR --name N [--role user|device|admin] --cert ADMIN.crt --key ADMIN.key --cacert CA"

func runCluster(args []string) error {
	if len(args) == 0 {
		return errors.New(clusterUsage)
	}
	switch args[0] {
	case "up":
		return runClusterUp(args)
	case "etcd-member":
		// One member of a local etcd cluster in its own process (rosemary
		// chaos kills and restarts them); not for users.
		ctx, stop := untilInterrupted()
		defer stop()
		return local.ServeMember(ctx, args[1:])
	case "status":
		return runClusterStatus(args)
	case "user":
		return runClusterUser(args[1:])
	}
	return fmt.Errorf("cluster: unknown command %q (up, status, user)", args[0])
}

// runClusterUp is `rosemary cluster up`: etcd and device processes on this
// machine, and the cluster's coordinator in this process.
func runClusterUp(args []string) error {
	fs := flag.NewFlagSet("cluster up", flag.ContinueOnError)
	k := fs.Int("devices", 3, "device processes")
	etcd := fs.String("etcd", "embedded", "embedded (an etcd in this process on 127.0.0.1:2379) or an etcd address")
	dir := fs.String("dir", filepath.Join(os.TempDir(), "rosemary-cluster"), "directory of the stores, the certificates (DIR/certs) and the embedded etcd")
	plaintext := fs.Bool("insecure-plaintext", false, "devices and etcd serve plaintext on loopback, etcd without auth (default: TLS 1.3 with client certificates from DIR/certs, etcd's RBAC on)")
	metricsAddr := fs.String("metrics-listen", "", "the coordinator serves Prometheus metrics at http://ADDR/metrics (loopback only; default off)")
	fs.StringVar(metricsAddr, "metrics-addr", "", "the same as --metrics-listen (its earlier name)")
	reconcile := fs.Duration("reconcile-interval", time.Minute, "the coordinator also checks every replica against its manifest this often, copying a short one again (0: only when devices come and go)")
	scrub := fs.Duration("scrub-interval", 24*time.Hour, "each device reads and verifies every stored page this often (`device serve --scrub-interval`; 0: never)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	certDir := filepath.Join(*dir, "certs")
	tr, err := clusterTransport(certDir, *k, *plaintext)
	if err != nil {
		return err
	}
	device, err := childDeviceCommand()
	if err != nil {
		return err
	}
	endpoint := *etcd
	if endpoint == "embedded" {
		endpoint = ""
	}
	ctx, stop := untilInterrupted()
	defer stop()
	l, err := local.Start(ctx, local.Config{Dir: *dir, Devices: *k, Endpoint: endpoint, EtcdTLS: tr.etcdServer, Admin: tr.admin,
		Serve: device, DeviceArgs: func(id string) []string {
			return append(tr.deviceArgs(id), "--scrub-interval", scrub.String())
		}})
	if err != nil {
		return err
	}
	defer l.Stop()
	fmt.Printf("etcd %s\n", l.Endpoint)
	for _, d := range l.Devices {
		fmt.Printf("device %s %s (store %s)\n", d.ID, d.Addr, d.Store)
	}
	if *plaintext {
		fmt.Printf("up (PLAINTEXT, etcd without auth): use --cluster %s --insecure-plaintext with `rosemary db`; Ctrl-C stops the cluster\n", l.Endpoint)
	} else {
		admin := certs.InDir(certDir, "coordinator")
		fmt.Printf("up: etcd on TLS with RBAC, certificates in %s; make yours and let it into etcd:\n"+
			"    rosemary certs issue --dir %s --name YOU\n"+
			"    rosemary cluster user add --etcd %s --cert %s --key %s --cacert %s --name YOU\n"+
			"    then use --cluster %s --cert %s/YOU.crt --key %s/YOU.key --cacert %s with `rosemary db`; Ctrl-C stops the cluster\n",
			certDir, certDir, l.Endpoint, admin.Cert, admin.Key, admin.CA, l.Endpoint, certDir, certDir, admin.CA)
	}
	// The cluster's coordinator: repair and rebalance as devices come and go.
	keys, err := client.LoadKeys(filepath.Join(*dir, "coordinator-keys"))
	if errors.Is(err, client.ErrNoKeys) {
		keys, err = client.NewKeys(filepath.Join(*dir, "coordinator-keys"))
	}
	if err != nil {
		return err
	}
	c, err := cluster.Open(ctx, cluster.Etcd{Endpoints: []string{l.Endpoint}, TLS: tr.admin}, keys, tr.dial...)
	if c != nil {
		c.Programs = programs.New()
	}
	if err != nil {
		return err
	}
	defer c.Close()
	c.ReconcileInterval = *reconcile
	stopMetrics, err := serveMetrics(*metricsAddr, c.RegisterMetrics)
	if err != nil {
		return err
	}
	defer stopMetrics()
	return c.Maintain(ctx, func(db string, copied int, err error) {
		switch {
		case err != nil && db == "":
			fmt.Fprintf(os.Stderr, "cluster: maintain: %v (tried again)\n", err)
		case err != nil:
			fmt.Fprintf(os.Stderr, "cluster: repair %s: %v (tried again)\n", db, err)
		case copied > 0:
			fmt.Printf("repaired %s: %d shard replicas copied device to device\n", db, copied)
		}
	})
}

// runClusterStatus is `rosemary cluster status`: the live devices and the
// databases' shard maps.
func runClusterStatus(args []string) error {
	fs := flag.NewFlagSet("cluster status", flag.ContinueOnError)
	etcd := fs.String("etcd", "127.0.0.1:2379", "etcd address(es), comma-separated")
	asJSON := fs.Bool("json", false, "print JSON")
	tf := addTransportFlags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	ec, err := tf.etcd(*etcd)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cli, err := cluster.Connect(ctx, ec)
	if err != nil {
		return err
	}
	defer cli.Close()
	st, err := cluster.ReadStatus(ctx, cli)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(st)
	}
	fmt.Printf("%d live devices\n", len(st.Devices))
	for _, d := range st.Devices {
		fmt.Printf("  %s %s\n", d.ID, d.Addr)
	}
	for _, m := range st.Databases {
		fmt.Printf("database %s/%s: %s, %s, generation %d, %d shards × %d replicas\n", m.Owner, m.Name, m.Kind, describePart(m.Header, m.Parts),
			m.Generation, len(m.Shards), m.Replicas)
		for _, sh := range m.Shards {
			fmt.Printf("  shard %d: %d records on %v\n", sh.ID, sh.Records, sh.Replicas)
		}
	}
	return nil
}

// runClusterUser lets an identity into a cluster's etcd: `user add --name
// N --role R`, run with an admin's certificate. The first run against an
// etcd without auth turns its RBAC on, the admin becoming a root user.
func runClusterUser(args []string) error {
	if len(args) == 0 || args[0] != "add" {
		return errors.New(clusterUsage)
	}
	fs := flag.NewFlagSet("cluster user add", flag.ContinueOnError)
	etcd := fs.String("etcd", "127.0.0.1:2379", "etcd address(es), comma-separated")
	name := fs.String("name", "", "the identity: its certificate's common name (rosemary certs issue --name)")
	roleName := fs.String("role", string(certs.RoleUser), "its certificate's role: user, device or admin")
	tf := addTransportFlags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	role, err := certs.ParseRole(*roleName)
	if err != nil {
		return err
	}
	ec, err := tf.etcd(*etcd)
	if err != nil {
		return err
	}
	if ec.TLS == nil {
		return errors.New("cluster user add: a plaintext etcd has no users (it runs without auth)")
	}
	me, err := ec.Identity()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cli, err := cluster.Connect(ctx, ec)
	if err != nil {
		return err
	}
	defer cli.Close()
	if err := cluster.SetupAuth(ctx, cli, me); err != nil {
		return err
	}
	id := certs.Identity{Name: *name, Role: role}
	if err := cluster.AddUser(ctx, cli, id); err != nil {
		return err
	}
	fmt.Printf("etcd user %s added\n", id)
	return nil
}

// localTransport is how a local cluster's parties authenticate.
type localTransport struct {
	deviceArgs func(id string) []string // each device's serve flags
	dial       []remote.Option          // how the coordinator dials devices
	etcdServer certs.Files              // the embedded etcd's certificate
	admin      *tls.Config              // the coordinator's, to etcd (nil: plaintext)
}

// clusterTransport makes a local cluster's TLS material in dir (a CA, a
// device certificate per device, a server certificate for etcd, an admin
// certificate for the coordinator; what exists is kept); or plaintext on
// loopback.
func clusterTransport(dir string, k int, plaintext bool) (*localTransport, error) {
	if plaintext {
		return &localTransport{deviceArgs: func(string) []string { return []string{"--insecure-plaintext"} }, dial: []remote.Option{remote.WithPlaintext()}}, nil
	}
	if _, err := os.Stat(filepath.Join(dir, certs.CAFile)); errors.Is(err, os.ErrNotExist) {
		if err := certs.Init(dir); err != nil {
			return nil, err
		}
	}
	issue := func(name string, role certs.Role) error {
		if _, err := os.Stat(certs.CertFile(dir, name)); err == nil {
			return nil
		}
		return certs.Issue(dir, name, role, nil)
	}
	for i := 0; i < k; i++ {
		if err := issue(fmt.Sprintf("d%d", i), certs.RoleDevice); err != nil {
			return nil, err
		}
	}
	if err := issue("coordinator", certs.RoleAdmin); err != nil {
		return nil, err
	}
	if err := issue("etcd", certs.RoleServer); err != nil {
		return nil, err
	}
	cfg, err := certs.ClientConfig(certs.InDir(dir, "coordinator"))
	if err != nil {
		return nil, err
	}
	args := func(id string) []string {
		f := certs.InDir(dir, id)
		return []string{"--cert-file", f.Cert, "--key-file", f.Key, "--trusted-ca-file", f.CA}
	}
	return &localTransport{deviceArgs: args, dial: []remote.Option{remote.WithTLS(cfg)}, etcdServer: certs.InDir(dir, "etcd"), admin: cfg}, nil
}
