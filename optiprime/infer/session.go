package infer

import (
	"errors"
	"fmt"
	"time"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/model"
	"github.com/rosemary-fhe/rosemary/optiprime/nonlinear"
	"github.com/rosemary-fhe/rosemary/optiprime/share"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
	"github.com/rosemary-fhe/rosemary/optiprime/wire"
)

// Config is what the client chooses for a session.
type Config struct {
	Protocol linear.Protocol
	LogN     int // ring degree of the HE linear layers: 12..15 (13: N = 8192, the default)
}

// DefaultLogN is the ring degree used unless configured: at N = 4096 the
// 109-bit modulus leaves OptiEncode no budget for its automorphisms.
const DefaultLogN = 13

// LayerStats are the per-layer costs of a session, summed over its images.
// Traffic is measured on the connection (headers included); times are this
// party's wall-clock time in the phase (which includes waiting for the
// peer).
type LayerStats struct {
	Layer     string           `json:"layer"`
	Shape     linear.ConvShape `json:"shape"`
	Plan      linear.Counters  `json:"plan"`   // the linear plan's counters, per image
	Linear    transport.Stats  `json:"linear"` // HE linear layer
	Nonlinear transport.Stats  `json:"nonlinear"`
	LinearS   float64          `json:"linear_s"`
	NonlinS   float64          `json:"nonlinear_s"`
}

// Stats are a session's counters.
type Stats struct {
	Protocol string          `json:"protocol"`
	LogN     int             `json:"log_n"`
	LogT     int             `json:"log_t"`
	Images   int             `json:"images"`
	Setup    transport.Stats `json:"setup"` // keys and OT setup
	SetupS   float64         `json:"setup_s"`
	Layers   []LayerStats    `json:"layers"`
	Total    transport.Stats `json:"total"`
}

// plans builds both parties' identical per-layer plans.
func plans(q *model.Quantized, h wire.Hello) (cheetah.Parameters, []*linear.Plan, error) {
	lit, err := cheetah.PresetForLogN(h.LogN)
	if err != nil {
		return cheetah.Parameters{}, nil, fmt.Errorf("infer: %w", err)
	}
	params, err := cheetah.NewParameters(lit)
	if err != nil {
		return cheetah.Parameters{}, nil, fmt.Errorf("infer: parameters: %w", err)
	}
	opt := linear.Options{LogT: q.LogT, WeightBits: q.WeightBits}
	var ps []*linear.Plan
	for i, s := range q.Arch {
		pl, err := linear.NewPlan(h.Protocol, params, s, opt)
		if err != nil {
			return cheetah.Parameters{}, nil, fmt.Errorf("infer: layer %d plan: %w", i, err)
		}
		ps = append(ps, pl)
	}
	return params, ps, nil
}

func newStats(q *model.Quantized, h wire.Hello, ps []*linear.Plan) *Stats {
	st := &Stats{Protocol: h.Protocol.String(), LogN: h.LogN, LogT: q.LogT}
	for i, s := range q.Arch {
		name := fmt.Sprintf("conv%d", i+1)
		if s.H == 1 && s.W == 1 && s.Kh == 1 && s.Kw == 1 {
			name = fmt.Sprintf("fc%d", i+1)
		}
		st.Layers = append(st.Layers, LayerStats{Layer: name, Shape: s, Plan: ps[i].Counters})
	}
	return st
}

// Serve runs the server side of one session on conn with the model q
// (weights included) and returns the session's counters. It closes conn
// when it fails.
func Serve(conn *transport.Conn, q *model.Quantized) (st *Stats, err error) {
	// Keys come from the peer and are decoded by Lattigo, whose evaluator
	// assumes well-formed keys; a malformed one that passes the checks
	// above must end this session with an error, not the process.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("infer: malformed peer data: %v", r)
			protocol.Abort(conn, err)
		}
	}()
	st, err = serve(conn, q)
	if err != nil {
		protocol.Abort(conn, err)
	}
	return st, err
}

func serve(conn *transport.Conn, q *model.Quantized) (*Stats, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	t0 := time.Now()
	b, err := protocol.Recv(conn, frameHello)
	if err != nil {
		return nil, fmt.Errorf("infer: hello: %w", err)
	}
	h, _, err := protocol.ParseHello(b, 0)
	if err != nil {
		return nil, err
	}
	params, ps, err := plans(q, h)
	if err != nil {
		return nil, err
	}
	pub, err := q.Public().MarshalBinary()
	if err != nil {
		return nil, err
	}
	if err := conn.Send(frameModel, pub); err != nil {
		return nil, fmt.Errorf("infer: send model: %w", err)
	}
	// Keys.
	b, err = protocol.Recv(conn, framePK)
	if err != nil {
		return nil, fmt.Errorf("infer: public key: %w", err)
	}
	pk := new(rlwe.PublicKey)
	if err := pk.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("infer: public key: %w", err)
	}
	if len(pk.Value) != 2 || pk.Value[0].Q.N() != params.N() || pk.LevelQ() != params.MaxLevel() {
		return nil, errors.New("infer: public key does not match the parameters")
	}
	want := map[uint64]bool{}
	for _, pl := range ps {
		for _, g := range pl.GaloisElements() {
			want[g] = true
		}
	}
	var gks []*rlwe.GaloisKey
	for len(gks) < len(want) {
		b, err := protocol.Recv(conn, frameGalois)
		if err != nil {
			return nil, fmt.Errorf("infer: Galois key: %w", err)
		}
		idx, total, kb, err := decodeGalois(b)
		if err != nil {
			return nil, err
		}
		if idx != len(gks) || total != len(want) {
			return nil, fmt.Errorf("infer: Galois key %d of %d, want %d of %d", idx, total, len(gks), len(want))
		}
		gk, err := params.UnmarshalSeededGaloisKey(kb)
		if err != nil {
			return nil, fmt.Errorf("infer: Galois key %d: %w", idx, err)
		}
		if !want[gk.GaloisElement] {
			return nil, fmt.Errorf("infer: unexpected Galois key (element %d)", gk.GaloisElement)
		}
		want[gk.GaloisElement] = false // each element once
		gks = append(gks, gk)
	}
	ev := cheetah.NewEvaluator(params, pk, gks)
	weights := make([]*linear.Weights, len(ps))
	biases := make([][]uint64, len(ps))
	for i, pl := range ps {
		if weights[i], err = pl.PrepareWeights(ev, q.RingWeights(i)); err != nil {
			return nil, fmt.Errorf("infer: layer %d weights: %w", i, err)
		}
		biases[i] = q.RingBias(i)
	}
	if err := conn.Send(frameReady, nil); err != nil {
		return nil, fmt.Errorf("infer: send ready: %w", err)
	}
	ring, err := share.NewRing(q.LogT)
	if err != nil {
		return nil, err
	}
	party, err := nonlinear.NewParty(conn, ring)
	if err != nil {
		return nil, fmt.Errorf("infer: OT setup: %w", err)
	}
	st := newStats(q, h, ps)
	st.Setup = conn.Stats()
	st.SetupS = time.Since(t0).Seconds()
	for {
		b, err := protocol.Recv(conn, frameNext)
		if err != nil {
			return st, fmt.Errorf("infer: next: %w", err)
		}
		if len(b) != 1 || b[0] > 1 {
			return st, errors.New("infer: malformed next frame")
		}
		if b[0] == 0 {
			st.Total = conn.Stats()
			return st, nil
		}
		xs := make([]uint64, q.Arch[0].InputLen()) // the client holds the whole image
		for i, pl := range ps {
			ls := &st.Layers[i]
			s0, t := conn.Stats(), time.Now()
			b, err := protocol.Recv(conn, frameLinIn)
			if err != nil {
				return st, fmt.Errorf("infer: layer %d input: %w", i, err)
			}
			in, err := DecodeMessages(b)
			if err != nil {
				return st, fmt.Errorf("infer: layer %d input: %w", i, err)
			}
			out, ys, err := pl.EvaluatePrepared(ev, weights[i], biases[i], xs, in)
			if err != nil {
				return st, fmt.Errorf("infer: layer %d: %w", i, err)
			}
			if err := conn.Send(frameLinOut, EncodeMessages(out)); err != nil {
				return st, fmt.Errorf("infer: layer %d output: %w", i, err)
			}
			s1 := conn.Stats()
			addStats(&ls.Linear, s1.Sub(s0))
			ls.LinearS += time.Since(t).Seconds()
			t = time.Now()
			if xs, err = nonlinearStep(party, q, i, ys); err != nil {
				return st, err
			}
			addStats(&ls.Nonlinear, conn.Stats().Sub(s1))
			ls.NonlinS += time.Since(t).Seconds()
		}
		st.Images++
	}
}

// nonlinearStep runs what follows linear layer i: truncation by the
// layer's weight scale and ReLU, or, after the last layer, opening the
// logits to the client (party 1).
func nonlinearStep(p *nonlinear.Party, q *model.Quantized, i int, y []uint64) ([]uint64, error) {
	if i == len(q.Arch)-1 {
		out, err := p.RevealTo(y, 1)
		if err != nil {
			return nil, fmt.Errorf("infer: reveal logits: %w", err)
		}
		return out, nil
	}
	var err error
	if q.Shift[i] > 0 {
		if y, err = p.Truncate(y, q.Shift[i]); err != nil {
			return nil, fmt.Errorf("infer: layer %d truncate: %w", i, err)
		}
	}
	if y, err = p.ReLU(y); err != nil {
		return nil, fmt.Errorf("infer: layer %d ReLU: %w", i, err)
	}
	return y, nil
}

func addStats(dst *transport.Stats, s transport.Stats) {
	dst.BytesC2S += s.BytesC2S
	dst.BytesS2C += s.BytesS2C
	dst.Frames += s.Frames
	dst.Flights += s.Flights
}

// Client is the client side of a session: it holds the secret key and the
// images and learns the logits.
type Client struct {
	conn   *transport.Conn
	pub    *model.Quantized
	plans  []*linear.Plan
	lc     *linear.Client
	party  *nonlinear.Party
	ring   share.Ring
	stats  *Stats
	closed bool
}

// NewClient opens a session on conn: it announces the configuration,
// receives the public model, sends the public and Galois keys and sets up
// OT. It closes conn when it fails.
func NewClient(conn *transport.Conn, cfg Config) (*Client, error) {
	c, err := newClient(conn, cfg)
	if err != nil {
		protocol.Abort(conn, err)
	}
	return c, err
}

func newClient(conn *transport.Conn, cfg Config) (*Client, error) {
	if cfg.LogN == 0 {
		cfg.LogN = DefaultLogN
	}
	t0 := time.Now()
	h := protocol.Hello(cfg.Protocol, cfg.LogN)
	hb := h.Append(nil)
	if _, _, err := protocol.ParseHello(hb, 0); err != nil {
		return nil, err
	}
	if err := conn.Send(frameHello, hb); err != nil {
		return nil, fmt.Errorf("infer: send hello: %w", err)
	}
	b, err := protocol.Recv(conn, frameModel)
	if err != nil {
		return nil, fmt.Errorf("infer: model: %w", err)
	}
	pub := new(model.Quantized)
	if err := pub.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("infer: model: %w", err)
	}
	params, ps, err := plans(pub, h)
	if err != nil {
		return nil, err
	}
	lc := linear.NewClient(params)
	pkb, err := lc.Keys.PK.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("infer: public key: %w", err)
	}
	if err := conn.Send(framePK, pkb); err != nil {
		return nil, fmt.Errorf("infer: send public key: %w", err)
	}
	gks, err := lc.SeededGaloisKeys(ps...)
	if err != nil {
		return nil, fmt.Errorf("infer: Galois keys: %w", err)
	}
	for i, gk := range gks {
		kb, err := params.MarshalSeededGaloisKey(gk)
		if err != nil {
			return nil, fmt.Errorf("infer: Galois key: %w", err)
		}
		if err := conn.Send(frameGalois, encodeGalois(i, len(gks), kb)); err != nil {
			return nil, fmt.Errorf("infer: send Galois key: %w", err)
		}
	}
	if _, err := protocol.Recv(conn, frameReady); err != nil {
		return nil, fmt.Errorf("infer: ready: %w", err)
	}
	ring, err := share.NewRing(pub.LogT)
	if err != nil {
		return nil, err
	}
	party, err := nonlinear.NewParty(conn, ring)
	if err != nil {
		return nil, fmt.Errorf("infer: OT setup: %w", err)
	}
	st := newStats(pub, h, ps)
	st.Setup = conn.Stats()
	st.SetupS = time.Since(t0).Seconds()
	return &Client{conn: conn, pub: pub, plans: ps, lc: lc, party: party, ring: ring, stats: st}, nil
}

// Model returns the public model the server announced.
func (c *Client) Model() *model.Quantized { return c.pub }

// Result is the outcome of one private inference.
type Result struct {
	Logits []int64 // at scale ActScale + Shift[last], as the plaintext reference
	Class  int
}

// Infer classifies one image privately. After an error the session is
// unusable (the connection is closed).
func (c *Client) Infer(img []byte) (*Result, error) {
	if c.closed {
		return nil, errors.New("infer: session closed")
	}
	r, err := c.infer(img)
	if err != nil {
		c.closed = true
		protocol.Abort(c.conn, err)
	}
	return r, err
}

func (c *Client) infer(img []byte) (*Result, error) {
	x, err := c.pub.Input(img)
	if err != nil {
		return nil, err
	}
	if err := c.conn.Send(frameNext, []byte{1}); err != nil {
		return nil, fmt.Errorf("infer: next: %w", err)
	}
	xc := make([]uint64, len(x))
	for i, v := range x {
		xc[i] = c.ring.FromSigned(v)
	}
	for i, pl := range c.plans {
		ls := &c.stats.Layers[i]
		s0, t := c.conn.Stats(), time.Now()
		up, err := pl.EncryptInput(c.lc, xc)
		if err != nil {
			return nil, fmt.Errorf("infer: layer %d encrypt: %w", i, err)
		}
		if err := c.conn.Send(frameLinIn, EncodeMessages(up)); err != nil {
			return nil, fmt.Errorf("infer: layer %d input: %w", i, err)
		}
		b, err := protocol.Recv(c.conn, frameLinOut)
		if err != nil {
			return nil, fmt.Errorf("infer: layer %d output: %w", i, err)
		}
		down, err := DecodeMessages(b)
		if err != nil {
			return nil, fmt.Errorf("infer: layer %d output: %w", i, err)
		}
		y, err := pl.DecryptOutput(c.lc, down)
		if err != nil {
			return nil, fmt.Errorf("infer: layer %d decrypt: %w", i, err)
		}
		s1 := c.conn.Stats()
		addStats(&ls.Linear, s1.Sub(s0))
		ls.LinearS += time.Since(t).Seconds()
		t = time.Now()
		if xc, err = nonlinearStep(c.party, c.pub, i, y); err != nil {
			return nil, err
		}
		addStats(&ls.Nonlinear, c.conn.Stats().Sub(s1))
		ls.NonlinS += time.Since(t).Seconds()
	}
	logits := make([]int64, len(xc))
	for i, v := range xc {
		logits[i] = c.ring.ToSigned(v)
	}
	c.stats.Images++
	return &Result{Logits: logits, Class: model.Argmax(logits)}, nil
}

// Stats returns the client's counters so far.
func (c *Client) Stats() Stats {
	st := *c.stats
	st.Layers = append([]LayerStats(nil), c.stats.Layers...)
	st.Total = c.conn.Stats()
	return st
}

// Close ends the session (the server's Serve returns) and closes the
// connection.
func (c *Client) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	err := c.conn.Send(frameNext, []byte{0})
	if cerr := c.conn.Close(); err == nil {
		err = cerr
	}
	return err
}
