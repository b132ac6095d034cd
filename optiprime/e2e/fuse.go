package e2e

import "github.com/rosemary-fhe/rosemary/optiprime/graph"

// Truncation after a ReLU is cheaper than before it: a ReLU's output is
// known to be nonnegative, and a truncation of a value whose top bit is
// known needs no millionaires' on ℓ bits (nonlinear.TruncateNonneg). The
// reorder is exact, so the private result still equals the plaintext
// reference bit for bit:
//
//	ReLU(⌊c/2^s⌋)     = ⌊ReLU(c)/2^s⌋            (floor is monotone, ⌊0⌋ = 0)
//	ReLU(⌊c/2^s⌋ + y) = ⌊ReLU(c + y·2^s)/2^s⌋    (y an integer)
//
// so a Trunc whose only reader is a ReLU, or an Add whose only reader is a
// ReLU, is deferred: its shares pass through untruncated (the Add scales
// its other operand by 2^s, a local multiplication), and the ReLU truncates
// after itself — in one step, nonlinear.ReLUTruncate, whose truncation
// takes its comparison from the ReLU's millionaires' run (14 flights at
// ℓ = 37 instead of 12 + 8). Only one operand of an Add may owe a shift (⌊a/2^s⌋ +
// ⌊b/2^s⌋ is not ⌊(a+b)/2^s⌋). Values grow by 2^s until the ReLU; the
// untruncated products already had to fit the ring.

// owedShifts returns, per value (0 is the input, v = i+1 the output of op
// i), the truncation shift its shares still owe (0 for none).
func owedShifts(n *graph.Net) []int {
	readers := make([][]int, len(n.Ops)+1)
	for i, op := range n.Ops {
		for _, v := range op.In {
			readers[v] = append(readers[v], i)
		}
	}
	onlyReader := func(v int) (graph.Op, bool) {
		if len(readers[v]) != 1 {
			return graph.Op{}, false
		}
		return n.Ops[readers[v][0]], true
	}
	owed := make([]int, len(n.Ops)+1)
	for i, op := range n.Ops {
		v := i + 1
		switch op.Kind {
		case graph.Trunc:
			next, ok := onlyReader(v)
			if !ok || owed[op.In[0]] != 0 {
				continue
			}
			switch next.Kind {
			case graph.ReLU:
				owed[v] = op.Shift
			case graph.Add:
				other := next.In[0]
				if other == v {
					other = next.In[1]
				}
				if after, ok := onlyReader(readers[v][0] + 1); ok && after.Kind == graph.ReLU && owed[other] == 0 && other != v {
					owed[v] = op.Shift
				}
			}
		case graph.Add:
			owed[v] = max(owed[op.In[0]], owed[op.In[1]])
		}
	}
	return owed
}

// A max-pool of a ReLU's outputs runs before that ReLU: ReLU and ⌊·/2^s⌋
// are monotone, so
//
//	MaxPool(⌊ReLU(x)/2^s⌋) = ⌊ReLU(MaxPool(x))/2^s⌋
//
// (a padded position, 0, is below every ReLU output and changes no window's
// ReLU(max) either), and the ReLU with its truncation then runs on the
// pooled values, a quarter of them for ResNet's 3×3, stride-2 stem pool.
// The max-pool then compares x over ℓ bits instead of the truncated
// outputs over ℓ − s, which costs more a comparison and two flights more
// a Max step, but on ResNet's stem it saves more: 802,816 ReLUs with
// their truncation become 200,704 (nonlinear's cost formulas: 141.9 MB →
// 112.3 MB for the stem's ReLU and max-pool, 60 → 64 flights). Exact when
// the max-pool's inputs stay within ±2^{ℓ−2} (Max's range): the ReLU's
// input must be a value the plaintext reference checks, so either it owes
// no shift or it is a Trunc's output, whose untruncated shares are the
// checked value before it (a shift owed through an Add is not checked).

// pooledReLUs returns, per op, whether it is a ReLU run after the max-pool
// that is its only reader (see above).
func pooledReLUs(n *graph.Net, owed []int) []bool {
	readers := make([][]int, len(n.Ops)+1)
	for i, op := range n.Ops {
		for _, v := range op.In {
			readers[v] = append(readers[v], i)
		}
	}
	pooled := make([]bool, len(n.Ops))
	for i, op := range n.Ops {
		v, u := i+1, op.In[0]
		if op.Kind != graph.ReLU || len(readers[v]) != 1 || n.Ops[readers[v][0]].Kind != graph.MaxPool {
			continue
		}
		if owed[u] == 0 || (u > 0 && n.Ops[u-1].Kind == graph.Trunc) {
			pooled[i] = true
		}
	}
	return pooled
}
