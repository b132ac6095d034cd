package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/rosemary-fhe/rosemary/optiprime/infer"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/model"
	"github.com/rosemary-fhe/rosemary/optiprime/nets"
	"github.com/rosemary-fhe/rosemary/tools/bench/mpcbench"
)

func init() {
	register(command{name: "mpc", summary: "OptiPrime HE-MPC private inference: train|serve|infer|bench", run: runMPC})
}

func runMPC(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: rosemary mpc train|serve|infer|bench|fpga [flags]")
	}
	switch args[0] {
	case "train":
		return mpcTrain(args[1:])
	case "serve":
		return mpcServe(args[1:])
	case "infer":
		return mpcInfer(args[1:])
	case "bench":
		for _, a := range args[1:] {
			if a == "--e2e" || a == "-e2e" || a == "--e2e=true" {
				return mpcBenchE2E(args[1:])
			}
		}
		return mpcBench(args[1:])
	case "e2e-serve":
		return mpcE2EServe(args[1:])
	case "fpga":
		return mpcFPGA(args[1:])
	default:
		return fmt.Errorf("unknown mpc subcommand %q (train|serve|infer|bench|fpga)", args[0])
	}
}

func mpcTrain(args []string) error {
	fs := flag.NewFlagSet("mpc train", flag.ContinueOnError)
	out := fs.String("out", filepath.Join("hempc", "model", model.DefaultModelFile), "output model file")
	subset := fs.String("subset", "", "also write the first --subset-n test images as IDX files into this directory")
	subsetN := fs.Int("subset-n", 100, "number of test images for --subset")
	data := fs.String("mnist", "", "directory with the MNIST .gz IDX files (default: the GoMNIST module's data/)")
	epochs := fs.Int("epochs", model.DefaultTrainOptions.Epochs, "training epochs")
	seed := fs.Uint64("seed", model.DefaultTrainOptions.Seed, "initialization and shuffling seed")
	wbits := fs.Int("weight-bits", 8, "signed weight bits after quantization")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	dir := *data
	if dir == "" {
		d, err := model.DataDir()
		if err != nil {
			return err
		}
		dir = d
	}
	train, test, err := model.LoadMNIST(dir)
	if err != nil {
		return err
	}
	opt := model.DefaultTrainOptions
	opt.Epochs, opt.Seed = *epochs, *seed
	if !*asJSON {
		opt.Progress = func(ep int, loss float64) { fmt.Fprintf(os.Stderr, "epoch %d: mean loss %.4f\n", ep+1, loss) }
	}
	q, rep, err := model.TrainMNIST(train, test, opt, *wbits)
	if err != nil {
		return err
	}
	if err := q.Save(*out); err != nil {
		return err
	}
	if *subset != "" {
		im, lb, err := model.EncodeIDX(test.Subset(*subsetN))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*subset, model.SubsetImages), im, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*subset, model.SubsetLabels), lb, 0o644); err != nil {
			return err
		}
	}
	if *asJSON {
		return printJSON(rep)
	}
	fmt.Printf("trained on %d images, %d epochs (seed %d) in %.1f s\n", rep.TrainImages, rep.Epochs, rep.Seed, rep.Seconds)
	fmt.Printf("test accuracy: float %.2f%%, quantized %.2f%% (ℓ = %d, weight scales %v, logit error bound %d)\n",
		100*rep.FloatAccuracy, 100*rep.QuantAccuracy, rep.LogT, rep.Shifts, rep.LogitErrBound)
	fmt.Printf("model written to %s\n", *out)
	return nil
}

// loadModel reads a model file, or the committed one for "".
func loadModel(path string) (*model.Quantized, error) {
	if path == "" {
		return model.Default()
	}
	return model.Load(path)
}

func mpcServe(args []string) error {
	fs := flag.NewFlagSet("mpc serve", flag.ContinueOnError)
	path := fs.String("model", "", "quantized model file (default: the committed MNIST model)")
	listen := fs.String("listen", "127.0.0.1:7045", "TCP address to listen on")
	sessions := fs.Int("sessions", 0, "stop after this many sessions (0: serve until interrupted)")
	sf := addMPCServerFlags(fs, "mpc serve")
	if err := fs.Parse(args); err != nil {
		return err
	}
	srv, err := sf.server(*listen)
	if err != nil {
		return err
	}
	q, err := loadModel(*path)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	transportName := "mutual TLS"
	if srv.TLS == nil {
		transportName = "PLAINTEXT"
	}
	fmt.Fprintf(os.Stderr, "serving %d-layer model (ℓ = %d) on %s (%s)\n", len(q.Arch), q.LogT, l.Addr(), transportName)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return infer.ServeListener(ctx, l, srv, q, *sessions)
}

// testImages returns the first n MNIST test images: from --mnist, else the
// GoMNIST module, else (n ≤ 100) the committed subset.
func testImages(dir string, n int) (model.Dataset, error) {
	if dir == "" {
		// The embedded subset first: it needs no Go toolchain or module
		// cache, which model.DataDir consults.
		if n <= model.TestSubsetLen {
			sub, err := model.TestSubset()
			return sub.Subset(n), err
		}
		d, err := model.DataDir()
		if err != nil {
			return model.Dataset{}, err
		}
		dir = d
	}
	test, err := model.LoadMNISTTest(dir)
	if err != nil {
		return model.Dataset{}, err
	}
	if n > test.Len() {
		return model.Dataset{}, fmt.Errorf("%d images requested, the test set has %d", n, test.Len())
	}
	return test.Subset(n), nil
}

func mpcInfer(args []string) error {
	fs := flag.NewFlagSet("mpc infer", flag.ContinueOnError)
	server := fs.String("server", "127.0.0.1:7045", "server address")
	images := fs.Int("images", 100, "number of MNIST test images (the first K)")
	proto := fs.String("protocol", "cheetah", "linear protocol: cheetah, optiencode or optiencode-bsgs")
	logN := fs.Int("logn", infer.DefaultLogN, "log2 of the HE ring degree (12..15)")
	ref := fs.String("model", "", "plaintext reference model for scoring agreement (default: the committed model); never sent")
	data := fs.String("mnist", "", "directory with the MNIST .gz IDX files (default: the GoMNIST module's data/)")
	timeout := fs.Duration("timeout", 10*time.Second, "connection timeout")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	tf := addTransportFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *images < 1 {
		return errors.New("--images must be at least 1")
	}
	p, err := linear.ParseProtocol(*proto)
	if err != nil {
		return err
	}
	q, err := loadModel(*ref)
	if err != nil {
		return err
	}
	d, err := testImages(*data, *images)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	conn, err := mpcDial(ctx, tf, *server)
	if err != nil {
		return err
	}
	var progress func(int)
	if !*asJSON {
		progress = func(i int) {
			if i%50 == 0 || i == d.Len() {
				fmt.Fprintf(os.Stderr, "\r%d/%d images", i, d.Len())
			}
		}
	}
	rep, err := infer.Evaluate(conn, infer.Config{Protocol: p, LogN: *logN}, d, q, progress)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(rep)
	}
	fmt.Fprintln(os.Stderr)
	fmt.Printf("%d images, protocol %s, N = 2^%d: private accuracy %.2f%%, plaintext %.2f%%, agreement %.2f%%\n",
		rep.Images, rep.Protocol, rep.LogN, 100*rep.PrivateAccuracy, 100*rep.PlainAccuracy, 100*rep.Agreement)
	fmt.Printf("max logit difference %d (bound %d); %.1f s (%.3f s per image); %d bytes up, %d down, %d rounds\n",
		rep.MaxLogitDiff, rep.LogitErrorBound, rep.WallS, rep.PerImageS, rep.Stats.Total.BytesC2S, rep.Stats.Total.BytesS2C, rep.Stats.Total.Rounds())
	return nil
}

func mpcBench(args []string) error {
	fs := flag.NewFlagSet("mpc bench", flag.ContinueOnError)
	protos := fs.String("protocols", "cheetah,optiencode,optiencode-bsgs", "comma-separated linear protocols")
	paper := fs.Bool("paper-layer", true, "run the ResNet-18 paper layer (Co = Ci = 256, H = W = 14, N = 8192) for real")
	networks := fs.String("networks", "all", "networks to count and project: all, none, or comma-separated names")
	images := fs.Int("mnist-images", 10, "MNIST private-inference images per protocol (0: skip)")
	rounds := fs.Int("unit-rounds", 10, "repetitions of each unit-cost measurement")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg := mpcbench.Config{PaperLayer: *paper, MNISTImages: *images, UnitRounds: *rounds}
	for _, name := range splitList(*protos) {
		p, err := linear.ParseProtocol(name)
		if err != nil {
			return err
		}
		cfg.Protocols = append(cfg.Protocols, p)
	}
	switch *networks {
	case "all":
		cfg.Networks = nets.All()
	case "none", "":
	default:
		for _, name := range splitList(*networks) {
			n, err := nets.ByName(name)
			if err != nil {
				return err
			}
			cfg.Networks = append(cfg.Networks, n)
		}
	}
	if *images > 100 {
		return errors.New("--mnist-images is at most 100 (the committed subset); use `mpc infer` for more")
	}
	start := time.Now()
	cfg.Progress = func(msg string) { fmt.Fprintf(os.Stderr, "[%5.1fs] %s\n", time.Since(start).Seconds(), msg) }
	rep, err := mpcbench.Run(cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(rep)
	}
	u := rep.Units
	fmt.Printf("unit costs at N = 2^%d (measured, mean of %d): enc %.2f ms, cpmult %.3f ms, automorphism %.2f ms, output %.2f ms\n",
		u.LogN, u.Rounds, 1e3*u.EncS, 1e3*u.MulS, 1e3*u.AutoS, 1e3*u.OutS)
	fmt.Printf("%-9s %-10s %-16s %-28s %7s %7s %7s %8s %12s %12s %9s %9s %9s\n",
		"kind", "network", "protocol", "layer", "out_cts", "in_cts", "autos", "cpmults", "bytes_c2s", "bytes_s2c", "cpu_s", "lan_s", "wan_s")
	for _, r := range rep.Rows {
		if r.Kind == mpcbench.Projected && r.Layer != "total" {
			continue // per-layer projections are in --json
		}
		fmt.Printf("%-9s %-10s %-16s %-28s %7d %7d %7d %8d %12d %12d %9.3f %9.3f %9.3f\n",
			r.Kind, r.Network, r.Protocol, r.Layer, r.OutputCts, r.InputCts, r.Automorphisms, r.CPMults, r.BytesC2S, r.BytesS2C, r.CPUS, r.LANS, r.WANS)
	}
	for _, m := range rep.MNIST {
		fmt.Printf("MNIST %s: %d images, private accuracy %.2f%%, plaintext %.2f%%, agreement %.2f%%, %.3f s per image\n",
			m.Protocol, m.Images, 100*m.PrivateAccuracy, 100*m.PlainAccuracy, 100*m.Agreement, m.PerImageS)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
