package e2e

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/graph"
)

// TestOwedShifts checks which truncations the ResNets defer past a ReLU
// (and which ReLUs run after their max-pool):
// every one read by a ReLU directly or through a residual Add, never a
// downsample's when the main path already owes (the two would not add up
// exactly), never the classifier's.
func TestOwedShifts(t *testing.T) {
	for _, tc := range []struct {
		spec          graph.Spec
		truncs, owing int
	}{
		// ResNet-18: stem + 8 blocks × 2 + 3 downsamples + fc; deferred: stem,
		// both convs of every block.
		{graph.ResNet18, 21, 17},
		// ResNet-50: stem + 16 blocks × 3 + 4 downsamples + fc.
		{graph.ResNet50, 54, 49},
		{graph.Mini, 7, 5},
	} {
		n, _, err := graph.Build(tc.spec, 1, graph.Options{})
		if err != nil {
			t.Fatal(err)
		}
		owed := owedShifts(n)
		// Only the stem's ReLU, read by the max-pool alone and fed by a
		// Trunc (the reference checks the value before it), runs after
		// the max-pool (pooledReLUs).
		var pooled []string
		for i, p := range pooledReLUs(n, owed) {
			if p {
				pooled = append(pooled, n.Ops[i].Name)
				if n.Ops[i+1].Kind != graph.MaxPool || n.Ops[i+1].In[0] != i+1 {
					t.Errorf("%s: %s is pooled but not read by the next op's max-pool", tc.spec.Name, n.Ops[i].Name)
				}
			}
		}
		if len(pooled) != 1 || pooled[0] != "relu1" {
			t.Errorf("%s: pooled ReLUs %v, want [relu1]", tc.spec.Name, pooled)
		}
		truncs, deferred := 0, 0
		for i, op := range n.Ops {
			v := i + 1
			switch op.Kind {
			case graph.Trunc:
				truncs++
				if owed[v] != 0 {
					deferred++
					if owed[v] != op.Shift {
						t.Fatalf("%s %s owes %d, its shift is %d", tc.spec.Name, op.Name, owed[v], op.Shift)
					}
				}
			case graph.Add:
				if owed[op.In[0]] != 0 && owed[op.In[1]] != 0 {
					t.Fatalf("%s %s: both operands owe a shift", tc.spec.Name, op.Name)
				}
			case graph.ReLU:
				if owed[v] != 0 {
					t.Fatalf("%s %s passes a shift on", tc.spec.Name, op.Name)
				}
			default:
				for _, in := range op.In {
					if owed[in] != 0 {
						t.Fatalf("%s %s reads a value that owes a shift", tc.spec.Name, op.Name)
					}
				}
			}
		}
		if truncs != tc.truncs || deferred != tc.owing {
			t.Errorf("%s: %d truncations, %d deferred; want %d, %d", tc.spec.Name, truncs, deferred, tc.truncs, tc.owing)
		}
	}
}
