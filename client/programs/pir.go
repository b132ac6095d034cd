package programs

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/rosemary-fhe/rosemary/client/internal/session"
	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/pir"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// PIRSession is a PIR database on a device, ready for queries: its Plan
// compiled, the Plan's device segment set on the device as a stream
// program, the evaluation keys stored beside the database. The secret key
// stays here.
type PIRSession struct {
	Preset fhe.Preset
	Params bgv.Parameters
	Shape  pir.Shape
	Plan   *compiler.Plan
	Stream *lower.StreamProgram
	// SetupBytes are the payload bytes of the keys and program uploads.
	SetupBytes int64

	dev      api.Device
	db       string
	progName string
	client   *pir.Client
	query    int // IR node of the query input
	stored   int // IR node of the database
	answer   int // IR node whose instance the segment returns
	keys     []*devicepb.KeyBinding
	meta     rlwe.MetaData
	// host: the plan keeps the scan on the host (a database small enough
	// that pulling it costs less than the device's work): the host pulls
	// the plaintexts and answers with the Lattigo evaluator.
	host   bool
	server *pir.Server
	evk    *rlwe.MemEvaluationKeySet // the evaluation keys (public)
}

// EvaluationKeys are the session's evaluation keys (public: a host-side
// evaluator can use them too).
func (s *PIRSession) EvaluationKeys() rlwe.EvaluationKeySet { return s.evk }

// NewPIRSession compiles the expanded-query PIR for shape, sets its device
// segment on dev, generates the evaluation keys from sk and stores them.
// The database's plaintexts must already be stored (WritePIRDatabase, or
// uploaded) under session.PIRPlaintextPrefix(db).
func NewPIRSession(ctx context.Context, dev api.Device, db string, preset fhe.Preset, shape pir.Shape, sk *rlwe.SecretKey) (*PIRSession, error) {
	return NewPIRSessionWith(ctx, dev, db, preset, shape, sk, session.Options{})
}

// NewPIRSessionWith is NewPIRSession with options.
func NewPIRSessionWith(ctx context.Context, dev api.Device, db string, preset fhe.Preset, shape pir.Shape, sk *rlwe.SecretKey,
	opt session.Options) (*PIRSession, error) {
	if opt.KeyPrefix == "" {
		opt.KeyPrefix = db + "/keys"
	}
	params, err := preset.BGVParameters()
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	prog, err := workload.ExpandedPIR{Name: "pir", Params: preset.Name, Rows: int64(shape.Rows), Cols: int64(shape.Cols)}.Program()
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	plan, err := compileForRosemary(prog)
	if err != nil {
		return nil, err
	}
	seg := -1
	if opt.FollowPlan {
		for i := range plan.Segments {
			if plan.Segments[i].OnSSD() && plan.Computes(i) {
				seg = i
			}
		}
	} else {
		plan, seg = plan.AllOnDevice()
	}
	s := &PIRSession{Preset: preset, Params: params, Shape: shape, Plan: plan, dev: dev, db: db}
	if s.client, err = pir.NewClient(params, shape, sk); err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	if seg < 0 {
		return s, s.hostPlan(sk)
	}
	if s.Stream, err = plan.StreamSegment(seg, lower.RingOf(params.Parameters), fhe.BGV, preset.T); err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	s.query, s.stored, s.answer = -1, -1, -1
	for _, sn := range s.Stream.Nodes {
		n := plan.Program.Nodes[sn.Node]
		switch {
		case sn.Kind == lower.StreamInput && n.Role == ir.RoleQuery:
			s.query = sn.Node
		case sn.Kind == lower.StreamStored && n.Role == ir.RoleDatabase:
			s.stored = sn.Node
		case sn.Out:
			s.answer = sn.Node
		}
	}
	if s.query < 0 || s.stored < 0 || s.answer < 0 || plan.Program.Nodes[s.answer].Level != 0 {
		return nil, fmt.Errorf("session: the device segment does not take the query, scan the database and return the answer")
	}
	var sent int64
	if s.progName, sent, err = setStream(ctx, dev, "pir", s.Stream); err != nil {
		return nil, err
	}
	s.SetupBytes += sent
	if err := s.storeKeys(ctx, sk, opt); err != nil {
		return nil, err
	}
	ptMeta := bgv.NewPlaintext(params, params.MaxLevel()-1)
	ptMeta.IsBatched = false
	q, err := s.client.Query(0)
	if err != nil {
		return nil, err
	}
	md, err := engine.ProgramMeta(plan.Program, params, params, map[string]rlwe.MetaData{"query": *q.MetaData, "database": *ptMeta.MetaData})
	if err != nil {
		return nil, err
	}
	s.meta = md[s.answer]
	return s, nil
}

// hostPlan prepares the host side of a plan that scans on the host.
func (s *PIRSession) hostPlan(sk *rlwe.SecretKey) error {
	s.host = true
	kg := rlwe.NewKeyGenerator(s.Params)
	var gks []*rlwe.GaloisKey
	for _, g := range s.Shape.GaloisElements() {
		gks = append(gks, kg.GenGaloisKeyNew(g, sk))
	}
	s.evk = rlwe.NewMemEvaluationKeySet(kg.GenRelinearizationKeyNew(sk), gks...)
	var err error
	if s.server, err = pir.NewServer(s.Params, s.Shape, s.evk, runtime.GOMAXPROCS(0)); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	return nil
}

// OnDevice reports whether the plan scans the database on the device.
func (s *PIRSession) OnDevice() bool { return !s.host }

// storeKeys generates the keys the stream program names and stores them
// next to the database.
func (s *PIRSession) storeKeys(ctx context.Context, sk *rlwe.SecretKey, opt session.Options) error {
	keys, evk, n, err := storeStreamKeys(ctx, s.dev, s.Params.Parameters, s.Stream, sk, opt)
	s.keys, s.evk, s.SetupBytes = keys, evk, s.SetupBytes+n
	return err
}

// Get retrieves record index: the query is encrypted here, the device
// expands it and scans the database, the answer is decrypted here. The
// device never sees the index.
func (s *PIRSession) Get(ctx context.Context, index int) (*session.PIRQuery, error) {
	start := time.Now()
	q, err := s.client.Query(index)
	if err != nil {
		return nil, fmt.Errorf("session: query %d: %w", index, err)
	}
	if s.host {
		return s.hostGet(ctx, index, q, start)
	}
	wire := &api.WireCount{}
	ct, resp, err := s.Answer(api.WithWireCount(ctx, wire), q)
	if err != nil {
		return nil, fmt.Errorf("session: query %d: %w", index, err)
	}
	rec, err := s.client.Decode(index, ct)
	if err != nil {
		return nil, fmt.Errorf("session: query %d: %w", index, err)
	}
	out := &session.PIRQuery{Index: index, Record: rec, QueryBytes: ctBytes(q), AnswerBytes: ctBytes(ct),
		Seconds: time.Since(start).Seconds(), Device: resp}
	out.Measure(wire)
	return out, nil
}

// Query encrypts the query for record index (the client side of Get).
func (s *PIRSession) Query(index int) (*rlwe.Ciphertext, error) { return s.client.Query(index) }

// Answer runs the device segment on an encrypted query and returns the
// answer ciphertext.
func (s *PIRSession) Answer(ctx context.Context, q *rlwe.Ciphertext) (*rlwe.Ciphertext, *devicepb.RunStreamResponse, error) {
	if s.host {
		return nil, nil, errors.New("session: the plan answers on the host")
	}
	var limbs engine.Limbs
	for _, p := range q.Value {
		limbs = append(limbs, p.Coeffs...)
	}
	req := &devicepb.RunStreamRequest{Program: s.progName,
		Inputs: []*devicepb.StreamValues{{Node: uint32(s.query), Instances: api.Instances([]engine.Limbs{limbs})}},
		Stored: []*devicepb.StoredBinding{{Node: uint32(s.stored), Prefix: session.PIRPlaintextPrefix(s.db), PerObject: session.PIRPerObject,
			RowLength: uint64(s.Shape.Cols), TileRows: session.PIRTileRows}},
		Keys: s.keys}
	resp, err := s.dev.RunStream(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	outs, err := api.Outputs(resp, s.answer)
	if err != nil {
		return nil, resp, err
	}
	ct := rlwe.NewCiphertext(s.Params, 1, 0)
	*ct.MetaData = s.meta
	if len(outs) != 1 || !engine.CopyLimbs(outs[0], ct.Value, 1) {
		return nil, resp, errors.New("the device returned no answer of one level-0 ciphertext")
	}
	return ct, resp, nil
}

func ctBytes(ct *rlwe.Ciphertext) int64 {
	var n int64
	for _, p := range ct.Value {
		n += 8 * int64(len(p.Coeffs)) * int64(len(p.Coeffs[0]))
	}
	return n
}

// hostGet answers on the host: the plaintexts cross from the device.
func (s *PIRSession) hostGet(ctx context.Context, index int, q *rlwe.Ciphertext, start time.Time) (*session.PIRQuery, error) {
	db := &devicePlaintexts{dev: s.dev, prefix: session.PIRPlaintextPrefix(s.db), shape: s.Shape, objs: map[int64][][]uint64{}}
	ans, err := s.server.Answer(ctx, q, db)
	if err != nil {
		return nil, fmt.Errorf("session: query %d on the host: %w", index, err)
	}
	rec, err := s.client.Decode(index, ans)
	if err != nil {
		return nil, fmt.Errorf("session: query %d: %w", index, err)
	}
	return &session.PIRQuery{Index: index, Record: rec, PulledBytes: db.pulled, Seconds: time.Since(start).Seconds()}, nil
}

// devicePlaintexts reads a database's plaintexts from the device, object
// by object (a host-side scan).
type devicePlaintexts struct {
	dev    api.Device
	prefix string
	shape  pir.Shape
	mu     sync.Mutex
	objs   map[int64][][]uint64
	pulled int64
}

// Plaintext implements pir.Database.
func (d *devicePlaintexts) Plaintext(ctx context.Context, p int, dst []uint64) error {
	pos := session.PIRPosition(d.shape, p)
	j := pos / session.PIRPerObject
	d.mu.Lock()
	defer d.mu.Unlock()
	o, ok := d.objs[j]
	if !ok {
		resp, err := d.dev.Get(ctx, &devicepb.GetRequest{Name: api.StoredObjectName(d.prefix, j)})
		if err != nil {
			return err
		}
		if _, o, err = api.ObjectLimbs(resp); err != nil {
			return err
		}
		d.objs[j] = o
		d.pulled += int64(len(o)) * int64(len(dst)) * 8
	}
	k := int(pos % session.PIRPerObject)
	if k >= len(o) || len(o[k]) != len(dst) {
		return fmt.Errorf("session: object %d has no plaintext %d of %d coefficients", j, k, len(dst))
	}
	copy(dst, o[k])
	return nil
}
