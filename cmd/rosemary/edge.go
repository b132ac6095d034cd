package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rosemary-fhe/rosemary/rise/edge"
	"github.com/rosemary-fhe/rosemary/rise/video"
	"github.com/rosemary-fhe/rosemary/tools/bench/edgebench"
)

func init() {
	register(command{name: "edge", summary: "RISE edge encryptor: encrypt|decrypt|bench (video frames to CKKS)", run: runEdge})
}

func runEdge(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: rosemary edge encrypt|decrypt|bench|soc [flags]")
	}
	switch args[0] {
	case "encrypt":
		return edgeEncrypt(args[1:])
	case "decrypt":
		return edgeDecrypt(args[1:])
	case "bench":
		return edgeBench(args[1:])
	case "soc":
		return edgeSoC(args[1:])
	default:
		return fmt.Errorf("unknown edge subcommand %q (encrypt|decrypt|bench|soc)", args[0])
	}
}

func edgeEncrypt(args []string) error {
	fs := flag.NewFlagSet("edge encrypt", flag.ContinueOnError)
	synthetic := fs.String("synthetic", "", "synthetic frames: qqvga (160x120) or qvga (320x240)")
	in := fs.String("in", "", "input YUV4MPEG2 file (the Y plane is used)")
	frames := fs.Int("frames", 10, "number of frames to encrypt (at most)")
	n := fs.Int("n", 4096, "ring degree: 1024, 2048, 4096, 8192 or 16384 (SEAL-Embedded presets)")
	out := fs.String("out", "", "output directory")
	pkFile := fs.String("pk", "", "public key file (default: generate a key pair into --out)")
	seeded := fs.Bool("seeded", false, "symmetric encryption with seeded c1 (half the upload; needs generated keys)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || (*synthetic == "") == (*in == "") || *frames < 1 {
		return errors.New("need --out DIR, exactly one of --synthetic qqvga|qvga or --in FILE.y4m, and --frames ≥ 1")
	}
	p, err := edge.Preset(*n)
	if err != nil {
		return err
	}
	var next func() (video.Frame, error)
	if *synthetic != "" {
		w, h := 0, 0
		switch strings.ToLower(*synthetic) {
		case "qqvga":
			w, h = video.QQVGAWidth, video.QQVGAHeight
		case "qvga":
			w, h = video.QVGAWidth, video.QVGAHeight
		default:
			return fmt.Errorf("--synthetic %q: want qqvga or qvga", *synthetic)
		}
		t := 0
		next = func() (video.Frame, error) { t++; return video.SyntheticFrame(w, h, t-1), nil }
	} else {
		f, err := os.Open(*in)
		if err != nil {
			return err
		}
		defer f.Close()
		r, err := video.NewY4MReader(f)
		if err != nil {
			return err
		}
		next = r.Next
	}
	var pk []byte
	if *pkFile != "" {
		if pk, err = os.ReadFile(*pkFile); err != nil {
			return err
		}
	}
	st, err := video.Encrypt(*out, p, pk, *seeded, *frames, next)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(st)
	}
	fmt.Printf("encrypted %d frames %dx%d at N=%d (%d limbs): %d ciphertexts/frame, %d bytes/frame\n",
		st.Frames, st.Width, st.Height, st.N, st.Limbs, st.CtsPerFrame, st.BytesPerFrame)
	fmt.Printf("pack+encrypt: %.2f ms/frame = %.1f FPS on this CPU (measured, file writes excluded)\n", st.EncryptMs, st.FPS)
	if st.KeysGenerated {
		fmt.Printf("keys generated into %s (secret.key, public.key)\n", *out)
	}
	return nil
}

func edgeDecrypt(args []string) error {
	fs := flag.NewFlagSet("edge decrypt", flag.ContinueOnError)
	in := fs.String("in", "", "directory written by `rosemary edge encrypt`")
	out := fs.String("out", "", "output file: YUV4MPEG2 (grayscale, Cmono)")
	key := fs.String("key", "", "secret key file (default DIR/secret.key)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" || *out == "" {
		return errors.New("need --in DIR and --out FILE")
	}
	frames, err := video.Decrypt(*in, *key)
	if err != nil {
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	if err := video.WriteY4M(f, frames); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"frames": len(frames), "width": frames[0].W, "height": frames[0].H, "out": *out})
	}
	fmt.Printf("decrypted %d frames %dx%d into %s\n", len(frames), frames[0].W, frames[0].H, *out)
	return nil
}

func edgeBench(args []string) error {
	fs := flag.NewFlagSet("edge bench", flag.ContinueOnError)
	iters := fs.Int("iters", 20, "repetitions per measurement")
	asJSON := fs.Bool("json", false, "print JSON")
	ns := fs.String("n", "4096,16384", "ring degrees to measure (comma-separated presets)")
	path := fs.String("path", "", "NTT path of the main figures: fly (RISE, on-the-fly twiddles), table, rns (rns IFMA kernels, one lean table per encryptor), rns-shared (one lean table per prime); default: rns where the kernels run, else fly")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *iters < 1 {
		return errors.New("--iters must be ≥ 1")
	}
	var rows []edgebench.Result
	for _, s := range strings.Split(*ns, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(s), &n); err != nil {
			return fmt.Errorf("--n %q: %w", s, err)
		}
		p, err := edge.Preset(n)
		if err != nil {
			return err
		}
		pth := edge.DefaultPath(p)
		if *path != "" {
			pth = edge.NTTPath(*path)
		}
		r, err := edgebench.Measure(p, pth, *iters)
		if err != nil {
			return err
		}
		lr, err := edgebench.MeasureLattigo(p.N, p.Q, p.LogScale, edgebench.Values(p.Slots()), *iters)
		if err != nil {
			return err
		}
		r.SetLattigo(lr.EncryptMs, lr.EncryptCPUMs, lr.WorkingBytes)
		rows = append(rows, r)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	w := io.Writer(os.Stdout)
	fmt.Fprintln(w, "measured on this machine (rosemary edge bench): public-key encryption, fastest of 5 rounds, wall and thread-CPU ms;")
	fmt.Fprintln(w, "path: fly = on-the-fly twiddles (RISE), table = precomputed twiddles, rns = rns IFMA kernels with one lean table")
	fmt.Fprintln(w, "per encryptor, rns-shared = one lean table per prime; lattigo = ckks Encode + rlwe Encrypt (no P);")
	fmt.Fprintln(w, "work_B = encryptor buffers + context twiddle state (lattigo: its live setup heap + bytes allocated per encryption)")
	fmt.Fprintf(w, "%6s %6s %-10s %9s %9s %11s %11s %8s %8s %10s %12s %7s %8s %9s %9s\n", "N", "limbs", "path", "enc_ms", "enc_cpu",
		"lattigo_ms", "lattigo_cpu", "x_wall", "x_cpu", "work_B", "lattigo_B", "work_%", "dec_ms", "fps_qqvga", "fps_qvga")
	for _, r := range rows {
		fmt.Fprintf(w, "%6d %6d %-10s %9.3f %9.3f %11.3f %11.3f %8.2f %8.2f %10d %12d %6.1f%% %8.3f %9.1f %9.1f\n", r.N, r.Limbs, r.Path,
			r.EncryptMs, r.EncryptCPUMs, r.LattigoEncryptMs, r.LattigoEncryptCPUMs, r.SpeedupWall, r.SpeedupCPU, r.WorkingBytes,
			r.LattigoWorkingBytes, 100*r.WorkingRatio, r.DecryptMs, r.FPSQQVGA, r.FPSQVGA)
	}
	fmt.Fprintln(w, "all paths (same rules):")
	fmt.Fprintf(w, "%6s %-10s %9s %9s %10s\n", "N", "path", "enc_ms", "enc_cpu", "work_B")
	for _, r := range rows {
		for _, pr := range r.Paths {
			fmt.Fprintf(w, "%6d %-10s %9.3f %9.3f %10d\n", r.N, pr.Path, pr.EncryptMs, pr.EncryptCPUMs, pr.WorkingBytes)
		}
	}
	return nil
}
