package main

import (
	"flag"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
	"github.com/rosemary-fhe/rosemary/optiprime/fpga"
)

// mpcFPGA prints the OptiFlow accelerator model's comparison of the BSGS
// split and the reuse-centric dataflow (simulated).
func mpcFPGA(args []string) error {
	fs := flag.NewFlagSet("mpc fpga", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the full report as JSON (every layer, schedule and sweep)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rep, err := fpga.Table(fpga.Default(), cheetah.PN13, nil)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(rep)
	}
	printFPGA(rep)
	return nil
}

// printFPGA prints the report's summary: every figure simulated except the
// paper's, which are quoted.
func printFPGA(rep fpga.Report) {
	fmt.Printf("OptiFlow FPGA model, %s, %s — SIMULATED (analytic model, optiprime/fpga; --json for every layer)\n\n", rep.Params, fmtDevice(rep.Config))
	pl := rep.PaperLayer
	fmt.Printf("paper layer %s (B = %d): split %.3f ms, %.0f MB; OptiFlow %.3f ms, %.0f MB (%s, %s, %d output tiles): %.2f× (simulated)\n\n",
		pl.Layer, pl.Workload.B, pl.Split.LatencyS*1e3, pl.Split.HBMBytes/1e6, pl.Flow.LatencyS*1e3, pl.Flow.HBMBytes/1e6,
		pl.Flow.KeyPolicy, pl.Flow.BabyPolicy, pl.Flow.OutputTiles, pl.SpeedUp)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "network\tsplit s (sim.)\tOptiFlow s (sim.)\tspeedup\tHBM ratio\tpaper end-to-end s (quoted)\t")
	for _, n := range rep.Networks {
		paper := "—"
		if n.Paper != nil {
			paper = fmt.Sprintf("%.1f (model's HE share %.1f%%)", n.Paper.EndToEndS, 100*n.Paper.LinearShare)
		}
		fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%.2f×\t%.2f\t%s\t\n", n.Network, n.SplitLatencyS, n.FlowLatencyS, n.SpeedUp, n.TrafficRatio, paper)
	}
	tw.Flush()
	fmt.Println("\nOptiFlow / split speedup by lane factor (simulated; the split's bound in brackets):")
	tw = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "network\t1×\t2×\t4×\t8×\t")
	row := ""
	for i, p := range rep.NetworkLanes {
		if i%4 == 0 {
			row = p.Network
		}
		row += fmt.Sprintf("\t%.2f× [%s]", p.SpeedUp, p.Bound)
		if i%4 == 3 {
			fmt.Fprintln(tw, row+"\t")
		}
	}
	tw.Flush()
}

// fmtDevice is the device configuration in one phrase.
func fmtDevice(c fpga.Config) string {
	return fmt.Sprintf("%.0f MHz, HBM %.0f GB/s, scratchpad %d MiB, %d butterflies / %d modmul / %d aut / %d modadd lanes",
		c.ClockHz/1e6, c.HBMBytesPerSec/1e9, c.ScratchpadBytes>>20, c.NTTButterflies, c.ModMulLanes, c.AutLanes, c.ModAddLanes)
}
