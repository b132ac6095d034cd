package linear

import (
	"fmt"
	"math"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
)

// The cost model OptiPrime (the per-layer choice) minimizes: the CPU
// seconds of a layer's online work on both parties plus its bytes at LAN
// speed, from the plan's counters. The unit costs are this repository's
// own, measured on this machine (2 cores, N = 8192): a least-squares fit
// with nonnegative coefficients of each convolution's server and client CPU
// seconds (weight encoding apart) on its counters, over the 42 layers of
// two ResNet-18 sessions, Cheetah and OptiEncode-BSGS (`rosemary mpc bench
// --e2e --net resnet18 --json`, BENCHMARKS.md "Where the time goes"; load
// 4–8, so the absolute values are inflated, the ratios are what decide);
// they scale with N·(limbs).
const (
	costMul   = 0.26e-3 // s per plaintext-ciphertext multiply-accumulate (server)
	costAut   = 2.2e-3  // s per automorphism with key switching (server)
	costIn    = 3.7e-3  // s per input ciphertext: server 1.2 ms (decode, NTT, its share), client 2.5 ms (encode, encrypt)
	costOut   = 5.2e-3  // s per output ciphertext: server 4.8 ms (mask, re-randomize, compress), client 0.45 ms (decrypt)
	costPlain = 0.35e-3 // s per weight plaintext encoded online (layers too large to encode ahead)
	costByte  = 1e-9    // s per byte moved (loopback TLS, both ends)
	refN      = 8192
	refLimbs  = 2
)

// Cost estimates the layer's online seconds under this plan (see above).
func (pl *Plan) Cost() float64 { return pl.costOf(pl.Counters) }

// costOf is the model applied to counts c of this plan's layer (the plan's
// own, or those measured running it).
func (pl *Plan) costOf(c Counters) float64 {
	scale := float64(pl.Params.N()) / refN * float64(pl.Params.MaxLevel()+1) / refLimbs
	cpu := costMul*float64(c.CPMults) + costAut*float64(c.Automorphisms) + costIn*float64(c.InputCts) + costOut*float64(c.OutputCts)
	if pl.WeightBytes() > weightBudget {
		cpu += costPlain * float64(pl.NumPlaintexts()) * float64(pl.Tiles())
	}
	return cpu*scale + costByte*float64(c.BytesC2S+c.BytesS2C)
}

// WeightBytes is the memory the layer's encoded weight plaintexts take.
func (pl *Plan) WeightBytes() int64 { return int64(len(pl.plainRefs())) * pl.plainBytes() }

// newCheapestPlan returns the plan of least Cost among the layouts (ties:
// the earlier in Protocols).
func newCheapestPlan(params cheetah.Parameters, s ConvShape, opt Options) (*Plan, error) {
	var best *Plan
	cost := math.Inf(1)
	var errs []error
	for _, p := range Protocols {
		pl, err := NewPlan(p, params, s, opt)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if c := pl.Cost(); c < cost {
			best, cost = pl, c
		}
	}
	if best == nil {
		return nil, fmt.Errorf("linear: optiprime: no layout fits: %v", errs)
	}
	return best, nil
}
