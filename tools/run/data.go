package run

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	"math/cmplx"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"

	"github.com/rosemary-fhe/rosemary/engine"
)

// dataset is a workload's stored data, a query generator and the
// plaintext reference.
type dataset interface {
	// stored returns the stored node's plaintexts by node name.
	stored() map[string][]*rlwe.Plaintext
	// constant reports whether a stored node is a public constant the host
	// could make itself (not data a host-only run must pull).
	constant(name string) bool
	// query returns fresh encrypted inputs and a checker of the outputs.
	query(enc *rlwe.Encryptor) (map[string][]engine.Value, func(dec *rlwe.Decryptor, out map[string][]engine.Value) error, error)
}

// randUint64 draws uniform values in [0, bound) from crypto/rand (by
// rejection, so unbiased).
func randUint64(bound uint64) (uint64, error) {
	limit := math.MaxUint64 - math.MaxUint64%bound
	var b [8]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			return 0, fmt.Errorf("run: randomness: %w", err)
		}
		if v := binary.LittleEndian.Uint64(b[:]); v < limit {
			return v % bound, nil
		}
	}
}

// vecData is a vector database: Plaintexts CKKS plaintexts, each packing
// Slots/Dim random vectors of Dim coordinates in [−1, 1].
type vecData struct {
	params  ckks.Parameters
	enc     *ckks.Encoder
	dim     int
	groups  int
	vectors [][]float64 // per plaintext, the slot values
	pts     []*rlwe.Plaintext
}

func randFloat() (float64, error) {
	v, err := randUint64(1 << 53)
	if err != nil {
		return 0, err
	}
	return 2*float64(v)/(1<<53) - 1, nil
}

func newVecData(params ckks.Parameters, plaintexts, dim, groups int) (*vecData, error) {
	d := &vecData{params: params, enc: ckks.NewEncoder(params), dim: dim, groups: groups}
	for k := 0; k < plaintexts; k++ {
		v := make([]float64, params.MaxSlots())
		for i := range v {
			x, err := randFloat()
			if err != nil {
				return nil, err
			}
			v[i] = x
		}
		pt := ckks.NewPlaintext(params, params.MaxLevel())
		if err := d.enc.Encode(v, pt); err != nil {
			return nil, fmt.Errorf("run: encode vector block %d: %w", k, err)
		}
		d.vectors = append(d.vectors, v)
		d.pts = append(d.pts, pt)
	}
	return d, nil
}

func (d *vecData) constant(string) bool { return false }

func (d *vecData) stored() map[string][]*rlwe.Plaintext {
	return map[string][]*rlwe.Plaintext{"vectors": d.pts}
}

func (d *vecData) query(enc *rlwe.Encryptor) (map[string][]engine.Value, func(*rlwe.Decryptor, map[string][]engine.Value) error, error) {
	slots := d.params.MaxSlots()
	q := make([]float64, d.dim)
	for i := range q {
		x, err := randFloat()
		if err != nil {
			return nil, nil, err
		}
		q[i] = x
	}
	rep := make([]float64, slots) // the query replicated across the slots
	for i := range rep {
		rep[i] = q[i%d.dim]
	}
	pt := ckks.NewPlaintext(d.params, d.params.MaxLevel())
	if err := d.enc.Encode(rep, pt); err != nil {
		return nil, nil, err
	}
	ct, err := enc.EncryptNew(pt)
	if err != nil {
		return nil, nil, err
	}
	steps := 0
	for 1<<steps < d.dim {
		steps++
	}
	window := 1 << steps
	per := len(d.vectors) / d.groups
	check := func(dec *rlwe.Decryptor, out map[string][]engine.Value) error {
		scores := out["scores"]
		if len(scores) != d.groups {
			return fmt.Errorf("run: %d score sums, want %d", len(scores), d.groups)
		}
		got := make([]complex128, slots)
		for g, s := range scores {
			if s.Ct == nil {
				return fmt.Errorf("run: score sum %d missing", g)
			}
			if err := d.enc.Decode(dec.DecryptNew(s.Ct), got); err != nil {
				return fmt.Errorf("run: decode scores: %w", err)
			}
			// Slot i·Dim holds Σ over the group of the inner product of the
			// query with the vector starting there (its distance follows
			// from ‖q−x‖² = ‖q‖² − 2⟨q,x⟩ + ‖x‖²).
			for i := 0; i < slots; i += d.dim {
				var want float64
				for b := g * per; b < (g+1)*per; b++ {
					for k := 0; k < window; k++ {
						want += rep[(i+k)%slots] * d.vectors[b][(i+k)%slots]
					}
				}
				if diff := cmplx.Abs(got[i] - complex(want, 0)); diff > 1e-3*(1+math.Abs(want)) {
					return fmt.Errorf("run: group %d vector at slot %d: score %.6f, want %.6f", g, i, real(got[i]), want)
				}
			}
		}
		return nil
	}
	return map[string][]engine.Value{"query": {{Ct: ct}}}, check, nil
}
