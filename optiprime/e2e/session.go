package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
	"github.com/rosemary-fhe/rosemary/optiprime/graph"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/nonlinear"
	"github.com/rosemary-fhe/rosemary/optiprime/share"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// Config is what the client chooses.
type Config struct {
	Protocol linear.Protocol
	LogN     int // 12..15; 0 means 13
	// Progress, if set, is called after each operation with its index and
	// client-side costs (server times arrive at the end).
	Progress func(i int, s OpStats)
}

// DefaultLogN is the HE ring degree unless configured (N = 8192).
const DefaultLogN = 13

// session is what both parties derive from the public network and the
// hello: the ring and one plan per convolution.
type session struct {
	net    *graph.Net
	h      hello
	params cheetah.Parameters
	ring   share.Ring
	plans  map[int]*linear.Plan // by op index
	galois []uint64
	last   []int  // per value: the last op reading it (frees shares)
	owed   []int  // per value: a truncation deferred past the next ReLU (fuse.go)
	pooled []bool // per op: a ReLU run after the max-pool that reads it (fuse.go)
}

func newSession(n *graph.Net, h hello) (*session, error) {
	lit, err := cheetah.PresetForLogN(h.LogN)
	if err != nil {
		return nil, fmt.Errorf("e2e: %w", err)
	}
	params, err := cheetah.NewParameters(lit)
	if err != nil {
		return nil, fmt.Errorf("e2e: parameters: %w", err)
	}
	ring, err := share.NewRing(n.LogT)
	if err != nil {
		return nil, err
	}
	s := &session{net: n, h: h, params: params, ring: ring, plans: map[int]*linear.Plan{}}
	opt := linear.Options{LogT: n.LogT, WeightBits: n.WeightBits}
	byShape := map[linear.ConvShape]*linear.Plan{}
	seen := map[uint64]bool{}
	for i, op := range n.Ops {
		if op.Kind != graph.Conv {
			continue
		}
		pl, ok := byShape[op.Shape]
		if !ok {
			if pl, err = linear.NewPlan(h.Protocol, params, op.Shape, opt); err != nil {
				return nil, fmt.Errorf("e2e: %s: %w", op.Name, err)
			}
			byShape[op.Shape] = pl
			for _, g := range pl.GaloisElements() {
				if !seen[g] {
					seen[g] = true
					s.galois = append(s.galois, g)
				}
			}
		}
		s.plans[i] = pl
	}
	s.owed = owedShifts(n)
	s.pooled = pooledReLUs(n, s.owed)
	s.last = make([]int, len(n.Ops)+1)
	for i, op := range n.Ops {
		for _, v := range op.In {
			s.last[v] = i
		}
	}
	return s, nil
}

// heKind is the breakdown kind of a convolution: "he:" and the variant its
// plan runs.
func heKind(pl *linear.Plan) string { return KindHE + pl.Variant() }

// free drops the shares no later operation reads.
func (s *session) free(vals [][]uint64, i int) {
	for v := range vals[:i+1] {
		if vals[v] != nil && s.last[v] <= i {
			vals[v] = nil
		}
	}
}

// local runs an operation that needs no communication, or the local part
// before a protocol: Add, and AvgPool's sum times the reciprocal.
func (s *session) local(op graph.Op, vals [][]uint64) []uint64 {
	r := s.ring
	in := vals[op.In[0]]
	switch op.Kind {
	case graph.Add:
		// At most one operand owes a shift (fuse.go): lift the other to its
		// scale.
		owes, other := in, vals[op.In[1]]
		sh := s.owed[op.In[0]]
		if s.owed[op.In[1]] != 0 {
			owes, other, sh = other, owes, s.owed[op.In[1]]
		}
		if sh != 0 {
			other = r.ScaleVec(make([]uint64, len(other)), other, 1<<sh)
		}
		return r.AddVec(make([]uint64, len(in)), owes, other)
	case graph.AvgPool:
		d := in
		plane := len(d) / op.Out.C
		out := make([]uint64, op.Out.C)
		for c := range out {
			var acc uint64
			for _, v := range d[c*plane : (c+1)*plane] {
				acc += v
			}
			out[c] = r.Mul(acc, uint64(op.Mul))
		}
		return out
	}
	return nil
}

// nonlinearOp runs an OT-based operation (both parties call it alike).
func (s *session) nonlinearOp(p *nonlinear.Party, pr *profiler, i int, op graph.Op, vals [][]uint64) ([]uint64, error) {
	in := vals[op.In[0]]
	trunc := func(y []uint64, shift int, nonneg bool) ([]uint64, error) {
		pr.push(KindTrunc)
		defer pr.pop()
		if nonneg {
			return p.TruncateNonneg(y, shift)
		}
		return p.TruncateExact(y, shift)
	}
	switch op.Kind {
	case graph.Trunc:
		if s.owed[i+1] != 0 {
			return in, nil // truncated after the ReLU that reads it
		}
		return p.TruncateExact(in, op.Shift)
	case graph.ReLU:
		if s.pooled[i] {
			return in, nil // run after its max-pool, on the pooled values
		}
		if sh := s.owed[op.In[0]]; sh != 0 {
			// The truncation deferred to here, fused with the ReLU (its
			// comparison in the ReLU's millionaires' run; charged to relu).
			return p.ReLUTruncate(in, sh)
		}
		return p.ReLU(in)
	case graph.MaxPool:
		idx, _ := graph.Windows(s.inDims(op), op.K, op.Stride, op.Pad)
		g := make([]uint64, len(idx))
		for j, k := range idx {
			if k >= 0 {
				g[j] = in[k]
			}
		}
		if v := op.In[0]; v > 0 && s.pooled[v-1] {
			// The ReLU that produced v did not run: pool its input, then
			// run it (with the truncation it owes) on the pooled values.
			m, err := p.MaxPool(g, op.K*op.K)
			if err != nil {
				return nil, err
			}
			pr.push(KindReLU)
			defer pr.pop()
			if sh := s.owed[s.net.Ops[v-1].In[0]]; sh != 0 {
				return p.ReLUTruncate(m, sh)
			}
			return p.ReLU(m)
		}
		return p.MaxPool(g, op.K*op.K)
	case graph.AvgPool:
		if op.In[0] > 0 && s.net.Ops[op.In[0]-1].Kind == graph.ReLU && op.Mul > 0 {
			// A positive multiple of a sum of ReLU outputs is nonnegative.
			return trunc(s.local(op, vals), op.Shift, true)
		}
		return trunc(s.local(op, vals), op.Shift, false)
	}
	return nil, fmt.Errorf("e2e: op %d (%s) is not a nonlinear operation", i, op.Name)
}

func (s *session) inDims(op graph.Op) graph.Dims {
	if op.In[0] == 0 {
		return s.net.Input
	}
	return s.net.Ops[op.In[0]-1].Out
}

// Serve runs the server side of one session with the network n (weights
// included) and returns when the client has its output. It closes conn if
// it fails.
func Serve(conn *transport.Conn, n *graph.Net) (err error) {
	return (&Server{net: n}).Serve(conn)
}

// Server serves sessions of one network. Prepare encodes, ahead of any
// session, the weight plaintexts of a (protocol, log N) choice —
// input-independent work, BSGS's constant-weight terms included — so that
// the sessions that choose it skip the encoding (their reports show no
// prep time); other choices encode during the session, as Serve does.
// A Server is safe for concurrent sessions once prepared.
type Server struct {
	net      *graph.Net
	mu       sync.Mutex
	prepared map[prepKey]*prepared
}

type prepKey struct {
	proto linear.Protocol
	logN  int
}

// prepared is a session template (its plans) and the weights encoded for
// its plans: held, or in weight files (PrepareDir).
type prepared struct {
	s       *session
	weights map[int]*linear.Weights // by op index; nil: in dir
	dir     string
	cpuS    float64
}

// NewServer returns a server of n with nothing prepared.
func NewServer(n *graph.Net) *Server { return &Server{net: n} }

// Prepare encodes the weights of every convolution for sessions choosing
// proto and log N (0: DefaultLogN), holds them, and returns the CPU seconds
// it took. Layers too large to hold encoded (linear.Weights.Lazy) still
// encode on use. ResNet-18's take ≈ 10 GB at N = 8192: see PrepareDir.
func (sv *Server) Prepare(proto linear.Protocol, logN int) (float64, error) {
	return sv.prepare(proto, logN, "")
}

// PrepareDir is Prepare with the encoded weights written to dir, one weight
// file per convolution (linear.Plan.WriteWeights), instead of held: while
// encoding the server holds one layer, and a session reads each layer's
// file while the layer before it runs (weights.go), so it holds at most
// two (ResNet-18 at N = 8192: ≤ 1.6 GB against ≈ 10 GB). A file already in
// dir for the same plan and weights (its header's digest) is kept, so a
// restarted server does not encode again; files are written under a
// temporary name and renamed, so a partial file never has a layer's name.
// The returned CPU seconds are this call's (encoding and writing).
func (sv *Server) PrepareDir(proto linear.Protocol, logN int, dir string) (float64, error) {
	if dir == "" {
		return 0, errors.New("e2e: PrepareDir: no directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("e2e: %w", err)
	}
	return sv.prepare(proto, logN, dir)
}

func (sv *Server) prepare(proto linear.Protocol, logN int, dir string) (float64, error) {
	if logN == 0 {
		logN = DefaultLogN
	}
	if err := sv.net.Validate(); err != nil {
		return 0, err
	}
	cpu0, _ := processCPU()
	h := hello{Hello: protocol.Hello(proto, logN), Digest: sv.net.Digest()}
	s, err := newSession(sv.net, h)
	if err != nil {
		return 0, err
	}
	ev := cheetah.NewEvaluator(s.params, nil, nil)
	p := &prepared{s: s, dir: dir}
	if dir == "" {
		p.weights = map[int]*linear.Weights{}
	}
	for i, op := range sv.net.Ops {
		if op.Kind != graph.Conv {
			continue
		}
		if dir != "" {
			if err := p.writeLayer(ev, i, op); err != nil {
				return 0, err
			}
			continue
		}
		if p.weights[i], err = s.prepareWeights(ev, op, s.plans[i]); err != nil {
			return 0, err
		}
	}
	cpu1, _ := processCPU()
	p.cpuS = (cpu1 - cpu0).Seconds()
	sv.mu.Lock()
	if sv.prepared == nil {
		sv.prepared = map[prepKey]*prepared{}
	}
	sv.prepared[prepKey{proto, logN}] = p
	sv.mu.Unlock()
	return p.cpuS, nil
}

func (sv *Server) lookup(h hello) *prepared {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	p := sv.prepared[prepKey{h.Protocol, h.LogN}]
	if p == nil || p.s.h != h {
		return nil
	}
	return p
}

// ringWeights is a convolution's weights mod 2^ℓ.
func (s *session) ringWeights(op graph.Op) []uint64 {
	wr := make([]uint64, len(op.W))
	for j, v := range op.W {
		wr[j] = s.ring.FromSigned(v)
	}
	return wr
}

// prepareWeights encodes one convolution's weights for its plan.
func (s *session) prepareWeights(ev *cheetah.Evaluator, op graph.Op, pl *linear.Plan) (*linear.Weights, error) {
	ws, err := pl.PrepareWeights(ev, s.ringWeights(op))
	if err != nil {
		return nil, fmt.Errorf("e2e: %s weights: %w", op.Name, err)
	}
	return ws, nil
}

// Serve runs the server side of one session (see the function Serve).
func (sv *Server) Serve(conn *transport.Conn) (err error) {
	defer func() {
		// Lattigo assumes well-formed keys; a malformed one that passed
		// the checks must end the session, not the process.
		if r := recover(); r != nil {
			err = fmt.Errorf("e2e: malformed peer data: %v", r)
		}
		if err != nil {
			protocol.Abort(conn, err)
		}
	}()
	return sv.serve(conn)
}

func (sv *Server) serve(conn *transport.Conn) error {
	n := sv.net
	if err := n.Validate(); err != nil {
		return err
	}
	pr := newProfiler(conn, KindSetup)
	cpu0 := pr.cpu0
	b, err := protocol.Recv(conn, frameHello)
	if err != nil {
		return fmt.Errorf("e2e: hello: %w", err)
	}
	h, err := decodeHello(b)
	if err != nil {
		return err
	}
	if h.Digest != n.Digest() {
		return fmt.Errorf("e2e: the client's architecture differs from the server's %s", n.Name)
	}
	pre := sv.lookup(h)
	var s *session
	if pre != nil {
		s = pre.s
	} else if s, err = newSession(n, h); err != nil {
		return err
	}
	if err := conn.Send(frameAccept, nil); err != nil {
		return err
	}
	b, err = protocol.Recv(conn, framePK)
	if err != nil {
		return fmt.Errorf("e2e: public key: %w", err)
	}
	pk := new(rlwe.PublicKey)
	if err := pk.UnmarshalBinary(b); err != nil {
		return fmt.Errorf("e2e: public key: %w", err)
	}
	if len(pk.Value) != 2 || pk.Value[0].Q.N() != s.params.N() || pk.LevelQ() != s.params.MaxLevel() {
		return errors.New("e2e: public key does not match the parameters")
	}
	want := map[uint64]bool{}
	for _, g := range s.galois {
		want[g] = true
	}
	var gks []*rlwe.GaloisKey
	for len(gks) < len(want) {
		b, err := protocol.Recv(conn, frameGalois)
		if err != nil {
			return fmt.Errorf("e2e: Galois key: %w", err)
		}
		idx, total, kb, err := transport.ParseIndexed(b, maxGaloisKey)
		if err != nil {
			return err
		}
		if idx != len(gks) || total != len(want) {
			return fmt.Errorf("e2e: Galois key %d of %d, want %d of %d", idx, total, len(gks), len(want))
		}
		gk, err := s.params.UnmarshalSeededGaloisKey(kb)
		if err != nil {
			return fmt.Errorf("e2e: Galois key %d: %w", idx, err)
		}
		if !want[gk.GaloisElement] {
			return fmt.Errorf("e2e: unexpected Galois key (element %d)", gk.GaloisElement)
		}
		want[gk.GaloisElement] = false // each element once
		gks = append(gks, gk)
	}
	// One evaluator per worker: evaluators are not safe for concurrent use.
	evs := make([]*cheetah.Evaluator, linear.Workers())
	for i := range evs {
		evs[i] = cheetah.NewEvaluator(s.params, pk, gks)
	}
	if err := conn.Send(frameReady, nil); err != nil {
		return err
	}
	party, err := nonlinear.NewParty(conn, s.ring)
	if err != nil {
		return fmt.Errorf("e2e: OT setup: %w", err)
	}
	party.SetTrace(pr.trace)
	cpu1, _ := processCPU()
	rep := serverReport{SetupCPUS: (cpu1 - cpu0).Seconds(), Ops: make([]serverOp, len(n.Ops))}
	var stream *weightStream
	if pre != nil {
		rep.AheadCPUS = pre.cpuS
		if pre.weights == nil {
			stream = pre.stream(n)
			defer stream.close()
		}
	}
	vals := make([][]uint64, len(n.Ops)+1)
	vals[0] = make([]uint64, n.Input.Len()) // the client holds the image
	for i, op := range n.Ops {
		w := startWatch(conn)
		var out []uint64
		switch op.Kind {
		case graph.Conv:
			pl := s.plans[i]
			pr.switchTo(heKind(pl))
			var ws *linear.Weights
			if stream != nil {
				pr.push(heKind(pl) + KindHELoad)
				ws, err = stream.next(i) // encoded ahead, read one layer ahead (PrepareDir)
				pr.pop()
				if err != nil {
					return err
				}
			} else if pre != nil {
				ws = pre.weights[i] // encoded ahead (Prepare)
			} else {
				pr.push(heKind(pl) + KindHEEncode)
				t := time.Now()
				pc, _ := processCPU()
				if ws, err = s.prepareWeights(evs[0], op, pl); err != nil {
					return err
				}
				rep.Ops[i].PrepS = time.Since(t).Seconds()
				pc2, _ := processCPU()
				rep.Ops[i].PrepCPUS = (pc2 - pc).Seconds()
				pr.pop()
			}
			bias := make([]uint64, len(op.B))
			for j, v := range op.B {
				bias[j] = s.ring.FromSigned(v)
			}
			in := make([][]byte, pl.Tiles()*pl.Inputs())
			for j := range in {
				if in[j], err = protocol.Recv(conn, frameLinIn); err != nil {
					return fmt.Errorf("e2e: %s input %d: %w", op.Name, j, err)
				}
			}
			msgs, ys, err := pl.EvaluateParallel(evs, ws, bias, vals[op.In[0]], in)
			if err != nil {
				return fmt.Errorf("e2e: %s: %w", op.Name, err)
			}
			for j, m := range msgs {
				if err := conn.Send(frameLinOut, m); err != nil {
					return fmt.Errorf("e2e: %s output %d: %w", op.Name, j, err)
				}
			}
			out = ys
		case graph.Add:
			pr.switchTo(KindAdd)
			out = s.local(op, vals)
		default:
			pr.switchTo(op.Kind.String())
			if out, err = s.nonlinearOp(party, pr, i, op, vals); err != nil {
				return fmt.Errorf("e2e: %s: %w", op.Name, err)
			}
		}
		vals[i+1] = out
		s.free(vals, i)
		rep.Ops[i].WallS, rep.Ops[i].CPUS, _ = w.stop()
	}
	pr.switchTo(KindReveal)
	if _, err := party.RevealTo(vals[len(n.Ops)], 1); err != nil {
		return err
	}
	if stream != nil {
		rep.Streamed = stream.bytes.Load()
	}
	rep.Profile = pr.finish()
	rep.CPUS = rep.Profile.CPUS
	b, err = json.Marshal(rep)
	if err != nil {
		return err
	}
	return conn.Send(frameStats, b)
}

// Infer runs the client side of one session: pub is the public network
// (no weights needed), img the fixed-point input at ActScale. It returns
// the output (signed, at ActScale) and the session's report (without the
// correctness fields, which Run fills). It closes conn if it fails.
func Infer(conn *transport.Conn, pub *graph.Net, img []int64, cfg Config) (out []int64, rep *Report, err error) {
	defer func() {
		if err != nil {
			protocol.Abort(conn, err)
		}
	}()
	return infer(conn, pub, img, cfg)
}

func infer(conn *transport.Conn, n *graph.Net, img []int64, cfg Config) ([]int64, *Report, error) {
	if cfg.LogN == 0 {
		cfg.LogN = DefaultLogN
	}
	if len(img) != n.Input.Len() {
		return nil, nil, fmt.Errorf("e2e: image has %d entries, want %d", len(img), n.Input.Len())
	}
	pr := newProfiler(conn, KindSetup)
	start := pr.t0
	h := hello{Hello: protocol.Hello(cfg.Protocol, cfg.LogN), Digest: n.Digest()}
	if _, err := decodeHello(h.encode()); err != nil {
		return nil, nil, err
	}
	s, err := newSession(n, h)
	if err != nil {
		return nil, nil, err
	}
	if err := conn.Send(frameHello, h.encode()); err != nil {
		return nil, nil, err
	}
	if _, err := protocol.Recv(conn, frameAccept); err != nil {
		return nil, nil, fmt.Errorf("e2e: hello: %w", err)
	}
	lc := linear.NewClient(s.params)
	pkb, err := lc.Keys.PK.MarshalBinary()
	if err != nil {
		return nil, nil, err
	}
	if err := conn.Send(framePK, pkb); err != nil {
		return nil, nil, err
	}
	gks, err := cheetah.GenSeededGaloisKeys(s.params, lc.Keys.SK, s.galois)
	if err != nil {
		return nil, nil, err
	}
	for i, gk := range gks {
		kb, err := s.params.MarshalSeededGaloisKey(gk)
		if err != nil {
			return nil, nil, err
		}
		if err := conn.Send(frameGalois, transport.AppendIndexed(nil, i, len(gks), kb)); err != nil {
			return nil, nil, err
		}
	}
	if _, err := protocol.Recv(conn, frameReady); err != nil {
		return nil, nil, fmt.Errorf("e2e: keys: %w", err)
	}
	party, err := nonlinear.NewParty(conn, s.ring)
	if err != nil {
		return nil, nil, fmt.Errorf("e2e: OT setup: %w", err)
	}
	party.SetTrace(pr.trace)
	rep := &Report{Net: n.Name, Protocol: cfg.Protocol.String(), LogN: cfg.LogN, LogT: n.LogT, Layers: make([]OpStats, len(n.Ops))}
	setup := conn.Stats()
	rep.SetupS = time.Since(start).Seconds()
	rep.SetupBytes = setup.BytesC2S + setup.BytesS2C
	vals := make([][]uint64, len(n.Ops)+1)
	vals[0] = make([]uint64, len(img))
	for j, v := range img {
		vals[0][j] = s.ring.FromSigned(v)
	}
	for i, op := range n.Ops {
		w := startWatch(conn)
		var out []uint64
		switch op.Kind {
		case graph.Conv:
			pl := s.plans[i]
			pr.switchTo(heKind(pl))
			pr.push(heKind(pl) + KindHEEncrypt)
			up, err := pl.EncryptInput(lc, vals[op.In[0]])
			pr.pop()
			if err != nil {
				return nil, nil, fmt.Errorf("e2e: %s: %w", op.Name, err)
			}
			for j, m := range up {
				if err := conn.Send(frameLinIn, m); err != nil {
					return nil, nil, fmt.Errorf("e2e: %s input %d: %w", op.Name, j, err)
				}
			}
			down := make([][]byte, pl.Tiles()*pl.Groups())
			for j := range down {
				if down[j], err = protocol.Recv(conn, frameLinOut); err != nil {
					return nil, nil, fmt.Errorf("e2e: %s output %d: %w", op.Name, j, err)
				}
			}
			pr.push(heKind(pl) + KindHEDecrypt)
			out, err = pl.DecryptOutput(lc, down)
			pr.pop()
			if err != nil {
				return nil, nil, fmt.Errorf("e2e: %s: %w", op.Name, err)
			}
		case graph.Add:
			pr.switchTo(KindAdd)
			out = s.local(op, vals)
		default:
			pr.switchTo(op.Kind.String())
			if out, err = s.nonlinearOp(party, pr, i, op, vals); err != nil {
				return nil, nil, fmt.Errorf("e2e: %s: %w", op.Name, err)
			}
		}
		vals[i+1] = out
		s.free(vals, i)
		wall, cpu, st := w.stop()
		l := OpStats{Op: op.Name, Kind: op.Kind.String(), Class: s.class(i, op), Elements: op.Out.Len(),
			WallS: wall, ClientCPUS: cpu, BytesC2S: st.BytesC2S, BytesS2C: st.BytesS2C, Flights: st.Flights, Rounds: st.Rounds()}
		if pl, ok := s.plans[i]; ok {
			c := pl.Counters
			l.HE = &c
			l.Variant = pl.Variant()
		}
		rep.Layers[i] = l
		if cfg.Progress != nil {
			cfg.Progress(i, l)
		}
	}
	pr.switchTo(KindReveal)
	res, err := party.RevealTo(vals[len(n.Ops)], 1)
	if err != nil {
		return nil, nil, err
	}
	rep.Profile.Client = pr.finish()
	rep.WallS = rep.Profile.Client.WallS
	total := conn.Stats()
	b, err := protocol.Recv(conn, frameStats)
	if err != nil {
		return nil, nil, fmt.Errorf("e2e: server report: %w", err)
	}
	var sr serverReport
	if err := json.Unmarshal(b, &sr); err != nil {
		return nil, nil, fmt.Errorf("e2e: server report: %w", err)
	}
	if len(sr.Ops) != len(n.Ops) {
		return nil, nil, fmt.Errorf("e2e: server report has %d operations, want %d", len(sr.Ops), len(n.Ops))
	}
	for i, so := range sr.Ops {
		rep.Layers[i].ServerS, rep.Layers[i].ServerCPUS = so.WallS, so.CPUS
		rep.Layers[i].PrepS, rep.Layers[i].PrepCPUS = so.PrepS, so.PrepCPUS
	}
	rep.ClientCPUS = rep.Profile.Client.CPUS
	rep.ServerCPUS = sr.CPUS
	rep.Profile.Server = sr.Profile
	rep.ServerAheadCPUS = sr.AheadCPUS
	rep.ServerWeightsStreamed = sr.Streamed
	rep.BytesC2S, rep.BytesS2C = total.BytesC2S, total.BytesS2C
	rep.TotalBytes = total.BytesC2S + total.BytesS2C
	rep.Flights, rep.Rounds = total.Flights, total.Rounds()
	rep.finish()
	out := make([]int64, len(res))
	for j, v := range res {
		out[j] = s.ring.ToSigned(v)
	}
	return out, rep, nil
}
