package session

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	goruntime "runtime"
	"sync"
	"time"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/pir"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// PIRPerObject is the number of plaintexts per store object of a PIR
// database (the most polys an object holds).
const PIRPerObject = 255

// PIRTileRows is the height of the tiles a PIR database is stored in
// (api.TilePosition): the lanes of the device's multiply-accumulate
// loop, which reads a tile column by column.
const PIRTileRows = lower.MACLanes

// pirPosition is the stored position of plaintext p.
func pirPosition(shape pir.Shape, p int) int64 {
	return api.TilePosition(int64(p), int64(shape.Rows*shape.Cols), int64(shape.Cols), PIRTileRows)
}

// PIRPlaintextObject is where plaintext p of database db is stored: the
// object's name and the plaintext's poly within it.
func PIRPlaintextObject(db string, shape pir.Shape, p int) (string, int) {
	pos := pirPosition(shape, p)
	return api.StoredObjectName(PIRPlaintextPrefix(db), pos/PIRPerObject), int(pos % PIRPerObject)
}

// PIRPlaintextPrefix is the object-name prefix of a database's plaintexts
// (object j holds plaintexts j·PIRPerObject … (j+1)·PIRPerObject − 1).
func PIRPlaintextPrefix(db string) string { return db + "/pt/" }

// WritePIRDatabase writes the Rows·Cols plaintexts of a database into
// sink through a PIRLoader (compact 2-byte words, tiles of PIRTileRows
// rows, PIRPerObject per object). block(p, buf) fills buf with the records
// of plaintext p (PerPlaintext·RecordSize bytes); the last plaintext's
// missing records are left out. progress, if not nil, gets the bytes
// written so far and the total. It returns the bytes of the database.
func WritePIRDatabase(ctx context.Context, sink ObjectSink, db string, shape pir.Shape, block func(p int, buf []byte) error,
	progress func(done, total int64)) (int64, error) {
	params, err := pirParameters(shape)
	if err != nil {
		return 0, err
	}
	total := int64(shape.Rows*shape.Cols) * int64(2*shape.N)
	var report func(int64)
	if progress != nil {
		report = func(done int64) { progress(done, total) }
	}
	l, err := NewPIRLoader(sink, db, params, shape.RecordSize, report)
	if err != nil {
		return 0, err
	}
	recs := make([]byte, shape.PerPlaintext*shape.RecordSize)
	for p := 0; p < shape.Plaintexts; p++ {
		clear(recs)
		if err := block(p, recs); err != nil {
			return 0, fmt.Errorf("session: records of plaintext %d: %w", p, err)
		}
		for k := 0; k < shape.PerPlaintext && p*shape.PerPlaintext+k < shape.Records; k++ {
			if err := l.Add(ctx, recs[k*shape.RecordSize:(k+1)*shape.RecordSize]); err != nil {
				return 0, err
			}
		}
	}
	got, n, err := l.Finish(ctx)
	if err != nil {
		return 0, err
	}
	if got != shape {
		return 0, fmt.Errorf("session: wrote a %+v database, want %+v", got, shape)
	}
	return n, nil
}

// pirParameters are the BGV parameters of the preset a shape's ring
// belongs to (bgv-13 for N = 2^13).
func pirParameters(shape pir.Shape) (bgv.Parameters, error) {
	for _, name := range []string{"bgv-13"} {
		pr, err := fhe.Lookup(name)
		if err != nil {
			return bgv.Parameters{}, err
		}
		if 1<<pr.LogN == shape.N {
			return pr.BGVParameters()
		}
	}
	return bgv.Parameters{}, fmt.Errorf("session: no PIR preset with N = %d", shape.N)
}

// ObjectSink stores one plaintext object of a database: its limbs as
// stored bytes (little-endian words of shape.WordSize bytes).
type ObjectSink func(ctx context.Context, name string, shape object.Shape, raw [][]byte) error

// DeviceSink uploads objects to a device (Put), keeping their word size.
func DeviceSink(dev api.Device) ObjectSink {
	return func(ctx context.Context, name string, shape object.Shape, raw [][]byte) error {
		ws := int(shape.WordSize)
		if ws != 2 && ws != 8 {
			return fmt.Errorf("session: upload of %d-byte words", shape.WordSize)
		}
		data := make([][]uint64, len(raw))
		for i, b := range raw {
			data[i] = make([]uint64, len(b)/ws)
			for j := range data[i] {
				if ws == 2 {
					data[i][j] = uint64(binary.LittleEndian.Uint16(b[2*j:]))
				} else {
					data[i][j] = binary.LittleEndian.Uint64(b[8*j:])
				}
			}
		}
		_, err := dev.Put(ctx, &api.PutRequest{Name: name, Kind: object.KindPlaintext, Polys: uint32(shape.Polys),
			Limbs: uint32(shape.Limbs), Data: data, WordBytes: uint8(ws)})
		return err
	}
}

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
	keys     []api.KeyBinding
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
// uploaded) under PIRPlaintextPrefix(db).
func NewPIRSession(ctx context.Context, dev api.Device, db string, preset fhe.Preset, shape pir.Shape, sk *rlwe.SecretKey) (*PIRSession, error) {
	return NewPIRSessionWith(ctx, dev, db, preset, shape, sk, PIRSessionOptions{})
}

// PIRSessionOptions tune NewPIRSessionWith.
type PIRSessionOptions struct {
	// KeyPrefix names the evaluation keys' objects
	// (lower.KeyID.ObjectName(KeyPrefix)); default db + "/keys".
	KeyPrefix string
	// ReuseKeys keeps key objects already stored under KeyPrefix (the
	// device lists them): evaluation keys uploaded once, reused by later
	// sessions of the same secret key.
	ReuseKeys bool
	// FollowPlan places the scan where the compiler's plan puts it, which
	// for a small database may be the host: its plaintexts then cross from
	// the device on every query. By default the scan runs on the device,
	// where the database lives (see compiler.Plan.AllOnDevice).
	FollowPlan bool
}

// NewPIRSessionWith is NewPIRSession with options.
func NewPIRSessionWith(ctx context.Context, dev api.Device, db string, preset fhe.Preset, shape pir.Shape, sk *rlwe.SecretKey,
	opt PIRSessionOptions) (*PIRSession, error) {
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
	if s.server, err = pir.NewServer(s.Params, s.Shape, s.evk, goruntime.GOMAXPROCS(0)); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	return nil
}

// OnDevice reports whether the plan scans the database on the device.
func (s *PIRSession) OnDevice() bool { return !s.host }

// storeKeys generates the keys the stream program names and stores them
// next to the database.
func (s *PIRSession) storeKeys(ctx context.Context, sk *rlwe.SecretKey, opt PIRSessionOptions) error {
	keys, evk, n, err := storeStreamKeys(ctx, s.dev, s.Params.Parameters, s.Stream, sk, opt)
	s.keys, s.evk, s.SetupBytes = keys, evk, s.SetupBytes+n
	return err
}

// storeStreamKeys generates the evaluation keys a stream program names
// and stores them under opt.KeyPrefix (keeping those already stored when
// opt.ReuseKeys), returning their bindings, the keys generated here and
// the bytes uploaded.
func storeStreamKeys(ctx context.Context, dev api.Device, params rlwe.Parameters, sp *lower.StreamProgram, sk *rlwe.SecretKey,
	opt PIRSessionOptions) ([]api.KeyBinding, *rlwe.MemEvaluationKeySet, int64, error) {
	kg := rlwe.NewKeyGenerator(params)
	evk := rlwe.NewMemEvaluationKeySet(nil)
	var keys []api.KeyBinding
	var uploaded int64
	seen := map[string]bool{}
	have := map[string]bool{}
	if opt.ReuseKeys {
		resp, err := dev.List(ctx, &api.ListRequest{Prefix: opt.KeyPrefix + "/"})
		if err != nil {
			return nil, nil, 0, fmt.Errorf("session: list keys: %w", err)
		}
		for _, o := range resp.Objects {
			if o.Kind == object.KindKey {
				have[o.Name] = true
			}
		}
	}
	for _, sn := range sp.Nodes {
		for _, l := range append([]*lower.Program{sn.Body}, sn.Steps...) {
			if l == nil || l.KeyName() == "" || seen[l.KeyName()] {
				continue
			}
			name := l.KeyName()
			seen[name] = true
			id, err := lower.ParseKeyID(name)
			if err != nil {
				return nil, nil, 0, fmt.Errorf("session: %w", err)
			}
			obj := id.ObjectName(opt.KeyPrefix)
			if have[obj] {
				keys = append(keys, api.KeyBinding{Key: name, Object: obj})
				continue
			}
			var g *rlwe.GadgetCiphertext
			if l.GaloisElement != 0 {
				gk := kg.GenGaloisKeyNew(l.GaloisElement, sk)
				evk.GaloisKeys[gk.GaloisElement] = gk
				g = &gk.GadgetCiphertext
			} else {
				evk.RelinearizationKey = kg.GenRelinearizationKeyNew(sk)
				g = &evk.RelinearizationKey.GadgetCiphertext
			}
			limbs := engine.KeyLimbs(g)
			per := len(params.Q()) + len(params.P())
			resp, err := dev.Put(ctx, &api.PutRequest{Name: obj, Kind: object.KindKey, Polys: uint32(len(limbs) / per),
				Limbs: uint32(per), Data: limbs})
			if err != nil {
				return nil, nil, 0, fmt.Errorf("session: store key %s: %w", name, err)
			}
			uploaded += int64(resp.Bytes)
			keys = append(keys, api.KeyBinding{Key: name, Object: obj})
		}
	}
	return keys, evk, uploaded, nil
}

// PIRQuery is one query's outcome.
type PIRQuery struct {
	Index  int
	Record []byte
	// QueryBytes and AnswerBytes are what crossed host↔device for this
	// query: counted on the gRPC connection (Measured), else, for an
	// in-process device, the ciphertext payloads (8 bytes per coefficient).
	QueryBytes, AnswerBytes int64
	Measured                bool
	// PayloadBytes is the query's and the answer's ciphertext payloads
	// together: the scheme's own figure, beside the measured one.
	PayloadBytes int64
	// PulledBytes: plaintext bytes the host read from the device (a plan
	// that scans on the host).
	PulledBytes int64
	Seconds     float64 // the whole query, client side
	// Device is what the device reported (nil for a host-side scan).
	Device *api.RunStreamResponse
}

// ErrIndex is returned for a record index outside the database.
var ErrIndex = pir.ErrIndexOutOfRange

// Get retrieves record index: the query is encrypted here, the device
// expands it and scans the database, the answer is decrypted here. The
// device never sees the index.
func (s *PIRSession) Get(ctx context.Context, index int) (*PIRQuery, error) {
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
	out := &PIRQuery{Index: index, Record: rec, QueryBytes: ctBytes(q), AnswerBytes: ctBytes(ct),
		Seconds: time.Since(start).Seconds(), Device: resp}
	out.measured(wire)
	return out, nil
}

// measured replaces the payload sizes with the bytes counted on the
// connection, when the device was reached through one.
func (q *PIRQuery) measured(w *api.WireCount) {
	q.PayloadBytes = q.QueryBytes + q.AnswerBytes
	if w.Measured() {
		q.QueryBytes, q.AnswerBytes, q.Measured = w.Sent(), w.Received(), true
	}
}

// Query encrypts the query for record index (the client side of Get).
func (s *PIRSession) Query(index int) (*rlwe.Ciphertext, error) { return s.client.Query(index) }

// Answer runs the device segment on an encrypted query and returns the
// answer ciphertext.
func (s *PIRSession) Answer(ctx context.Context, q *rlwe.Ciphertext) (*rlwe.Ciphertext, *api.RunStreamResponse, error) {
	if s.host {
		return nil, nil, errors.New("session: the plan answers on the host")
	}
	var limbs engine.Limbs
	for _, p := range q.Value {
		limbs = append(limbs, p.Coeffs...)
	}
	req := &api.RunStreamRequest{Program: s.progName,
		Inputs: []api.StreamValues{{Node: s.query, Instances: []engine.Limbs{limbs}}},
		Stored: []api.StoredBinding{{Node: s.stored, Prefix: PIRPlaintextPrefix(s.db), PerObject: PIRPerObject,
			RowLength: int64(s.Shape.Cols), TileRows: PIRTileRows}},
		Keys: s.keys}
	resp, err := s.dev.RunStream(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	var ans engine.Limbs
	for _, o := range resp.Outputs {
		if o.Node == s.answer && len(o.Instances) == 1 {
			ans = o.Instances[0]
		}
	}
	ct := rlwe.NewCiphertext(s.Params, 1, 0)
	*ct.MetaData = s.meta
	if ans == nil || !engine.CopyLimbs(ans, ct.Value, 1) {
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
func (s *PIRSession) hostGet(ctx context.Context, index int, q *rlwe.Ciphertext, start time.Time) (*PIRQuery, error) {
	db := &devicePlaintexts{dev: s.dev, prefix: PIRPlaintextPrefix(s.db), shape: s.Shape, objs: map[int64][][]uint64{}}
	ans, err := s.server.Answer(ctx, q, db)
	if err != nil {
		return nil, fmt.Errorf("session: query %d on the host: %w", index, err)
	}
	rec, err := s.client.Decode(index, ans)
	if err != nil {
		return nil, fmt.Errorf("session: query %d: %w", index, err)
	}
	return &PIRQuery{Index: index, Record: rec, PulledBytes: db.pulled, Seconds: time.Since(start).Seconds()}, nil
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
	pos := pirPosition(d.shape, p)
	j := pos / PIRPerObject
	d.mu.Lock()
	defer d.mu.Unlock()
	o, ok := d.objs[j]
	if !ok {
		resp, err := d.dev.Get(ctx, &api.GetRequest{Name: api.StoredObjectName(d.prefix, j)})
		if err != nil {
			return err
		}
		o = resp.Data
		d.objs[j] = o
		d.pulled += int64(len(o)) * int64(len(dst)) * 8
	}
	k := int(pos % PIRPerObject)
	if k >= len(o) || len(o[k]) != len(dst) {
		return fmt.Errorf("session: object %d has no plaintext %d of %d coefficients", j, k, len(dst))
	}
	copy(dst, o[k])
	return nil
}

// SeededRecords fills buf with the records of plaintext p of a database
// whose bytes come from a seeded ChaCha8 stream per plaintext: a database
// of any size that can be checked record by record without keeping it.
func SeededRecords(seed uint64) func(p int, buf []byte) error {
	return func(p int, buf []byte) error {
		var key [32]byte
		binary.LittleEndian.PutUint64(key[:], seed)
		binary.LittleEndian.PutUint64(key[8:], uint64(p))
		copy(key[16:], "rosemary-records")
		r := rand.NewChaCha8(key)
		_, err := r.Read(buf)
		return err
	}
}

// SeededRecord returns record index of a SeededRecords database.
func SeededRecord(seed uint64, shape pir.Shape, index int) ([]byte, error) {
	p, _, _, off, err := shape.Locate(index)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, shape.PerPlaintext*shape.RecordSize)
	if err := SeededRecords(seed)(p, buf); err != nil {
		return nil, err
	}
	return buf[off : off+shape.RecordSize], nil
}

// compileForRosemary plans a session's program for the Rosemary preset at
// full optimisation: the plan whose device segments a session runs.
func compileForRosemary(prog *ir.Program) (*compiler.Plan, error) {
	a, err := arch.Preset("rosemary")
	if err != nil {
		return nil, err
	}
	plan, err := compiler.Compile(prog, a, compiler.Options{Opt: "full"})
	if err != nil {
		return nil, fmt.Errorf("session: compile: %w", err)
	}
	return plan, nil
}

// streamName names a stream program by its bytes: the same program has one
// name, whoever sets it.
func streamName(kind string, raw []byte) string {
	sum := sha256.Sum256(raw)
	return "stream/" + kind + "/" + hex.EncodeToString(sum[:8])
}

// isNotFound reports a device's NotFound, in process or over gRPC.
func isNotFound(err error) bool {
	return errors.Is(err, api.ErrNotFound)
}

// setStream sets a stream program on a device under a name derived from
// its bytes (the same program is set once, whoever sets it), and returns
// the name and the bytes sent.
func setStream(ctx context.Context, dev api.Device, kind string, sp *lower.StreamProgram) (string, int64, error) {
	raw, err := sp.MarshalBinary()
	if err != nil {
		return "", 0, err
	}
	name := streamName(kind, raw)
	if _, err := dev.SetStream(ctx, &api.SetStreamRequest{Name: name, Program: raw}); err != nil {
		return "", 0, fmt.Errorf("session: set stream program: %w", err)
	}
	return name, int64(len(raw)), nil
}
