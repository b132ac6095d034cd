package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
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

// untilInterrupted returns a context that ends on Ctrl-C or SIGTERM, so a
// long command can stop its child processes and clean up before exiting.
func untilInterrupted() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// childDeviceCommand is the command line that starts this same binary as a
// device daemon in a child process, logging only warnings so that its output
// does not drown the parent's.
func childDeviceCommand() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return []string{exe, "device", "serve", "--log-level", "warn"}, nil
}

// progressBar draws on stderr only when it is a terminal (character device).
type progressBar struct{ on bool }

func newProgressBar() *progressBar {
	fi, err := os.Stderr.Stat()
	return &progressBar{on: err == nil && fi.Mode()&os.ModeCharDevice != 0}
}

// show draws "[####....] label done/total".
func (p *progressBar) show(label string, done, total int64) {
	if !p.on || total <= 0 {
		return
	}
	const width = 30
	n := int(done * width / total)
	fmt.Fprintf(os.Stderr, "\r[%s%s] %s %d/%d", strings.Repeat("#", n), strings.Repeat(".", width-n), label, done, total)
}

func (p *progressBar) clear() {
	if p.on {
		fmt.Fprint(os.Stderr, "\r\033[K")
	}
}

func (p *progressBar) done() { p.clear() }

// logf returns a logger that writes "prefix: message" lines on stderr, first
// clearing the bar so that the line is not drawn over it.
func (p *progressBar) logf(prefix string) func(format string, a ...any) {
	return func(format string, a ...any) {
		p.clear()
		fmt.Fprintf(os.Stderr, prefix+": "+format+"\n", a...)
	}
}

// startCPUProfile writes a CPU profile to path until stop is called (no
// profile for an empty path).
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
