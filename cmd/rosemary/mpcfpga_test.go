package main

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
	"github.com/rosemary-fhe/rosemary/optiprime/fpga"
	"github.com/rosemary-fhe/rosemary/optiprime/nets"
)

// TestMPCFPGALabels: mpc fpga's summary labels the modeled figures
// simulated and the paper's quoted.
func TestMPCFPGALabels(t *testing.T) {
	rep, err := fpga.Table(fpga.Default(), cheetah.PN13, []nets.Network{nets.ResNet18()})
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	printFPGA(rep)
	os.Stdout = stdout
	w.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	for _, want := range []string{"SIMULATED", "split s (sim.)", "OptiFlow s (sim.)", "paper end-to-end s (quoted)", "resnet18", "2.9 (model's HE share 3.2%)", "1.00×"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if !strings.HasPrefix(rep.Source, "simulated") || rep.Networks[0].Provenance != "simulated" || rep.PaperLayer.Provenance != "simulated" {
		t.Errorf("JSON provenance: %q %q %q", rep.Source, rep.Networks[0].Provenance, rep.PaperLayer.Provenance)
	}
}
