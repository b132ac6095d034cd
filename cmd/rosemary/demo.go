package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/tools/demo"
)

func init() {
	register(command{name: "demo", summary: "the main job on embedded defaults (no server needed)", run: runDemo})
}

func runDemo(args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	preset := fs.String("preset", "ckks-14", "CKKS preset of the verified-core check")
	rot := fs.Int("rot", 5, "rotation steps of the verified-core check")
	vectors := fs.Int("vectors", 1024, "MNIST images in the encrypted database (≤ 1024)")
	query := fs.Int("query", 0, "MNIST test image to search for (0–99)")
	opt := new(compiler.OptLevel)
	*opt = compiler.OptFull
	fs.Var(opt, "opt", "compiler optimisation: bare, tdap or full")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var out io.Writer = os.Stdout
	if *asJSON {
		out = nil
	}
	core, err := demo.Run(out, *preset, *rot)
	if err != nil {
		return err
	}
	search, err := demo.Search(context.Background(), out, demo.SearchOptions{Vectors: *vectors, QueryImage: *query, Opt: *opt})
	if err != nil {
		return err
	}
	if *asJSON {
		if err := printJSON(map[string]any{"core": core, "search": search}); err != nil {
			return err
		}
	}
	if !core.Correct || !search.Correct {
		return fmt.Errorf("demo result incorrect")
	}
	return nil
}
