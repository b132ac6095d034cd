package workload

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
)

// Workload is a named program generator.
type Workload struct {
	Name        string
	Description string
	Source      string // where the shape comes from
	Full        func() (*ir.Program, error)
	Small       func() (*ir.Program, error)
}

var registry = map[string]Workload{}

// register adds a workload at init time. A second workload under a name
// already taken is a programming error that would silently replace the
// first, so it panics, naming both.
func register(w Workload) {
	if err := checkNew(w); err != nil {
		panic(err)
	}
	registry[w.Name] = w
}

// checkNew reports why w cannot join the registry.
func checkNew(w Workload) error {
	if w.Name == "" {
		return fmt.Errorf("workload: a workload without a name (%q)", w.Description)
	}
	if old, ok := registry[w.Name]; ok {
		return fmt.Errorf("workload: %q registered twice (%q, then %q)", w.Name, old.Description, w.Description)
	}
	return nil
}

// Names lists the workloads.
func Names() []string {
	var n []string
	for k := range registry {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// All returns every workload sorted by name.
func All() []Workload {
	var out []Workload
	for _, n := range Names() {
		out = append(out, registry[n])
	}
	return out
}

// Get returns a workload by name. "NAME:small" selects the small form
// through Program.
func Get(name string) (Workload, error) {
	w, ok := registry[name]
	if !ok {
		return Workload{}, fmt.Errorf("workload: unknown workload %q (have %s)", name, strings.Join(Names(), ", "))
	}
	return w, nil
}

// Program returns the program for "NAME" (full scale) or "NAME:small".
func Program(spec string) (*ir.Program, error) {
	name, size, _ := strings.Cut(spec, ":")
	w, err := Get(name)
	if err != nil {
		return nil, err
	}
	switch size {
	case "", "full":
		return w.Full()
	case "small":
		return w.Small()
	}
	return nil, fmt.Errorf("workload: unknown size %q (full, small)", size)
}
