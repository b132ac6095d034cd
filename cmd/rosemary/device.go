package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
)

func init() {
	register(command{name: "device", summary: "in-storage device daemon: serve --store DIR --listen ADDR", run: runDevice})
}

func runDevice(args []string) (err error) {
	if len(args) == 0 || args[0] != "serve" {
		return fmt.Errorf("device: usage: rosemary device serve --store DIR (--cert-file F --key-file F --trusted-ca-file F | --insecure-plaintext) [--listen 127.0.0.1:7420] [--grace 30s] [--log-level info|debug|warn] [--log-json] [--metrics-listen 127.0.0.1:PORT] [--scrub-interval 24h]")
	}
	fs := flag.NewFlagSet("device serve", flag.ContinueOnError)
	dir := fs.String("store", "", "object store directory (created if absent)")
	listen := fs.String("listen", "127.0.0.1:7420", "address to listen on")
	channels := fs.Int("channels", 0, "store channels of a new store (0: an existing store's own, else 4)")
	page := fs.Int("page", 0, "store page size in bytes of a new store (0: an existing store's own, else 4096)")
	resident := fs.Int64("resident-mb", 1024, "device DRAM for uploads, results and a stream run's values (MiB)")
	memLimit := fs.Int64("memory-limit-mb", 256, "soft limit of the daemon's Go heap (MiB; 0: none): the garbage collector works harder near it instead of letting the heap double")
	grace := fs.Duration("grace", 30*time.Second, "on SIGTERM/SIGINT, how long running RPCs may finish before they are stopped")
	level := fs.String("log-level", "info", "log level: debug (one line per RPC), info, warn")
	logJSON := fs.Bool("log-json", false, "log JSON lines to stderr (default: text)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the daemon's life to this file")
	etcd := fs.String("etcd", "", "join the cluster at these etcd endpoints (comma-separated): register under a lease kept alive; "+
		"etcd is reached with the device's certificate (TLS), or in plaintext on loopback with --insecure-plaintext")
	id := fs.String("id", "", "device id in the cluster (default: the certificate's name; with --insecure-plaintext the listen address); "+
		"etcd lets a device register only under its certificate's name")
	ttl := fs.Int64("lease-ttl", 5, "cluster lease in seconds: a device that dies leaves after it")
	advertise := fs.String("advertise", "", "address clients reach this device at (default: the listen address)")
	tf := addServerTLSFlags(fs, "device serve", "rosemary certs issue --role device")
	clientCertAuth := fs.Bool("client-cert-auth", true, "require a client certificate signed by --trusted-ca-file")
	metricsAddr := fs.String("metrics-listen", "", "serve Prometheus metrics at http://ADDR/metrics (loopback only: plaintext, unauthenticated; default off)")
	fs.StringVar(metricsAddr, "metrics-addr", "", "the same as --metrics-listen (its earlier name)")
	intakeMB := fs.Int64("intake-mb", device.DefaultIntake.Bytes>>20, "request bytes the daemon decodes at once, over all callers (MiB; each weighed 3× its wire size; past it a request waits a second, then is refused as busy)")
	bulkCalls := fs.Int("bulk-calls-per-caller", device.DefaultBulkCallsPerCaller, "calls that may carry large messages (Put, Send, RunStream, ProgSet, SetStream) one identity may have going at once, counted before their messages are read")
	maxStreams := fs.Uint("max-streams", device.DefaultMaxStreams, "calls one connection may have going at once")
	callTimeout := fs.Duration("call-timeout", device.DefaultDeadlines.Call, "the server's deadline for a call")
	longTimeout := fs.Duration("long-call-timeout", device.DefaultDeadlines.Long, "the server's deadline for a call that waits for a run or a job, or copies a database (RunStream, Recv, CopyFrom)")
	scrub := fs.Duration("scrub-interval", 24*time.Hour, "read every stored page, verifying its CRC, this often; quarantine (delete) a corrupt object for the cluster to copy back from a healthy replica (0: never)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	transport, peers, etcdTLS, err := daemonTransport(tf, *listen, *clientCertAuth)
	if err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("device serve: --store is required")
	}
	log, err := daemonLogger(*level, *logJSON)
	if err != nil {
		return err
	}
	st, err := openStore(*dir, *channels, *page)
	if err != nil {
		return err
	}
	// Closed after the server has stopped (Serve returns only then).
	defer func() { err = errors.Join(err, closeStore(st, *dir, log)) }()
	stopProfile, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	if *memLimit > 0 {
		debug.SetMemoryLimit(*memLimit << 20)
	}
	d, err := newDaemonDevice(st, *resident<<20, peers)
	if err != nil {
		return err
	}
	stopMetrics, err := serveMetrics(*metricsAddr, d.RegisterMetrics)
	if err != nil {
		return fmt.Errorf("device serve: %w", err)
	}
	defer stopMetrics()
	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("device serve: %w", err)
	}
	// The address line lets a parent process find an ephemeral port.
	fmt.Fprintf(os.Stdout, "listening %s\n", lis.Addr())
	// The first SIGTERM or SIGINT starts a graceful shutdown; a second one
	// gets the default handling (the process ends at once).
	ctx, stop := untilInterrupted()
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	if *scrub > 0 {
		go d.ScrubEvery(ctx, *scrub, log)
	}
	if *etcd != "" {
		ec := cluster.Etcd{Endpoints: strings.Split(*etcd, ","), TLS: etcdTLS}
		leave, err := joinCluster(ctx, d, ec, *id, cmp.Or(*advertise, lis.Addr().String()), lis.Addr().String(), *dir, *ttl, log)
		if err != nil {
			return err
		}
		defer leave()
	}
	intake := device.DefaultIntake
	intake.Bytes = *intakeMB << 20
	return device.Serve(ctx, d, lis, append(transport, device.WithLogger(log), device.WithGrace(*grace), device.WithIntake(intake),
		device.WithBulkCallsPerCaller(*bulkCalls), device.WithMaxStreams(uint32(min(*maxStreams, 1<<20))),
		device.WithDeadlines(device.Deadlines{Call: *callTimeout, Long: *longTimeout}))...)
}

// deviceID is the id a device registers under: with TLS its certificate's
// name (etcd's RBAC lets it write only that key, so another id is refused
// here, before etcd refuses it), in plaintext the given one or listen.
func deviceID(ec cluster.Etcd, given, listen string) (string, error) {
	if ec.TLS == nil {
		return cmp.Or(given, listen), nil
	}
	me, err := ec.Identity()
	if err != nil {
		return "", err
	}
	if me.Role != certs.RoleDevice {
		return "", fmt.Errorf("device serve: --etcd with the certificate of %s: want a device certificate", me)
	}
	if given != "" && given != me.Name {
		return "", fmt.Errorf("device serve: --id %q is not the certificate's name %q (a device registers in etcd under its own name only)", given, me.Name)
	}
	return me.Name, nil
}

// daemonLogger is the daemon's logger at level (debug, info, warn), text
// or JSON lines on stderr.
func daemonLogger(level string, asJSON bool) (*slog.Logger, error) {
	var lv slog.Level
	switch level {
	case "debug":
		lv = slog.LevelDebug
	case "info":
		lv = slog.LevelInfo
	case "warn":
		lv = slog.LevelWarn
	default:
		return nil, fmt.Errorf("device serve: --log-level %q (want debug, info or warn)", level)
	}
	hopts := &slog.HandlerOptions{Level: lv}
	var h slog.Handler = slog.NewTextHandler(os.Stderr, hopts)
	if asJSON {
		h = slog.NewJSONHandler(os.Stderr, hopts)
	}
	return slog.New(h), nil
}

// joinCluster registers device d in the cluster at ec under a lease kept
// alive (etcd away at the start is waited for) and lets it copy only from
// the cluster's registered devices; leave undoes both.
func joinCluster(ctx context.Context, d *device.Device, ec cluster.Etcd, id, addr, listen, dir string, ttl int64, log *slog.Logger) (leave func(), err error) {
	name, err := deviceID(ec, id, listen)
	if err != nil {
		return nil, err
	}
	quit, err := cluster.JoinRetrying(ctx, ec, name, addr, dir, ttl, 10*time.Second, func(err error) {
		log.Warn("cannot join the cluster yet; trying again", "etcd", ec.Endpoints, "err", err)
	})
	if err != nil {
		return nil, err
	}
	check, stopCheck, err := cluster.SourceCheck(ec)
	if err != nil {
		quit()
		return nil, err
	}
	d.CheckSourcesWith(check)
	log.Info("joined the cluster", "etcd", ec.Endpoints, "id", name)
	return func() { stopCheck(); quit() }, nil
}

// daemonTransport is how the daemon serves (TLS with the flags'
// certificates, or plaintext), dials its peers (the same certificate, and
// only devices of the deployment as copy sources) and reaches etcd (nil:
// plaintext).
func daemonTransport(tf *serverTLSFlags, listen string, clientCertAuth bool) ([]device.Option, []remote.Option, *tls.Config, error) {
	srv, err := tf.config(listen, clientCertAuth)
	if err != nil || srv == nil {
		return []device.Option{device.WithPlaintext()}, []remote.Option{remote.WithPlaintext()}, nil, err
	}
	cli, err := certs.ClientConfig(tf.files)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("device serve: %w", err)
	}
	return []device.Option{device.WithTLS(srv)}, []remote.Option{remote.WithTLS(certs.RequirePeerRole(cli, certs.RoleDevice))}, cli, nil
}

// openStore opens the store in dir; channels and page (0: the store's own,
// or the defaults for a new one) lay out a new store.
func openStore(dir string, channels, page int) (*store.Store, error) {
	lay := layout.Layout{Channels: channels, PageSize: page}
	if lay != (layout.Layout{}) {
		lay.Channels = cmp.Or(lay.Channels, store.DefaultLayout.Channels)
		lay.PageSize = cmp.Or(lay.PageSize, store.DefaultLayout.PageSize)
	}
	return store.Open(dir, lay)
}

// closeStore closes the daemon's store and logs how it went.
func closeStore(st *store.Store, dir string, log *slog.Logger) error {
	if err := st.Close(); err != nil {
		log.Error("close store", "error", err)
		return err
	}
	log.Info("store closed", "dir", dir)
	return nil
}

// newDaemonDevice is the device over st with resident bytes of DRAM,
// dialling its peers with peers.
func newDaemonDevice(st *store.Store, resident int64, peers []remote.Option) (*device.Device, error) {
	lim := device.DefaultLimits()
	lim.MaxResidentBytes = resident
	d, err := device.New(st, lim)
	if err != nil {
		return nil, err
	}
	d.DialPeersWith(peers...)
	return d, nil
}
