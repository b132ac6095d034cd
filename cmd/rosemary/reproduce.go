package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/tools/reproduce"
)

func init() {
	register(command{name: "reproduce", summary: "regenerate the Rosemary paper's Figures 9-17 and Table V from our models (simulated, beside the paper's quoted values), and DIR/index.html", run: runReproduce})
}

func runReproduce(args []string) error {
	fs := flag.NewFlagSet("reproduce", flag.ContinueOnError)
	fig := fs.String("fig", "", "only this figure (9..17, or V for Table V); default all")
	dir := fs.String("o", "./out/reproduce", "output directory (each figure's .md, .csv, .svg, .png, and index.html)")
	asJSON := fs.Bool("json", false, "print the rows and geometric means as JSON")
	wl := fs.String("w", "", "comma-separated workloads (default all)")
	maxTiles := fs.Int("max-tiles", 0, "tiles per node at most (0: reproduce's default)")
	parallel := fs.Int("parallel", 0, "compilations and simulations at once (0: GOMAXPROCS)")
	cacheDir := fs.String("cache", "", "keep compiled plans and simulation reports in this directory, so that the next run starts warm")
	serve := fs.String("serve", "", "serve the page while it fills in on this loopback address (e.g. 127.0.0.1:8080); plain HTTP, read-only")
	serveAny := fs.Bool("serve-non-loopback", false, "allow --serve on a non-loopback address (plain HTTP, no authentication: anyone who reaches it reads the page)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	figs := reproduce.Figures
	if *fig != "" {
		f, err := reproduce.FigureByID(*fig)
		if err != nil {
			return err
		}
		figs = []reproduce.Figure{f}
	}
	opt := reproduce.Options{MaxTiles: *maxTiles, Parallel: *parallel}
	if *wl != "" {
		opt.Workloads = strings.Split(*wl, ",")
	}
	if *cacheDir != "" {
		v, err := reproduce.BinaryVersion()
		if err != nil {
			return err
		}
		if opt.Cache, err = reproduce.OpenCache(*cacheDir, v); err != nil {
			return err
		}
	}
	lis, err := pageListener(*serve, *serveAny)
	if err != nil {
		return err
	}
	stopProfile, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()

	live := reproduce.NewLive(commandLine(args), reproduce.BuildCommit(), figs)
	bar := newProgressBar()
	opt.Progress = func(done, total int, what string) {
		live.Progress(done, total)
		bar.show("simulations", int64(done), int64(total))
	}
	served := make(chan error, 1)
	serveCtx, stopServing := context.WithCancel(context.Background())
	defer stopServing()
	if lis != nil {
		go func() { served <- reproduce.Serve(serveCtx, lis, live) }()
		bar.logf("reproduce")("serving the page at http://%s/ (read-only)", lis.Addr())
	}
	r, err := reproduce.NewRunner(opt)
	if err != nil {
		return err
	}
	results, runErr := reproduce.RunAll(r, figs, func(f reproduce.Figure, res *reproduce.Result) error {
		if err := res.Write(*dir); err != nil {
			return err
		}
		return live.Complete(f, res)
	})
	live.Finish(runErr)
	bar.done()
	if err := writePage(live, *dir); err != nil && runErr == nil {
		runErr = err
	}
	st := r.Stats()
	fmt.Fprintf(os.Stderr, "reproduce: %d plans compiled, %d read from the cache; %d simulations run, %d read from the cache; page %s\n",
		st.Compiled, st.PlansLoaded, st.Simulated, st.ReportsLoaded, filepath.Join(*dir, "index.html"))
	if runErr == nil {
		runErr = printResults(figs, results, *dir, *asJSON)
	}
	if lis != nil {
		if err := serveUntilInterrupted(lis, served, stopServing); runErr == nil {
			runErr = err
		}
	}
	return runErr
}

// serveUntilInterrupted keeps serving the page once the run ended, until
// Ctrl-C (then stops it) or the server's own end; it returns the server's
// error.
func serveUntilInterrupted(lis net.Listener, served <-chan error, stopServing func()) error {
	ctx, stop := untilInterrupted()
	defer stop()
	fmt.Fprintf(os.Stderr, "reproduce: run ended; serving the page at http://%s/ until interrupted (Ctrl-C)\n", lis.Addr())
	select {
	case <-ctx.Done():
		stopServing()
		return <-served
	case err := <-served:
		return err
	}
}

// pageListener is the listener of --serve ADDR (nil without one): loopback
// only, unless anyAddr.
func pageListener(addr string, anyAddr bool) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	if !anyAddr {
		if err := certs.CheckLoopback(addr); err != nil {
			return nil, fmt.Errorf("--serve %s: %w (plain HTTP is served on loopback only; --serve-non-loopback overrides)", addr, err)
		}
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if tcp, ok := lis.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() && !anyAddr {
		lis.Close()
		return nil, fmt.Errorf("--serve %s listens on %s: %w", addr, lis.Addr(), certs.ErrNotLoopback)
	}
	return lis, nil
}

// commandLine is how this run was invoked, for the page.
func commandLine(args []string) string {
	parts := []string{"rosemary", "reproduce"}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`") {
			a = strconv.Quote(a)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

func writePage(live *reproduce.Live, dir string) error {
	var b bytes.Buffer
	if err := live.Page().HTML(&b); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "index.html"), b.Bytes(), 0o644)
}

// printResults prints the figures in order: as JSON, or their files and
// summary lines.
func printResults(figs []reproduce.Figure, results []*reproduce.Result, dir string, asJSON bool) error {
	var rows, gms []map[string]any
	for i, res := range results {
		rows = append(rows, res.Records()...)
		gms = append(gms, res.JSONGeoMeans()...)
		if asJSON {
			continue
		}
		fmt.Printf("%s -> %s.{md,csv,svg,png}\n", figs[i].Title, strings.TrimSuffix(dir, "/")+"/"+res.FileBase())
		for _, g := range res.GeoMeans {
			if math.IsNaN(g.Paper) {
				fmt.Printf("  %s: ours %.4g (%s), no paper value\n", g.Name, g.Ours, g.OursFrom)
				continue
			}
			fmt.Printf("  %s: ours %.4g (%s), paper %.4g (quoted), ratio %.3g\n", g.Name, g.Ours, g.OursFrom, g.Paper, g.Ratio)
		}
	}
	if !asJSON {
		return nil
	}
	return printJSON(map[string]any{
		"provenance": reproduce.Provenance,
		"rows":       rows,
		"geomeans":   gms,
	})
}
