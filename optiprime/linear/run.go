package linear

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
)

// Client holds the client's keys for one parameter set.
type Client struct {
	Params cheetah.Parameters
	Keys   *cheetah.Keys
	enc    *cheetah.Encryptor
	dec    *cheetah.Decryptor
}

// NewClient generates fresh client keys.
func NewClient(params cheetah.Parameters) *Client {
	k := cheetah.GenKeys(params)
	return &Client{Params: params, Keys: k, enc: cheetah.NewEncryptor(params, k.SK), dec: cheetah.NewDecryptor(params, k.SK)}
}

// GaloisKeys generates the Galois keys the plans need.
func (c *Client) GaloisKeys(plans ...*Plan) ([]*rlwe.GaloisKey, error) {
	var els []uint64
	for _, pl := range plans {
		els = append(els, pl.GaloisElements()...)
	}
	return cheetah.GenGaloisKeys(c.Params, c.Keys.SK, els)
}

// SeededGaloisKeys generates the Galois keys the plans need, each to be
// sent seeded (cheetah.MarshalSeededGaloisKey: about half the bytes).
func (c *Client) SeededGaloisKeys(plans ...*Plan) ([]*cheetah.SeededGaloisKey, error) {
	var els []uint64
	for _, pl := range plans {
		els = append(els, pl.GaloisElements()...)
	}
	return cheetah.GenSeededGaloisKeys(c.Params, c.Keys.SK, els)
}

// EncryptInput encrypts the client's share xc (CHW, len Ci·H·W, values mod
// 2^ℓ) into the layer's input messages (tile-major, then channel block).
func (pl *Plan) EncryptInput(c *Client, xc []uint64) ([][]byte, error) {
	if len(xc) != pl.Shape.InputLen() {
		return nil, fmt.Errorf("linear: client share has %d entries, want %d", len(xc), pl.Shape.InputLen())
	}
	if err := checkRange(xc, pl.Opt.LogT, "client share"); err != nil {
		return nil, err
	}
	// Independent ciphertexts, encrypted on all CPUs (the encryptor is
	// safe for concurrent use).
	out := make([][]byte, pl.Tiles()*pl.Inputs())
	err := forEach(Workers(), len(out), func(_, idx int) error {
		tile, cb := idx/pl.Inputs(), idx%pl.Inputs()
		ct, seed, err := c.enc.EncryptSeeded(pl.inputPoly(xc, tile, cb), pl.LogTp)
		if err != nil {
			return fmt.Errorf("linear: encrypt input %d/%d: %w", tile, cb, err)
		}
		out[idx], err = pl.Params.MarshalInput(ct, seed)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DecryptOutput decrypts the server's messages into the client's output
// share (CHW, len Co·OutH·OutW).
func (pl *Plan) DecryptOutput(c *Client, msgs [][]byte) ([]uint64, error) {
	want := pl.Tiles() * pl.Groups()
	if len(msgs) != want {
		return nil, fmt.Errorf("linear: %d output messages, want %d", len(msgs), want)
	}
	share := make([]uint64, pl.Shape.OutputLen())
	lowMask := uint64(1)<<uint(pl.LogC) - 1
	outMask := uint64(1)<<uint(pl.Opt.LogT) - 1
	// Outputs fill disjoint entries; DecryptCompressed is safe for
	// concurrent use.
	err := forEach(Workers(), len(msgs), func(_, idx int) error {
		msg := msgs[idx]
		tile, group := idx/pl.Groups(), idx%pl.Groups()
		comp, err := pl.Params.UnmarshalCompressed(msg)
		if err != nil {
			return fmt.Errorf("linear: output %d: %w", idx, err)
		}
		if comp.LogT != pl.LogTp {
			return fmt.Errorf("linear: output %d for t=2^%d, plan uses 2^%d", idx, comp.LogT, pl.LogTp)
		}
		pos, dst := pl.outputMap(tile, group)
		vals, err := c.dec.DecryptCompressed(comp, pos)
		if err != nil {
			return fmt.Errorf("linear: output %d: %w", idx, err)
		}
		for k, v := range vals {
			if v&lowMask != 0 {
				return fmt.Errorf("linear: output %d coefficient %d not a multiple of C=%d (decryption failure)", idx, pos[k], pl.C())
			}
			share[dst[k]] = (v >> uint(pl.LogC)) & outMask
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return share, nil
}

// Weights are a layer's weight plaintexts, encoded once (offline) for a
// plan: NTT form at the top level, including BSGS's precomputed
// constant-weight terms. A layer whose plaintexts would exceed
// weightBudget bytes is not encoded ahead: each plaintext is encoded when
// the evaluation uses it (once per tile) and dropped, so memory stays
// bounded (the downsample of ResNet-50's last stage alone would hold
// 12.9 GB) at the price of moving that encoding into the online time.
type Weights struct {
	pl     *Plan
	w      []uint64
	plains map[plainRef]*cheetah.Plaintext // nil: encode on use
}

// weightBudget bounds the bytes of plaintexts PrepareWeights encodes ahead
// (a variable so that tests can force encoding on use).
var weightBudget int64 = 2 << 30

// Lazy reports whether the plaintexts are encoded on use (see Weights).
func (ws *Weights) Lazy() bool { return ws.plains == nil }

// PrepareWeights checks the weights (OIHW, mod 2^ℓ, centered values within
// the plan's public weight bound) and encodes every plaintext the schedule
// uses.
func (pl *Plan) PrepareWeights(ev *cheetah.Evaluator, w []uint64) (*Weights, error) {
	if err := pl.checkWeights(w); err != nil {
		return nil, err
	}
	ws := &Weights{pl: pl, w: w}
	refs := pl.plainRefs()
	if int64(len(refs))*pl.plainBytes() > weightBudget {
		return ws, nil
	}
	ws.plains = make(map[plainRef]*cheetah.Plaintext, len(refs))
	pts := make([]*cheetah.Plaintext, len(refs))
	var terms [][]kernelTerm
	if pl.BSGS {
		terms = pl.kernelTerms(w)
	}
	// EncodePlain only reads the evaluator's parameters: safe to share.
	err := forEach(Workers(), len(refs), func(_, i int) error {
		var err error
		pts[i], err = ev.EncodePlain(pl.plainPolyTerms(w, terms, refs[i]), pl.Params.MaxLevel(), pl.LogTp)
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, ref := range refs {
		ws.plains[ref] = pts[i]
	}
	return ws, nil
}

// checkWeights checks the layer's weights: OIHW, mod 2^ℓ, centered values
// within the plan's public weight bound.
func (pl *Plan) checkWeights(w []uint64) error {
	if len(w) != pl.Shape.WeightLen() {
		return fmt.Errorf("linear: %d weights, want %d", len(w), pl.Shape.WeightLen())
	}
	bw := uint64(1) << uint(pl.Opt.WeightBits-1)
	mask := uint64(1)<<uint(pl.LogTp) - 1
	for i, v := range w {
		if v>>uint(pl.Opt.LogT) != 0 {
			return fmt.Errorf("linear: weight %d = %d not below 2^%d", i, v, pl.Opt.LogT)
		}
		c := pl.liftWeight(v)
		if c > bw && (-c)&mask > bw {
			return fmt.Errorf("linear: weight %d outside the public bound ±2^%d", i, pl.Opt.WeightBits-1)
		}
	}
	return nil
}

// plainBytes is the size of one encoded weight plaintext (NTT form, every
// limb at the top level).
func (pl *Plan) plainBytes() int64 {
	return int64(pl.Params.N()) * int64(pl.Params.MaxLevel()+1) * 8
}

// Evaluate is PrepareWeights followed by EvaluatePrepared.
func (pl *Plan) Evaluate(ev *cheetah.Evaluator, w, bias, xs []uint64, in [][]byte) ([][]byte, []uint64, error) {
	ws, err := pl.PrepareWeights(ev, w)
	if err != nil {
		return nil, nil, err
	}
	return pl.EvaluatePrepared(ev, ws, bias, xs, in)
}

// EvaluatePrepared is the server's online side: it takes the client's input
// messages, its own input share xs and an optional per-output-channel bias
// (added to the server's share), and returns the output messages and the
// server's output share.
func (pl *Plan) EvaluatePrepared(ev *cheetah.Evaluator, ws *Weights, bias, xs []uint64, in [][]byte) ([][]byte, []uint64, error) {
	return pl.EvaluateParallel([]*cheetah.Evaluator{ev}, ws, bias, xs, in)
}

// EvaluateParallel is EvaluatePrepared with the layer's independent units
// (input blocks, baby steps, output groups; see schedule) spread over one
// goroutine per evaluator. Evaluators are not safe for concurrent use, so
// each worker needs its own (same keys). The result is the same.
func (pl *Plan) EvaluateParallel(evs []*cheetah.Evaluator, ws *Weights, bias, xs []uint64, in [][]byte) ([][]byte, []uint64, error) {
	s := pl.Shape
	if len(evs) == 0 {
		return nil, nil, fmt.Errorf("linear: no evaluator")
	}
	if ws == nil || ws.pl != pl {
		return nil, nil, fmt.Errorf("linear: weights prepared for another plan")
	}
	if len(xs) != s.InputLen() {
		return nil, nil, fmt.Errorf("linear: server share has %d entries, want %d", len(xs), s.InputLen())
	}
	if bias != nil && len(bias) != s.Co {
		return nil, nil, fmt.Errorf("linear: %d biases, want %d", len(bias), s.Co)
	}
	if len(in) != pl.Tiles()*pl.Inputs() {
		return nil, nil, fmt.Errorf("linear: %d input messages, want %d", len(in), pl.Tiles()*pl.Inputs())
	}
	if err := checkRange(xs, pl.Opt.LogT, "server share"); err != nil {
		return nil, nil, err
	}
	out := make([][]byte, pl.Tiles()*pl.Groups())
	share := make([]uint64, s.OutputLen())
	engines := make([]*realEngine, len(evs))
	for i, ev := range evs {
		engines[i] = &realEngine{pl: pl, ev: ev, bias: bias, xs: xs, in: in,
			w: ws.w, plains: ws.plains, out: out, share: share, count: countEngine{pl: pl}}
	}
	var err error
	if len(engines) == 1 {
		err = pl.schedule(engines[0])
	} else {
		err = pl.scheduleParallel(engines)
	}
	if err != nil {
		return nil, nil, err
	}
	var c Counters
	for _, e := range engines {
		c.Add(e.count.c)
	}
	if c != pl.Counters {
		return nil, nil, fmt.Errorf("linear: internal: executed counters %+v differ from plan %+v", c, pl.Counters)
	}
	return out, share, nil
}

func checkRange(x []uint64, logT int, what string) error {
	for i, v := range x {
		if v>>uint(logT) != 0 {
			return fmt.Errorf("linear: %s entry %d = %d not below 2^%d", what, i, v, logT)
		}
	}
	return nil
}

// realEngine runs the schedule on ciphertexts.
type realEngine struct {
	pl     *Plan
	ev     *cheetah.Evaluator
	bias   []uint64
	xs     []uint64
	in     [][]byte
	w      []uint64
	plains map[plainRef]*cheetah.Plaintext // nil: encode on use
	out    [][]byte
	share  []uint64
	count  countEngine
}

func ct(h handle) *cheetah.Ciphertext { return h.(*cheetah.Ciphertext) }

func (re *realEngine) input(tile, cb int) (handle, error) {
	_, _ = re.count.input(tile, cb)
	idx := tile*re.pl.Inputs() + cb
	msg := re.in[idx]
	re.count.c.BytesC2S += int64(len(msg)) - int64(re.pl.Params.InputSize())
	c, err := re.pl.Params.UnmarshalInput(msg)
	if err != nil {
		return nil, fmt.Errorf("linear: input %d: %w", idx, err)
	}
	if c.LogT != re.pl.LogTp {
		return nil, fmt.Errorf("linear: input %d for t=2^%d, plan uses 2^%d", idx, c.LogT, re.pl.LogTp)
	}
	if err := re.ev.AddPlain(c, re.pl.inputPoly(re.xs, tile, cb)); err != nil {
		return nil, err
	}
	return c, nil
}

func (re *realEngine) plaintext(ref plainRef) (*cheetah.Plaintext, error) {
	if re.plains == nil {
		return re.ev.EncodePlain(re.pl.plainPoly(re.w, ref), re.pl.Params.MaxLevel(), re.pl.LogTp)
	}
	if pt, ok := re.plains[ref]; ok {
		return pt, nil
	}
	return nil, fmt.Errorf("linear: internal: plaintext %+v not prepared", ref)
}

func (re *realEngine) mulAcc(acc, in handle, ref plainRef) (handle, error) {
	_, _ = re.count.mulAcc(acc, in, ref)
	pt, err := re.plaintext(ref)
	if err != nil {
		return nil, err
	}
	if acc == nil {
		return re.ev.MulPlainNew(ct(in), pt)
	}
	return acc, re.ev.MulPlainThenAdd(ct(in), pt, ct(acc))
}

func (re *realEngine) add(a, b handle) (handle, error) { return a, re.ev.Add(ct(a), ct(b)) }
func (re *realEngine) sub(a, b handle) (handle, error) { return a, re.ev.Sub(ct(a), ct(b)) }
func (re *realEngine) monomial(h handle, k int) handle { return re.ev.MulMonomialNew(ct(h), k) }
func (re *realEngine) copy(h handle) handle            { return ct(h).CopyNew() }
func (re *realEngine) neg(h handle) handle {
	return re.ev.MulMonomialNew(ct(h), re.pl.Params.N()) // X^N = −1
}

func (re *realEngine) automorphism(h handle, g uint64) (handle, error) {
	_, _ = re.count.automorphism(h, g)
	return re.ev.AutomorphismNew(ct(h), g)
}

func (re *realEngine) output(h handle, tile, group int) error {
	pl := re.pl
	if err := re.count.output(h, tile, group); err != nil {
		return err
	}
	c := ct(h)
	if c.Noise+1 > pl.Noise {
		return fmt.Errorf("linear: internal: noise bound 2^%.1f above the plan's 2^%.1f", c.Noise.Log2(), pl.Noise.Log2())
	}
	N := pl.Params.N()
	buf := make([]byte, 8*N)
	if _, err := rand.Read(buf); err != nil {
		return fmt.Errorf("linear: mask: %w", err)
	}
	lmask := uint64(1)<<uint(pl.Opt.LogT) - 1
	tmask := uint64(1)<<uint(pl.LogTp) - 1
	R := make([]uint64, N)
	negR := make([]uint64, N)
	for i := range R {
		R[i] = binary.LittleEndian.Uint64(buf[8*i:]) & lmask
		negR[i] = (-(R[i] << uint(pl.LogC))) & tmask
	}
	if err := re.ev.AddPlain(c, negR); err != nil {
		return err
	}
	c.Noise = pl.Noise // the public bound, so sizes match the plan exactly
	if err := re.ev.Rerandomize(c, pl.Opt.Lambda); err != nil {
		return err
	}
	pos, dst := pl.outputMap(tile, group)
	comp, err := re.ev.Compress(c, pos)
	if err != nil {
		return err
	}
	if comp.D0 != pl.D0 || comp.D1 != pl.D1 {
		return fmt.Errorf("linear: internal: dropped bits (%d,%d) differ from plan (%d,%d)", comp.D0, comp.D1, pl.D0, pl.D1)
	}
	msg, err := comp.MarshalBinary(pl.Params.QiBits()[0])
	if err != nil {
		return err
	}
	re.out[tile*pl.Groups()+group] = msg
	plane := pl.Shape.OutH() * pl.Shape.OutW()
	for k, p := range pos {
		v := R[p]
		if re.bias != nil {
			v += re.bias[dst[k]/plane]
		}
		re.share[dst[k]] = v & lmask
	}
	return nil
}
