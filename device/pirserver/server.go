// Package pirserver answers queries of hint-free LWE PIR databases
// (package fhe/lwepir) on a device: the typed PIR service behind the
// device's QueryLWE. A request names the parameter set and shape (which
// the client verified in the database's authenticated manifest), the
// generation's objects and the caller's Galois keys; the server pins the
// generation's tiles and hint diagonals for the query (a load replacing
// the generation mid-query changes nothing it reads) and answers with the
// column D·q and the hint H·s. A request carrying packing keys is
// answered in the packed mode instead (packed.go): no Galois keys, no
// diagonals, the column packed into RLWE ciphertexts.
//
// The two stages run side by side: the scan joins the next pass over the
// generation with whatever other queries wait for it (batch.go, package
// fhe/matvec's batch kernel), and the ring stage — the query's own key
// switches and pass over the hint's diagonals — takes a run slot of the
// caller's (admit.Queue), so callers share the cores fairly. Where the
// tiles are not in the page cache, a prefetcher reads them in ahead of the
// scan on a goroutine of its own (prefetch.go), and a packed query loads
// its packer beside the scan.
package pirserver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"

	"github.com/rosemary-fhe/rosemary/device/admit"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// Config is what the server uses of the device it runs on.
type Config struct {
	Store      *store.Store
	Runs       *admit.Queue // run slots, fair per caller: a ring stage takes one, and so does a packing batch's Prepare (as its first caller's)
	Cores      *admit.Cores // the cores, shared by caller chunk by chunk
	Workers    int          // goroutines of one stage
	RunTimeout time.Duration
	// EnterISP and LeaveISP bracket the work that reads the store in ISP
	// mode (the device holds conventional writes back meanwhile).
	EnterISP, LeaveISP func()
}

// Server answers LWE PIR queries over a device's store. Safe for
// concurrent use.
type Server struct {
	cfg      Config
	keys     keyCache
	batchers batcherTable[scanBatcher, *scanBatcher]
	preps    batcherTable[prepBatcher, *prepBatcher]
	packers  packerCache

	mu      sync.Mutex
	servers map[spec]*lwepir.Server
}

// spec is a parameter set and shape: a server's precomputation is per
// shape, not per query.
type spec struct {
	params                string
	rows, cols, recordLen int
}

// maxServers bounds the shapes kept; past it the table starts again.
const maxServers = 64

// New returns a server over cfg.
func New(cfg Config) *Server { return &Server{cfg: cfg} }

// malformed is api.ErrInvalid for a request the server cannot read.
func malformed(format string, a ...any) error {
	return fmt.Errorf("device: querylwe: %w: %s", api.ErrInvalid, fmt.Sprintf(format, a...))
}

// server returns the lwepir server of a parameter set and shape.
func (s *Server) server(p lwepir.Params, shape lwepir.Shape) (*lwepir.Server, error) {
	k := spec{p.Name(), shape.Rows, shape.Cols, shape.RecordSize}
	s.mu.Lock()
	defer s.mu.Unlock()
	if srv, ok := s.servers[k]; ok {
		return srv, nil
	}
	srv, err := lwepir.NewServer(p, shape)
	if err != nil {
		return nil, malformed("%v", err)
	}
	srv.Workers = s.cfg.Workers
	// The ring stage reads mapped diagonals on its workers' goroutines.
	srv.Guard = faultsAsErrors
	// The ring stage's key switches run on the engine (fhe/rns kernels).
	srv.Rotations = func(bp bgv.Parameters, keys *lwepir.EvalKeys) (lwepir.Rotator, error) {
		return engine.NewRotator(bp, keys.Rotations), nil
	}
	if s.servers == nil || len(s.servers) >= maxServers {
		s.servers = map[spec]*lwepir.Server{}
	}
	s.servers[k] = srv
	return srv, nil
}

// maxDim bounds a request's rows, columns and record size before they size
// anything (fhe/lwepir checks the shape exactly).
const maxDim = 1 << 30

// Query answers one query of caller (its identity: run slots and cores are
// shared by caller).
func (s *Server) Query(ctx context.Context, caller string, req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
	start := time.Now()
	if req.GetRows() == 0 || req.GetRows() > maxDim || req.GetCols() == 0 || req.GetCols() > maxDim ||
		req.GetRecordSize() == 0 || req.GetRecordSize() > maxDim {
		return nil, malformed("a shape of %d × %d, records of %d bytes", req.GetRows(), req.GetCols(), req.GetRecordSize())
	}
	packed := len(req.GetPackingKeys()) > 0
	if n := 1 + len(req.GetMore()); n > 1 && !packed || n > api.MaxPackedBatch {
		return nil, malformed("a request of %d queries (more than one only in the packed mode, at most %d)", n, api.MaxPackedBatch)
	}
	names := []string{req.GetGeneration()}
	if !packed {
		names = append(names, req.GetKeys())
	}
	for _, n := range names {
		if n == "" || len(n) > api.MaxNameBytes {
			return nil, malformed("an object prefix of %d bytes (1 to %d)", len(n), api.MaxNameBytes)
		}
	}
	p, err := lwepir.ByName(req.GetParams())
	if err == nil {
		p, err = p.WithPacking(packingVersion(req.GetPacking()))
	}
	if err != nil {
		return nil, malformed("%v", err)
	}
	shape := lwepir.Shape{Rows: int(req.GetRows()), Cols: int(req.GetCols()), RecordSize: int(req.GetRecordSize())}
	if err := shape.Validate(p); err != nil {
		return nil, malformed("%v", err)
	}
	srv, err := s.server(p, shape)
	if err != nil {
		return nil, err
	}
	unmarshal := lwepir.UnmarshalWords
	if packed {
		// The packed mode's vectors are in the packing version's words.
		unmarshal = func(b []byte, n int) ([]uint32, error) { return lwepir.UnmarshalQuery(p, b, n) }
	}
	query, err := unmarshal(req.GetQuery(), shape.Cols)
	if err != nil {
		return nil, malformed("query: %v", err)
	}
	if packed {
		return s.queryPacked(ctx, start, caller, p, shape, srv, query, req)
	}
	secret, err := lwepir.UnmarshalSecret(p, req.GetSecret())
	if err != nil {
		return nil, malformed("%v", err)
	}
	if err := srv.CheckQuery(&lwepir.Query{Vector: query, Secret: secret}); err != nil {
		return nil, malformed("%v", err)
	}
	logN, q, _, _, err := p.HintRing()
	if err != nil {
		return nil, malformed("%v", err)
	}
	layout := shape.Layout(p)
	src, err := s.pin(req.GetGeneration(), p, shape, object.Shape{Polys: layout.B1, Limbs: len(q), LogN: uint8(logN), WordSize: 8},
		int64(layout.Outputs*layout.B2))
	if err != nil {
		return nil, err
	}
	defer src.release()
	// The keys (0.8 MB each, two per client) are checked now and decoded
	// when the ring stage gets its run slot: a query waiting for a slot or
	// a scan pass holds none of them, so a device with many clients'
	// queries in flight keeps only the running stages' keys.
	keyObjects := map[int]string{}
	for _, r := range layout.Rotations() {
		name := objname.RotationKey(req.GetKeys(), r)
		if err := s.keys.check(s.cfg.Store, p, name); err != nil {
			return nil, fmt.Errorf("device: querylwe: %w", err)
		}
		keyObjects[r] = name
	}
	var diags lwepir.Diagonals = src
	if md, ok := mapDiagonals(src); ok {
		defer md.release()
		diags = md
	}

	var hint []*rlwe.Ciphertext
	ringRun := s.cfg.Cores.For(caller)
	cols, cores, read, err := s.scanBeside(ctx, caller, p, shape, srv, src, [][]uint32{query}, req.GetGeneration(), "ring", ringRun, func(ctx context.Context) error {
		return s.ring(ctx, caller, p, srv, keyObjects, secret, diags, ringRun, &hint)
	})
	if err != nil {
		return nil, err
	}
	resp := &devicepb.LWEQueryResponse{Column: lwepir.MarshalWords(cols[0]), StoreBytes: read, Cores: cores}
	for _, ct := range hint {
		resp.Hint = append(resp.Hint, lwepir.MarshalCiphertext(ct))
	}
	resp.Seconds = time.Since(start).Seconds()
	return resp, nil
}

// ring is a query's ring stage: H·s on its encrypted secret, in a run slot
// of the caller's, in ISP mode.
func (s *Server) ring(ctx context.Context, caller string, p lwepir.Params, srv *lwepir.Server, keyObjects map[int]string,
	secret *rlwe.Ciphertext, diags lwepir.Diagonals, run *admit.Run, hint *[]*rlwe.Ciphertext) error {
	release, err := s.cfg.Runs.Acquire(ctx, caller)
	if err != nil {
		return err
	}
	defer release()
	keys := &lwepir.EvalKeys{Rotations: map[int]*rlwe.GaloisKey{}}
	for r, obj := range keyObjects {
		gk, err := s.keys.get(s.cfg.Store, p, obj)
		if err != nil {
			return err
		}
		keys.Rotations[r] = gk
	}
	s.cfg.EnterISP()
	defer s.cfg.LeaveISP()
	return faultsAsErrors(func() (err error) {
		*hint, err = srv.EvaluateHint(ctx, keys, secret, diags, run)
		return err
	})
}

// CoreUse reports a stage of a run that took seconds of wall time and
// used the cores as st says; batch queries shared it.
func CoreUse(stage string, seconds time.Duration, st admit.RunStats, batch int) *devicepb.CoreUse {
	return &devicepb.CoreUse{Stage: stage, Seconds: seconds.Seconds(), Chunks: uint64(st.Chunks), WaitSeconds: st.Waited.Seconds(),
		HeldSeconds: st.Held.Seconds(), MaxWaitSeconds: st.MaxWait.Seconds(), MaxChunkSeconds: st.Chunk.Seconds(),
		Batch: uint64(max(batch, 1)), MinLimit: uint32(st.Limit)}
}

// packingVersion reads a request's packing version; one beyond a byte's
// range reads as a version no device knows, so that it is refused rather
// than truncated.
func packingVersion(v uint32) lwepir.PackVersion {
	if v > 255 {
		return 255
	}
	return lwepir.PackVersion(v)
}
