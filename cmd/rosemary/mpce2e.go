package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/rosemary-fhe/rosemary/optiprime/e2e"
	"github.com/rosemary-fhe/rosemary/optiprime/graph"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/link"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// e2eRun is one end-to-end session as reported by `mpc bench --e2e`.
type e2eRun struct {
	*e2e.Report
	Link      string  `json:"link"`
	Shaping   string  `json:"shaping"`
	RTTms     float64 `json:"rtt_ms,omitempty"`
	RTTAddedS float64 `json:"rtt_added_s,omitempty"` // rounds × RTT, added (not shaped)
	WANS      float64 `json:"wan_s,omitempty"`       // wall_s (rate-shaped) + rtt_added_s
	Seed      uint64  `json:"seed"`
	// InjectedRTTms is the RTT injected in the transport (--rtt): inside
	// wall_s, measured.
	InjectedRTTms float64 `json:"injected_rtt_ms,omitempty"`
	LoadBefore    string  `json:"load_before"`
	LoadAfter     string  `json:"load_after"`
	CPUs          int     `json:"cpus"`
	Command       string  `json:"command"`
	// Sweep is this session projected onto the sweep's links (--sweep),
	// printed in the sweep's own JSON line (sweepJSON) when every session
	// has run.
	Sweep []sweepPoint `json:"-"`
}

// loadAvg returns /proc/loadavg's first three fields (the machine is
// shared: figures need their load beside them).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// mpcBenchE2E runs whole networks between two processes: this one (the
// client, holding the seeded image) and a child `rosemary mpc e2e-serve`
// (the server, holding the seeded weights), for each protocol in turn.
func mpcBenchE2E(args []string) error {
	o, err := parseE2EBench(args)
	if err != nil {
		return err
	}
	// Interrupted, the child is killed and the namespace removed.
	ctx, cancel := untilInterrupted()
	defer cancel()
	ln, closeLink, err := e2eBenchLink(ctx, o)
	if err != nil {
		return err
	}
	defer closeLink()
	logf := func(f string, a ...any) {
		fmt.Fprintf(os.Stderr, "[%s] "+f+"\n", append([]any{time.Now().UTC().Format("15:04:05")}, a...)...)
	}
	logf("building %s (seed %d) and its plaintext reference", o.spec.Name, o.seed)
	n, img, err := graph.Build(o.spec, o.seed, graph.Options{LogT: o.logT})
	if err != nil {
		return err
	}
	want, err := n.Reference(img)
	if err != nil {
		return err
	}
	b := &e2eBench{o: o, ln: ln, ctx: ctx, logf: logf, pub: n.Public(), img: img, want: want}
	runs, err := b.runAll()
	if err != nil {
		return err
	}
	if !o.asJSON {
		printE2E(runs, o.perLayer)
		printSweep(runs)
	}
	for _, r := range runs {
		if !r.Correct {
			return fmt.Errorf("%s %s: the private output differs from the plaintext reference in %d of %d entries", r.Net, r.Protocol, r.Mismatches, r.Outputs)
		}
	}
	return nil
}

// e2eBenchOpts are mpc bench --e2e's flags.
type e2eBenchOpts struct {
	args                             []string // as given (holding --e2e), for the runs' command
	spec                             graph.Spec
	protocols                        []linear.Protocol
	linkName                         string
	seed                             uint64
	logN, logT                       int
	perLayer, asJSON, verbose, ahead bool
	weightsDir                       string // --prepare-weights to weight files there
	sweep, plaintext                 bool
	rtt                              time.Duration
	bandwidth                        float64 // MB/s; 0: --link's
}

// parseE2EBench parses and checks mpc bench --e2e's flags.
func parseE2EBench(args []string) (e2eBenchOpts, error) {
	o := e2eBenchOpts{args: args}
	fs := flag.NewFlagSet("mpc bench --e2e", flag.ContinueOnError)
	_ = fs.Bool("e2e", true, "run whole networks end to end between two processes")
	netName := fs.String("net", "resnet18", "network: resnet18, resnet50, resnet-mini, resnet-mini-bottleneck")
	protos := fs.String("protocol", "cheetah,optiencode,optiencode-bsgs", "comma-separated linear protocols (one session each): cheetah, optiencode, optiencode-bsgs, or optiprime (each layer the layout of least modelled cost)")
	fs.StringVar(&o.linkName, "link", "lan", "lan (loopback TCP) or wan (server in a network namespace behind a tbf-shaped veth at the WAN rate; RTT added as rounds × RTT)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the weights and the input image")
	fs.IntVar(&o.logN, "logn", e2e.DefaultLogN, "log2 of the HE ring degree")
	fs.IntVar(&o.logT, "logt", 37, "ℓ: shares mod 2^ℓ")
	fs.BoolVar(&o.perLayer, "layers", false, "also print the per-operation table (always in --json)")
	fs.BoolVar(&o.asJSON, "json", false, "print each session as one JSON object per line, as it completes")
	fs.BoolVar(&o.verbose, "v", false, "log every operation to stderr as it completes")
	fs.BoolVar(&o.ahead, "prepare-weights", false, "each protocol gets its own server, which encodes every layer's weight plaintexts before its session and holds them (input-independent, offline; reported as server_prepared_ahead_cpu_s; held in memory, ≈ 10 GB for ResNet-18 at N = 8192, unless --weights-dir); default: one server, each layer's weights encoded during the session (server prep time)")
	fs.StringVar(&o.weightsDir, "weights-dir", "", "with --prepare-weights: the server writes the encoded weights to weight files in this directory (one per layer; kept and reused by later runs with the same weights) and each session reads them one layer ahead (memory: two layers, ≤ 1.6 GB for ResNet-18) instead of holding them all")
	fs.DurationVar(&o.rtt, "rtt", 0, "inject this round-trip time in the transport: every frame of both processes delayed RTT/2 (measured, not added; for kernels without sch_netem); --link lan or --bandwidth")
	fs.Float64Var(&o.bandwidth, "bandwidth", 0, "MB/s: shape both directions with tbf at this rate (the server in a network namespace behind a veth; needs tc and root); 0: --link's")
	fs.BoolVar(&o.sweep, "sweep", false, "also project each LAN session onto 10 MB/s–1 GB/s × 1–300 ms RTT (measured compute + bytes/bandwidth + flights × RTT/2; projected, not shaped) and print each protocol's ratio to the first protocol's (put cheetah first); --json: each session's \"sweep\", printed when all have run")
	fs.BoolVar(&o.plaintext, "insecure-plaintext", false, "the sessions without TLS (--link lan only: loopback; default: mutual TLS with certificates made for the run)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	var err error
	if o.spec, err = graph.SpecByName(*netName); err != nil {
		return o, err
	}
	if o.protocols, err = parseProtocols(*protos); err != nil {
		return o, err
	}
	if o.weightsDir != "" && !o.ahead {
		return o, fmt.Errorf("--weights-dir needs --prepare-weights")
	}
	if o.sweep && (o.linkName != "lan" || o.rtt > 0 || o.bandwidth > 0) {
		return o, fmt.Errorf("--sweep projects LAN sessions; drop --link, --rtt and --bandwidth")
	}
	if o.rtt < 0 || o.bandwidth < 0 || (o.rtt > 0 && o.linkName == "wan") {
		return o, fmt.Errorf("--rtt and --bandwidth: nonnegative, and --rtt not with --link wan (which adds its RTT)")
	}
	if o.linkName != "lan" && o.linkName != "wan" {
		return o, fmt.Errorf("--link %q: want lan or wan", o.linkName)
	}
	return o, nil
}

// e2eBenchNet is where the server runs and how its link is shaped.
type e2eBenchNet struct {
	prefix  []string // command prefix entering the server's namespace
	listen  string
	shaping string
	lk      link.Link
}

// e2eBenchLink sets up the link the options ask for (a shaped network
// namespace for --link wan or --bandwidth); the returned function removes
// it.
func e2eBenchLink(ctx context.Context, o e2eBenchOpts) (e2eBenchNet, func(), error) {
	ln := e2eBenchNet{listen: "127.0.0.1:0", shaping: "none: loopback TCP (LAN)"}
	closeLink := func() {}
	shape := func(lk link.Link, what string) error {
		ns, err := link.NewShapedNamespace(ctx, lk.Bandwidth)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		closeLink = func() { ns.Close() }
		ln.lk, ln.prefix, ln.listen, ln.shaping = lk, ns.Exec(), ns.PeerAddr+":0", ns.Shaping
		return nil
	}
	switch {
	case o.linkName == "wan":
		if err := shape(link.WAN, "WAN shaping"); err != nil {
			return ln, closeLink, err
		}
	case o.bandwidth > 0:
		if err := shape(link.Link{Name: "shaped", Bandwidth: o.bandwidth * 1e6}, "--bandwidth shaping"); err != nil {
			return ln, closeLink, err
		}
	}
	if o.rtt > 0 {
		ln.shaping += fmt.Sprintf("; RTT %v injected in the transport (every frame of both processes delayed %v: transport.WithDelay)", o.rtt, o.rtt/2)
	}
	return ln, closeLink, nil
}

// e2eBench runs the sessions of one mpc bench --e2e invocation.
type e2eBench struct {
	o    e2eBenchOpts
	ln   e2eBenchNet
	ctx  context.Context
	logf func(string, ...any)
	pub  *graph.Net
	img  []int64
	want []int64
}

// start starts a server (prepare: the protocol whose weights it encodes
// ahead, or "") for the given number of sessions.
func (b *e2eBench) start(prepare string, sessions int) (*e2eServer, string, error) {
	o := b.o
	srv, err := startE2EServer(b.ctx, b.ln.prefix, b.ln.listen, o.spec.Name, o.seed, o.logT, sessions, o.plaintext, prepare, o.weightsDir, o.logN, o.rtt/2)
	if err != nil {
		return nil, "", err
	}
	addr, err := srv.addr()
	if err != nil {
		srv.stop()
		return nil, "", err
	}
	return srv, addr, nil
}

// runAll runs one session per protocol. Without --prepare-weights one
// server serves every session; with it, each protocol has its own server,
// which encodes that protocol's weights before it listens (one protocol's
// weights in memory at a time).
func (b *e2eBench) runAll() ([]e2eRun, error) {
	o := b.o
	var shared *e2eServer
	var sharedAddr string
	if !o.ahead {
		var err error
		if shared, sharedAddr, err = b.start("", len(o.protocols)); err != nil {
			return nil, err
		}
		defer shared.stop()
	}
	var runs []e2eRun
	for _, p := range o.protocols {
		run, err := b.runOne(p, shared, sharedAddr)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
		if o.asJSON {
			if err := printJSONLine(run); err != nil {
				return nil, err
			}
		}
	}
	if o.sweep {
		// Ratios need every session: the sweep is one more JSON line,
		// after the sessions' (each printed as it completed).
		if err := addSweep(runs); err != nil {
			return nil, err
		}
		if o.asJSON {
			if err := printJSONLine(sweepJSON(runs)); err != nil {
				return nil, err
			}
		}
	}
	if shared != nil {
		if err := shared.wait(); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
	}
	return runs, nil
}

// runOne runs protocol p's session on the shared server, or on its own
// server (--prepare-weights).
func (b *e2eBench) runOne(p linear.Protocol, srv *e2eServer, addr string) (e2eRun, error) {
	o, name := b.o, b.o.spec.Name
	if o.ahead {
		b.logf("%s %s: the server encodes the weights ahead", name, p)
		var err error
		if srv, addr, err = b.start(p.String(), 1); err != nil {
			return e2eRun{}, err
		}
	}
	linkLabel := o.linkName
	if o.bandwidth > 0 {
		linkLabel = fmt.Sprintf("%gMB/s", o.bandwidth)
	}
	run := e2eRun{Link: linkLabel, Shaping: b.ln.shaping, Seed: o.seed, LoadBefore: loadAvg(), CPUs: runtime.GOMAXPROCS(0), InjectedRTTms: o.rtt.Seconds() * 1e3,
		Command: "rosemary mpc bench " + strings.Join(o.args, " ")} // args hold --e2e
	over := linkLabel
	if o.rtt > 0 {
		over += fmt.Sprintf(" + %v RTT (injected)", o.rtt)
	}
	b.logf("%s %s over %s: session starts (load %s)", name, p, over, run.LoadBefore)
	rep, err := e2eSession(b.ctx, srv, addr, b.pub, b.img, b.want, e2e.Config{Protocol: p, LogN: o.logN}, o.verbose, b.logf)
	if o.ahead {
		werr := srv.wait()
		srv.stop()
		if err == nil && werr != nil {
			err = fmt.Errorf("server: %w", werr)
		}
	}
	if err != nil {
		return run, fmt.Errorf("%s %s: %w", name, p, err)
	}
	run.finish(rep, b.ln.lk)
	b.logf("%s %s: correct=%v (%d/%d outputs differ), %.3f GB, %d rounds, %.1f s wall (linear %.1f, nonlinear %.1f), CPU server %.1f s client %.1f s",
		name, p, rep.Correct, rep.Mismatches, rep.Outputs, float64(rep.TotalBytes)/1e9, rep.Rounds, rep.WallS, rep.LinearS, rep.NonlinearS, rep.ServerCPUS, rep.ClientCPUS)
	return run, nil
}

func parseProtocols(list string) ([]linear.Protocol, error) {
	var ps []linear.Protocol
	for _, name := range splitList(list) {
		p, err := linear.ParseProtocol(name)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		return nil, errors.New("no protocol")
	}
	return ps, nil
}

// finish records a session's report, the load after it and, over a WAN
// link, the RTT it adds.
func (run *e2eRun) finish(rep *e2e.Report, lk link.Link) {
	run.Report = rep
	run.LoadAfter = loadAvg()
	if lk.Name != "" {
		run.RTTms = lk.RTT.Seconds() * 1e3
		run.RTTAddedS = float64(rep.Rounds) * lk.RTT.Seconds()
		run.WANS = rep.WallS + run.RTTAddedS
	}
}

// e2eSession runs one session against the server at addr and checks its
// output against want.
func e2eSession(ctx context.Context, srv *e2eServer, addr string, pub *graph.Net, img, want []int64, cfg e2e.Config,
	verbose bool, logf func(string, ...any)) (*e2e.Report, error) {
	dctx, dcancel := context.WithTimeout(ctx, 2*time.Minute)
	conn, err := srv.dial(dctx, addr)
	dcancel()
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if verbose {
		cfg.Progress = func(i int, s e2e.OpStats) {
			logf("  %3d/%d %-26s %-8s %8.2f s %10.1f MB %5d rounds", i+1, len(pub.Ops), s.Op, s.Kind, s.WallS, float64(s.BytesC2S+s.BytesS2C)/1e6, s.Rounds)
		}
	}
	out, rep, err := e2e.Infer(conn, pub, img, cfg)
	if err != nil {
		return nil, err
	}
	rep.Check(out, want)
	return rep, nil
}

func printE2E(runs []e2eRun, perLayer bool) {
	for _, r := range runs {
		if !perLayer {
			continue
		}
		fmt.Printf("%s %s per operation (wall = client clock):\n", r.Net, r.Protocol)
		fmt.Printf("  %-26s %-8s %9s %9s %9s %9s %12s %12s %7s\n", "op", "kind", "wall_s", "srv_cpu", "cli_cpu", "prep_s", "bytes_c2s", "bytes_s2c", "rounds")
		for _, l := range r.Layers {
			fmt.Printf("  %-26s %-8s %9.3f %9.3f %9.3f %9.3f %12d %12d %7d\n", l.Op, l.Kind, l.WallS, l.ServerCPUS, l.ClientCPUS, l.PrepS, l.BytesC2S, l.BytesS2C, l.Rounds)
		}
	}
	for _, r := range runs {
		printProfile(r)
	}
	fmt.Printf("%-10s %-16s %-4s %7s %9s %9s %9s %9s %9s %9s %8s %8s %8s %9s %s\n",
		"net", "protocol", "link", "correct", "wall_s", "linear_s", "lin_prep", "nonlin_s", "srv_cpu", "cli_cpu", "GB", "lin_GB", "rounds", "wan_s", "load before/after")
	for _, r := range runs {
		wan := "-"
		if r.WANS > 0 {
			wan = fmt.Sprintf("%.1f", r.WANS)
		}
		fmt.Printf("%-10s %-16s %-4s %7v %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %8.3f %8.3f %8d %9s %s / %s\n",
			r.Net, r.Protocol, r.Link, r.Correct, r.WallS, r.LinearS, r.Linear.PrepS, r.NonlinearS, r.ServerCPUS, r.ClientCPUS,
			float64(r.TotalBytes)/1e9, float64(r.Linear.Bytes)/1e9, r.Rounds, wan, r.LoadBefore, r.LoadAfter)
	}
	if len(runs) > 0 {
		r := runs[0]
		fmt.Printf("link: %s", r.Shaping)
		if r.RTTms > 0 {
			fmt.Printf("; wan_s = wall_s (rate-shaped) + rounds × %.0f ms RTT (added, not shaped)", r.RTTms)
		}
		fmt.Printf("; wall = client clock, setup (keys, base OTs) included; lin_prep = server weight encoding (input-independent), inside linear_s; CPU = getrusage of each process; %d CPUs\n", r.CPUs)
	}
}

// printProfile prints where a session's time went, per kind and party
// (e2e.Breakdown): wall, CPU and the wall spent receiving from the peer.
func printProfile(r e2eRun) {
	p := r.Profile
	fmt.Printf("%s %s: time by kind (s; wait = receiving from the peer, inside wall)\n", r.Net, r.Protocol)
	fmt.Printf("  %-28s %9s %9s %9s %7s | %9s %9s %9s %7s\n", "kind", "srv_wall", "srv_cpu", "srv_wait", "calls", "cli_wall", "cli_cpu", "cli_wait", "calls")
	var kinds []string
	seen := map[string]bool{}
	for _, pb := range []e2e.PartyBreakdown{p.Server, p.Client} {
		for _, k := range pb.Kinds {
			if !seen[k.Kind] {
				seen[k.Kind] = true
				kinds = append(kinds, k.Kind)
			}
		}
	}
	for _, k := range kinds {
		s, c := p.Server.Kind(k), p.Client.Kind(k)
		fmt.Printf("  %-28s %9.2f %9.2f %9.2f %7d | %9.2f %9.2f %9.2f %7d\n", k, s.WallS, s.CPUS, s.WaitS, s.Calls, c.WallS, c.CPUS, c.WaitS, c.Calls)
	}
	fmt.Printf("  %-28s %9.2f %9.2f %9.2f %7s | %9.2f %9.2f %9.2f\n", "total", p.Server.WallS, p.Server.CPUS, p.Server.WaitS, "", p.Client.WallS, p.Client.CPUS, p.Client.WaitS)
}

// mpcE2EServe is the server process of `mpc bench --e2e`: it builds the
// seeded network, prints "LISTEN addr" and serves the sessions; a failed
// session fails it.
func mpcE2EServe(args []string) error {
	fs := flag.NewFlagSet("mpc e2e-serve", flag.ContinueOnError)
	netName := fs.String("net", "resnet18", "network")
	seed := fs.Uint64("seed", 1, "seed of the weights")
	logT := fs.Int("logt", 37, "ℓ")
	listen := fs.String("listen", "127.0.0.1:0", "TCP address")
	sessions := fs.Int("sessions", 1, "sessions to serve")
	prepare := fs.String("prepare", "", "comma-separated protocols whose weights to encode before listening (offline)")
	logN := fs.Int("logn", e2e.DefaultLogN, "log2 of the HE ring degree the prepared weights are for")
	weightsDir := fs.String("weights-dir", "", "with --prepare: write the encoded weights to weight files in this directory (reusing those already there) and read them one layer ahead in each session, instead of holding them")
	delay := fs.Duration("delay", 0, "delay every frame sent by this one-way time (transport.WithDelay; mpc bench --e2e --rtt)")
	sf := addMPCServerFlags(fs, "mpc e2e-serve")
	if err := fs.Parse(args); err != nil {
		return err
	}
	srv, err := sf.server(*listen)
	if err != nil {
		return err
	}
	if *delay > 0 {
		srv.Options = append(srv.Options, transport.WithDelay(*delay))
	}
	spec, err := graph.SpecByName(*netName)
	if err != nil {
		return err
	}
	n, _, err := graph.Build(spec, *seed, graph.Options{LogT: *logT})
	if err != nil {
		return err
	}
	server := e2e.NewServer(n)
	if *prepare != "" {
		ps, err := parseProtocols(*prepare)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if *weightsDir != "" {
				cpu, err := server.PrepareDir(p, *logN, *weightsDir)
				if err != nil {
					return err
				}
				fmt.Fprintf(os.Stderr, "[e2e-serve] %s: weights of %s in %s (encoded ahead, offline; %.1f CPU-s this run)\n", spec.Name, p, *weightsDir, cpu)
				continue
			}
			cpu, err := server.Prepare(p, *logN)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "[e2e-serve] %s: weights of %s encoded ahead (offline) in %.1f CPU-s\n", spec.Name, p, cpu)
		}
	}
	if *prepare != "" && *weightsDir == "" {
		// The encoded weights are a large, pointer-free live heap (≈ 10 GB
		// for ResNet-18): the default GOGC=100 would let the heap grow to
		// twice that before collecting the sessions' garbage (a server was
		// OOM-killed at 23 GB here). Marking them costs nothing, so collect
		// at +25%.
		debug.SetGCPercent(25)
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	defer l.Close()
	fmt.Printf("LISTEN %s\n", l.Addr())
	ctx, stop := untilInterrupted()
	defer stop()
	var mu sync.Mutex
	var failed []error
	if err := srv.Serve(ctx, l, *sessions, func(i int, conn *transport.Conn) error {
		err := server.Serve(conn)
		if err != nil {
			mu.Lock()
			failed = append(failed, fmt.Errorf("session %d: %w", i, err))
			mu.Unlock()
		}
		return err
	}); err != nil {
		return err
	}
	return errors.Join(failed...)
}

func printJSONLine(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Printf("%s\n", b)
	return err
}
