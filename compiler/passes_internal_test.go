package compiler

import (
	"strings"
	"testing"
)

// The pass table as shipped satisfies its ordering constraints (init would
// have panicked otherwise); a table that breaks one is caught.
func TestCheckPassesCatchesBadTables(t *testing.T) {
	if err := checkPasses(passes, passOrder); err != nil {
		t.Fatalf("shipped table: %v", err)
	}
	swapped := append([]pass(nil), passes...)
	i, j := indexOfPass(t, swapped, PassCost), indexOfPass(t, swapped, PassPartitionBare)
	swapped[i], swapped[j] = swapped[j], swapped[i]
	dropped := append([]pass(nil), passes[:indexOfPass(t, passes, PassSegment)]...)
	badLevel := append([]pass(nil), passes...)
	badLevel[0].levels = []OptLevel{"fast"}
	for _, c := range []struct {
		name  string
		table []pass
		order []passConstraint
		want  string
	}{
		{"cost after partition", swapped, passOrder, "pass cost must run before partition-bare"},
		{"missing pass", dropped, passOrder, "unknown pass segment"},
		{"unknown name", passes, []passConstraint{{PassCost, "inline"}}, "unknown pass inline"},
		{"duplicate", append(append([]pass(nil), passes...), passes[0]), nil, "pass validate listed twice"},
		{"unknown level", badLevel, nil, `unknown level "fast"`},
	} {
		err := checkPasses(c.table, c.order)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

func indexOfPass(t *testing.T, table []pass, name PassName) int {
	t.Helper()
	for i, p := range table {
		if p.name == name {
			return i
		}
	}
	t.Fatalf("no pass %s", name)
	return -1
}
