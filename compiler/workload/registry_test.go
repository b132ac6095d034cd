package workload

import (
	"strings"
	"testing"
)

// TestRegisterDuplicatePanics checks that a second workload under a taken
// name fails loudly and leaves the first in place.
func TestRegisterDuplicatePanics(t *testing.T) {
	names := Names()
	if len(names) == 0 {
		t.Fatal("no workloads registered")
	}
	name := names[0]
	first := registry[name]
	func() {
		defer func() {
			r := recover()
			err, ok := r.(error)
			if !ok || !strings.Contains(err.Error(), "registered twice") || !strings.Contains(err.Error(), name) {
				t.Errorf("duplicate %q: recovered %v, want a registered-twice error", name, r)
			}
		}()
		register(Workload{Name: name, Description: "impostor"})
	}()
	if got := registry[name]; got.Description != first.Description || got.Description == "impostor" {
		t.Errorf("registry[%q] is now %q, want the first registration %q", name, got.Description, first.Description)
	}
	if err := checkNew(Workload{Description: "nameless"}); err == nil {
		t.Error("a workload without a name was accepted")
	}
	if err := checkNew(Workload{Name: name + "-new"}); err != nil {
		t.Errorf("a fresh name was refused: %v", err)
	}
}
