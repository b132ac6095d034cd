package main

import (
	"encoding/json"
	"flag"
	"os"

	"github.com/rosemary-fhe/rosemary/arch"
)

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func jsonIndent(v any) (string, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	return string(b), err
}

// archFlags adds the architecture flags shared by compile and simulate:
// a preset or JSON file, and the overrides of the paper's sweeps.
func archFlags(fs *flag.FlagSet) func() (*arch.Arch, error) {
	name := fs.String("a", "rosemary", "architecture preset or JSON file")
	aus := fs.Int("aus", 0, "override the number of AUs (4–64; 0 keeps the preset's)")
	edram := fs.Int("edram-mb", -1, "override the eDRAM size in MB (0–128; -1 keeps the preset's)")
	return func() (*arch.Arch, error) {
		a, err := arch.Open(*name)
		if err != nil {
			return nil, err
		}
		if *aus != 0 {
			if a, err = arch.WithAUs(a, *aus); err != nil {
				return nil, err
			}
		}
		if *edram >= 0 {
			if a, err = arch.WithEDRAM(a, int64(*edram)<<20); err != nil {
				return nil, err
			}
		}
		return a, nil
	}
}
