package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/cluster/local"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/remote"
)

func init() {
	register(command{name: "cluster", summary: "a local cluster of devices coordinated by etcd: up --devices K | status --etcd ADDR", run: runCluster})
}

func runCluster(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: rosemary cluster up --devices K [--etcd embedded|ADDR] [--dir DIR] [--metrics-addr 127.0.0.1:PORT] | status --etcd ADDR [--json]")
	}
	switch args[0] {
	case "up":
		fs := flag.NewFlagSet("cluster up", flag.ContinueOnError)
		k := fs.Int("devices", 3, "device processes")
		etcd := fs.String("etcd", "embedded", "embedded (an etcd in this process on 127.0.0.1:2379) or an etcd address")
		dir := fs.String("dir", filepath.Join(os.TempDir(), "rosemary-cluster"), "directory of the stores, the certificates (DIR/certs) and the embedded etcd")
		plaintext := fs.Bool("insecure-plaintext", false, "devices serve plaintext on loopback (default: TLS 1.3 with client certificates from DIR/certs)")
		metricsAddr := fs.String("metrics-addr", "", "the coordinator serves Prometheus metrics at http://ADDR/metrics (loopback only; default off)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		certDir := filepath.Join(*dir, "certs")
		deviceArgs, dial, err := clusterTransport(certDir, *k, *plaintext)
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
		l, err := local.Start(ctx, *dir, *k, endpoint, device, deviceArgs)
		if err != nil {
			return err
		}
		defer l.Stop()
		fmt.Printf("etcd %s\n", l.Endpoint)
		for _, d := range l.Devices {
			fmt.Printf("device %s %s (store %s)\n", d.ID, d.Addr, d.Store)
		}
		if *plaintext {
			fmt.Printf("up (PLAINTEXT): use --cluster %s --insecure-plaintext with `rosemary db`; Ctrl-C stops the cluster\n", l.Endpoint)
		} else {
			fmt.Printf("up: certificates in %s (rosemary certs issue --dir %s --name YOU makes yours);\n"+
				"    use --cluster %s --cert %s/YOU.crt --key %s/YOU.key --cacert %s/ca.crt with `rosemary db`; Ctrl-C stops the cluster\n",
				certDir, certDir, l.Endpoint, certDir, certDir, certDir)
		}
		// The cluster's coordinator: repair and rebalance as devices come and go.
		keys, err := client.LoadKeys(filepath.Join(*dir, "coordinator-keys"))
		if errors.Is(err, client.ErrNoKeys) {
			keys, err = client.NewKeys(filepath.Join(*dir, "coordinator-keys"))
		}
		if err != nil {
			return err
		}
		c, err := cluster.Open(ctx, []string{l.Endpoint}, keys, dial...)
		if err != nil {
			return err
		}
		defer c.Close()
		stopMetrics, err := serveMetrics(*metricsAddr, c.RegisterMetrics)
		if err != nil {
			return err
		}
		defer stopMetrics()
		return c.Maintain(ctx, func(db string, copied int, err error) {
			switch {
			case err != nil:
				fmt.Fprintf(os.Stderr, "cluster: repair %s: %v\n", db, err)
			case copied > 0:
				fmt.Printf("repaired %s: %d shard replicas copied device to device\n", db, copied)
			}
		})
	case "status":
		fs := flag.NewFlagSet("cluster status", flag.ContinueOnError)
		etcd := fs.String("etcd", "127.0.0.1:2379", "etcd address(es), comma-separated")
		asJSON := fs.Bool("json", false, "print JSON")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		cli, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(*etcd, ","), DialTimeout: 5 * time.Second})
		if err != nil {
			return err
		}
		defer cli.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
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
			fmt.Printf("database %s: %s, %d records of %d B, generation %d, %d shards × %d replicas\n", m.Name, m.Kind, m.Records, m.RecordSize,
				m.Generation, len(m.Shards), m.Replicas)
			for _, sh := range m.Shards {
				fmt.Printf("  shard %d: %d records on %v\n", sh.ID, sh.Records, sh.Replicas)
			}
		}
		return nil
	}
	return fmt.Errorf("cluster: unknown command %q (up, status)", args[0])
}

// clusterTransport makes a local cluster's TLS material in dir (a CA, a
// device certificate per device, an admin certificate for the
// coordinator; what exists is kept) and returns each device's serve flags
// and the coordinator's dial options; or plaintext on loopback.
func clusterTransport(dir string, k int, plaintext bool) (func(id string) []string, []remote.Option, error) {
	if plaintext {
		return func(string) []string { return []string{"--insecure-plaintext"} }, []remote.Option{remote.WithPlaintext()}, nil
	}
	if _, err := os.Stat(filepath.Join(dir, certs.CAFile)); errors.Is(err, os.ErrNotExist) {
		if err := certs.Init(dir); err != nil {
			return nil, nil, err
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
			return nil, nil, err
		}
	}
	if err := issue("coordinator", certs.RoleAdmin); err != nil {
		return nil, nil, err
	}
	cfg, err := certs.ClientConfig(certs.InDir(dir, "coordinator"))
	if err != nil {
		return nil, nil, err
	}
	args := func(id string) []string {
		f := certs.InDir(dir, id)
		return []string{"--cert-file", f.Cert, "--key-file", f.Key, "--trusted-ca-file", f.CA}
	}
	return args, []remote.Option{remote.WithTLS(cfg)}, nil
}
