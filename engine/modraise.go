package engine

import (
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
)

// ModRaise lifts a level-0 ciphertext to q_0…q_level as Lattigo's CKKS
// bootstrapping ModUp does (circuits/ckks/bootstrapping, Evaluator.ModUp,
// the branch without sparse keys): INTT at level 0, each coefficient's
// centered representative (v ≥ ⌊q_0/2⌋ is negative) reduced into
// q_1…q_level, NTT. The message scaling and the trace of ModUp are
// separate nodes of the expansion. It is the host's ModRaise and the
// reference the interpreter's is checked against (crosscheck).
func ModRaise(params rlwe.Parameters, ct *rlwe.Ciphertext, level int) (*rlwe.Ciphertext, error) {
	if ct.Level() != 0 || level < 1 || level > params.MaxLevel() {
		return nil, fmt.Errorf("ModRaise lifts level 0 to a level in [1, %d], got %d → %d", params.MaxLevel(), ct.Level(), level)
	}
	out := ct.CopyNew()
	out.Resize(out.Degree(), level)
	r0 := params.RingQ().AtLevel(0)
	rq := params.RingQ().AtLevel(level)
	Q := rq.ModuliChain()
	brc := rq.BRedConstants()
	q := Q[0]
	for _, p := range out.Value {
		r0.INTT(p, p)
		for j, v := range p.Coeffs[0] {
			neg := v >= q>>1
			if neg {
				v = q - v
			}
			for i := 1; i <= level; i++ {
				x := ring.BRedAdd(v, Q[i], brc[i])
				if neg && x != 0 {
					x = Q[i] - x
				}
				p.Coeffs[i][j] = x
			}
		}
		rq.NTT(p, p)
	}
	return out, nil
}
