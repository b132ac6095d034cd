package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/rosemary-fhe/rosemary/demo"
)

func init() {
	register(command{name: "demo", summary: "the main job on embedded defaults (no server needed)", run: runDemo})
}

func runDemo(args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	preset := fs.String("preset", "ckks-14", "CKKS parameter preset")
	rot := fs.Int("rot", 5, "rotation steps")
	if err := fs.Parse(args); err != nil {
		return err
	}
	out := os.Stdout
	if *asJSON {
		out = nil
	}
	s, err := demo.Run(out, *preset, *rot)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(s)
	}
	if !s.Correct {
		return fmt.Errorf("demo result incorrect")
	}
	return nil
}
