package main

import (
	"flag"
	"fmt"

	"github.com/rosemary-fhe/rosemary/sim/rise"
)

// edgeSoC prints the RISE SoC model's latency and FPS per (N, log Q) for
// the four systems (simulated).
func edgeSoC(args []string) error {
	fs := flag.NewFlagSet("edge soc", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the full report as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rep, err := rise.Table(rise.Options{})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(rep)
	}
	fmt.Println("RISE SoC model (simulated; software costs counted from our encryptor, see sim/rise)")
	fmt.Printf("%-8s %6s %-12s %12s %12s %10s %10s %9s\n", "point", "logQ", "system", "enc µs", "dec µs", "QQVGA fps", "QVGA fps", "power mW")
	for _, p := range rep.Points {
		for _, r := range p.Rows {
			fmt.Printf("%-8s %6d %-12v %12.1f %12.1f %10.1f %10.1f %9.2f\n", p.Name, p.LogQ, r.System,
				r.Encrypt.LatencyUs, r.Decrypt.LatencyUs, r.FPSQQVGA, r.FPSQVGA, r.PowerMW)
		}
	}
	return nil
}
