package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rosemary-fhe/rosemary/rise/edge"
	"github.com/rosemary-fhe/rosemary/rise/soc"
	"github.com/rosemary-fhe/rosemary/rise/soc/rvcount"
)

// edgeSoC prints the RISE SoC model (simulated) on both measured
// baselines beside the paper's quoted figures, or with -measure-riscv
// measures the baselines' RV64 instructions per phase under qemu-riscv64.
func edgeSoC(args []string) error {
	fs := flag.NewFlagSet("edge soc", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the full reports as JSON")
	baseline := fs.String("baseline", "", "one baseline only: edge, seal-embedded or derived (default: edge and seal-embedded)")
	cpi := fs.Float64("cpi", soc.DefaultCore().CPI, "cycles per measured instruction")
	measure := fs.Bool("measure-riscv", false, "measure instructions per phase under qemu-riscv64 (needs qemu-user, a C compiler, go, and the source tree)")
	sealDir := fs.String("seal-embedded", "", "with -measure-riscv: a microsoft/SEAL-Embedded checkout to build and measure too (needs riscv64-linux-gnu-gcc)")
	nsFlag := fs.String("n", "1024,2048,4096,8192,16384", "with -measure-riscv: ring degrees")
	write := fs.String("write", "", "with -measure-riscv: write the profiles (the model's riscv_counts.json format) to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	core := soc.DefaultCore()
	core.CPI = *cpi
	if *measure {
		return edgeSoCMeasure(*nsFlag, *sealDir, *write, core)
	}
	baselines := []string{soc.BaselineEdge, soc.BaselineSEAL}
	if *baseline != "" {
		baselines = []string{*baseline}
	}
	var reps []soc.Report
	for _, b := range baselines {
		rep, err := soc.Table(soc.Options{Baseline: b, Core: &core})
		if err != nil {
			return err
		}
		reps = append(reps, rep)
	}
	if *asJSON {
		return printJSON(reps)
	}
	fmt.Printf("RISE SoC model (simulated): core cycles = measured RV64 instructions × CPI %.2g + streaming misses (rise/soc)\n", core.CPI)
	for _, rep := range reps {
		fmt.Printf("\nbaseline software: %s\n", rep.Baseline)
		fmt.Printf("%-8s %6s %-12s %12s %12s %10s %10s %9s  %s\n", "point", "logQ", "system", "enc µs", "dec µs", "QQVGA fps", "QVGA fps", "power mW", "encrypt dominated by")
		for _, p := range rep.Points {
			for _, r := range p.Rows {
				part, share := r.Encrypt.Cost.Dominant()
				fmt.Printf("%-8s %6d %-12v %12.1f %12.1f %10.2f %10.2f %9.2f  %s %.0f%%\n", p.Name, p.LogQ, r.System,
					r.Encrypt.LatencyUs, r.Decrypt.LatencyUs, r.FPSQQVGA, r.FPSQVGA, r.PowerMW, part, 100*share)
			}
		}
		fmt.Printf("\nbeside the paper (%s); ratio = model / paper, why for |ratio − 1| > 25%%:\n", rep.Paper.Source)
		for _, c := range soc.Compare(rep) {
			fmt.Printf("  %-44s model %9.2f  paper %9s  ratio %6s  %s\n", c.Name, c.Model, c.PaperText(), c.RatioText(), c.Why)
		}
		if s := soc.FrameVerdict(rep); s != "" {
			fmt.Println("  " + s)
		}
	}
	return nil
}

// edgeSoCMeasure counts the baselines' instructions per phase.
func edgeSoCMeasure(nsFlag, sealDir, write string, core soc.CoreCosts) error {
	var ns []int
	for _, f := range strings.Split(nsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("edge soc: bad -n %q", f)
		}
		if _, err := edge.Preset(n); err != nil {
			return err
		}
		ns = append(ns, n)
	}
	ctx := context.Background()
	tools, err := rvcount.FindTools(sealDir != "")
	if err != nil {
		return fmt.Errorf("edge soc -measure-riscv: %w", err)
	}
	dir, err := os.MkdirTemp("", "rosemary-rvcount-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	q, err := rvcount.NewQemu(ctx, tools, dir)
	if err != nil {
		return err
	}
	ours, err := rvcount.MeasureEdge(ctx, tools, q, ns)
	if err != nil {
		return err
	}
	cmd := "rosemary edge soc -measure-riscv -n " + nsFlag
	profs := []soc.Profile{toProfile(soc.BaselineEdge, ours,
		"measured here: our encryptor (rise/edge/internal/rvphases, GOARCH=riscv64) under "+rvcount.QemuVersion(ctx, tools.Qemu)+
			" with the rvcount instruction-counting plugin; one encryption and decryption after a warm-up, phases marked by edge.EncryptPhased/DecryptPhased", cmd)}
	if sealDir != "" {
		bin, err := rvcount.BuildSEAL(ctx, tools, sealDir, dir)
		if err != nil {
			return err
		}
		var sms []rvcount.Measurement
		for _, n := range ns {
			m, err := rvcount.MeasureSEAL(ctx, q, bin, n)
			if err != nil {
				return err
			}
			sms = append(sms, m)
		}
		profs = append(profs, toProfile(soc.BaselineSEAL, sms,
			"measured here: SEAL-Embedded (microsoft/SEAL-Embedded device/lib, built beside the project) with rvcount's sealdriver, "+
				rvcount.SEALRecipe+"; under "+rvcount.QemuVersion(ctx, tools.Qemu)+"; encryption only (SEAL-Embedded has no decryptor)",
			cmd+" -seal-embedded SEAL-EMBEDDED-CHECKOUT"))
	}
	fmt.Println("RV64 instructions per phase, measured here under qemu-riscv64 (one conversion)")
	fmt.Printf("%-14s %7s %-12s %14s %14s %14s %8s\n", "software", "N", "phase", "instructions", "model cycles", "derived cycles", "derived/model")
	for _, pr := range profs {
		for _, pt := range pr.Points {
			p, _ := edge.Preset(pt.N)
			sw, err := soc.MeasuredSoftware(p, core, pr, profs[0])
			if err != nil {
				return err
			}
			der, err := soc.DerivedSoftware(p, core)
			if err != nil {
				return err
			}
			for _, ph := range edge.Phases {
				in, ok := pt.Instructions[ph.String()]
				if !ok {
					continue
				}
				d := der.Cycles[ph]
				fmt.Printf("%-14s %7d %-12s %14d %14.0f %14.0f %8.2f\n", pr.Software, pt.N, ph, in, sw.Cycles[ph], d, d/sw.Cycles[ph])
			}
		}
	}
	if write != "" {
		b, err := json.MarshalIndent(profs, "", "  ")
		if err != nil {
			return err
		}
		if _, err := soc.ParseProfiles(b); err != nil {
			return err
		}
		return os.WriteFile(write, append(b, '\n'), 0o644)
	}
	return nil
}

func toProfile(sw string, ms []rvcount.Measurement, source, cmd string) soc.Profile {
	p := soc.Profile{Software: sw, Source: source, Command: cmd}
	for _, m := range ms {
		p.Points = append(p.Points, soc.ProfilePoint{N: m.N, Limbs: m.Limbs, Instructions: m.Phases})
	}
	return p
}
