package main

import (
	"flag"
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
	"github.com/rosemary-fhe/rosemary/optiprime/fpga"
)

// mpcFPGA prints the OptiFlow accelerator model's comparison of the BSGS
// split and the reuse-centric dataflow (simulated).
func mpcFPGA(args []string) error {
	fs := flag.NewFlagSet("mpc fpga", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the full report as JSON")
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
	b, err := jsonIndent(rep)
	if err != nil {
		return err
	}
	fmt.Println("OptiFlow FPGA model (simulated; see optiprime/fpga):")
	fmt.Println(b)
	return nil
}
