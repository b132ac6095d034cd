package device

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"

	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/device/admit"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/guard"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
	"github.com/rosemary-fhe/rosemary/fhe/matvec"
)

// lweProgram is a registered LWE answer program (lower.LWESpec): the device
// runs it natively over its stored tiles and hint diagonals.
type lweProgram struct {
	sp     *lower.StreamProgram
	params lwepir.Params
	shape  lwepir.Shape
	server *lwepir.Server
}

func newLWEProgram(sp *lower.StreamProgram, workers int) (*lweProgram, error) {
	p, shape, err := sp.LWE.Shape()
	if err != nil {
		return nil, err
	}
	srv, err := lwepir.NewServer(p, shape)
	if err != nil {
		return nil, err
	}
	srv.Workers = workers
	// The ring stage's key switches run on the engine (fhe/rns kernels).
	srv.Rotations = func(bp bgv.Parameters, keys *lwepir.EvalKeys) (lwepir.Rotator, error) {
		return engine.NewRotator(bp, keys.Rotations), nil
	}
	return &lweProgram{sp: sp, params: p, shape: shape, server: srv}, nil
}

// keyObject is a generation of a stored object.
type keyObject struct {
	name string
	gen  store.Generation
}

// lweKeys caches decoded Galois keys by object generation (a key is
// ~0.8 MB and decoding it costs more than a small query).
type lweKeys struct {
	mu    sync.Mutex
	items map[keyObject]*rlwe.GaloisKey
}

// lweKeyCacheEntries bounds the cache: 16 keys (eight clients' pairs,
// 13 MB at the default parameters). With more clients than that a key is
// read and decoded again per query, a millisecond beside its ring stage's
// tenth of a second; the memory stays the device's to bound.
const lweKeyCacheEntries = 16

// check reports whether name is a stored key object of p's ring, from its
// metadata (nothing is read).
func (c *lweKeys) check(d *Device, p lwepir.Params, name string) error {
	o, err := c.acquire(d, p, name)
	if err != nil {
		return err
	}
	o.Release()
	return nil
}

// acquire pins key object name, checking its metadata.
func (c *lweKeys) acquire(d *Device, p lwepir.Params, name string) (*store.Object, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	o, err := d.st.Acquire(name)
	if err != nil {
		return nil, fmt.Errorf("%w: key object %q: %w", api.ErrNotFound, name, err)
	}
	info := o.Info()
	size := lwepir.GaloisKeyBytes(p)
	if info.Kind != object.KindKey || info.Shape.WordSize != 8 || info.Shape.Polys != 1 ||
		info.Shape.Bytes() < int64(size) || info.Shape.Bytes() >= int64(size)+int64(info.Shape.LimbBytes()) {
		o.Release()
		return nil, fmt.Errorf("%w: key object %q is not a key of the program's ring", api.ErrInvalid, name)
	}
	return o, nil
}

func (c *lweKeys) get(d *Device, p lwepir.Params, name string) (*rlwe.GaloisKey, error) {
	o, err := c.acquire(d, p, name)
	if err != nil {
		return nil, err
	}
	defer o.Release()
	info := o.Info()
	k := keyObject{name: name, gen: info.Generation}
	c.mu.Lock()
	if gk, ok := c.items[k]; ok {
		c.mu.Unlock()
		return gk, nil
	}
	c.mu.Unlock()
	size := lwepir.GaloisKeyBytes(p)
	limbs, err := o.ReadAll()
	if err != nil {
		return nil, err
	}
	raw := make([]byte, 0, info.Shape.Bytes())
	for _, l := range limbs {
		raw = append(raw, l...)
	}
	for _, b := range raw[size:] {
		if b != 0 {
			return nil, fmt.Errorf("%w: key object %q: bytes after the key", api.ErrInvalid, name)
		}
	}
	raw = raw[:size]
	gk, err := lwepir.UnmarshalGaloisKey(p, raw)
	if err != nil {
		return nil, fmt.Errorf("%w: key object %q: %w", api.ErrInvalid, name, err)
	}
	c.mu.Lock()
	if c.items == nil || len(c.items) >= lweKeyCacheEntries {
		c.items = map[keyObject]*rlwe.GaloisKey{}
	}
	c.items[k] = gk
	c.mu.Unlock()
	return gk, nil
}

// runLWE answers one query of an LWE program. It shares RunStream's
// admission, deadline and ISP mode; the stored objects are pinned for the
// run so a query reads one generation even if a load replaces it.
func (d *Device) runLWE(ctx context.Context, name string, lp *lweProgram, req *api.RunStreamRequest) (*api.RunStreamResponse, error) {
	start := time.Now()
	p, shape := lp.params, lp.shape
	nodes := lp.sp.Nodes
	bad := func(format string, a ...any) error {
		return fmt.Errorf("device: runstream %q: %w: %s", name, api.ErrInvalid, fmt.Sprintf(format, a...))
	}
	var query []uint32
	var secret *rlwe.Ciphertext
	for _, in := range req.Inputs {
		switch in.Node {
		case lower.LWEQuery:
			if int64(len(in.Instances)) != nodes[lower.LWEQuery].Count {
				return nil, bad("query of %d instances, want %d", len(in.Instances), nodes[lower.LWEQuery].Count)
			}
			words := make([][]uint64, len(in.Instances))
			for k, inst := range in.Instances {
				if len(inst) != 1 || len(inst[0]) != 1<<lp.sp.Ring.LogN {
					return nil, bad("query instance %d of the wrong shape", k)
				}
				words[k] = inst[0]
			}
			v, err := lwepir.UnpackWords(words, shape.Cols)
			if err != nil {
				return nil, bad("%v", err)
			}
			query = v
		case lower.LWESecret:
			if len(in.Instances) != 1 {
				return nil, bad("%d encrypted secrets, want 1", len(in.Instances))
			}
			ct, err := lwepir.SecretFromLimbs(p, in.Instances[0])
			if err != nil {
				return nil, bad("%v", err)
			}
			secret = ct
		default:
			return nil, bad("node %d is not an input", in.Node)
		}
	}
	if query == nil || secret == nil {
		return nil, bad("query and encrypted secret are both needed")
	}
	var (
		tiles, diags []*store.Object
		tilePrefix   string
		err          error
	)
	defer func() {
		for _, o := range append(tiles, diags...) {
			o.Release()
		}
	}()
	layout := shape.Layout(p)
	b1 := layout.B1
	for _, b := range req.Stored {
		switch b.Node {
		case lower.LWETiles:
			tilePrefix = b.Prefix
			tiles, err = d.pinLWE(b, nodes[lower.LWETiles].Count, object.Shape{}, int64(shape.TileBytes(p)))
		case lower.LWEDiagonals:
			want := object.Shape{Polys: b1, Limbs: len(lp.sp.Ring.Q), LogN: uint8(lp.sp.Ring.LogN), WordSize: 8}
			diags, err = d.pinLWE(b, nodes[lower.LWEDiagonals].Count, want, want.Bytes())
		default:
			err = bad("node %d is not stored", b.Node)
		}
		if err != nil {
			return nil, err
		}
	}
	if tiles == nil || diags == nil {
		return nil, bad("tiles and diagonals must both be bound")
	}
	if len(req.Keys) > len(layout.Rotations()) {
		return nil, bad("%d keys bound, the program uses %d", len(req.Keys), len(layout.Rotations()))
	}
	// The keys (0.8 MB each, two per client) are checked now and decoded
	// when the ring stage gets its run slot: a query waiting for a slot or
	// a scan pass holds none of them, so a device with many clients'
	// queries in flight keeps only the running stages' keys.
	keyObjects := map[int]string{}
	for _, k := range req.Keys {
		r, ok := lower.ParseLWEKey(k.Key)
		if !ok {
			return nil, bad("key %q", k.Key)
		}
		if err := d.lweKeys.check(d, p, k.Object); err != nil {
			return nil, fmt.Errorf("device: runstream %q: %w", name, err)
		}
		keyObjects[r] = k.Object
	}
	src := &lweSource{tiles: tiles, diags: diags, b1: b1, slots: p.HintSlots(), rowBytes: p.N(), pageBytes: d.st.PageSize()}
	if src.Blocks() < 1 || shape.Rows%src.Blocks() != 0 {
		return nil, bad("tiles stored in %d limbs", src.Blocks())
	}
	if err := lp.server.CheckQuery(&lwepir.Query{Vector: query, Secret: secret}); err != nil {
		return nil, bad("%v", err)
	}
	var diagSrc lwepir.Diagonals = src
	if md, ok := mapDiagonals(src); ok {
		defer md.release()
		diagSrc = md
	}
	// The ring stage is this query's own work: it takes a run slot (the
	// fair queue of callers). The scan joins the next pass over the
	// database with whatever other queries wait for it.
	caller := "in-process"
	if id, ok := guard.IdentityFrom(ctx); ok {
		caller = id.Name
	}
	var (
		hint     []*rlwe.Ciphertext
		hintErr  error
		ringWG   sync.WaitGroup
		ringUse  api.CoreUse
		ringRun  = d.cores.For(caller)
		scanFrom = time.Now()
	)
	ringCtx, cancel := context.WithTimeout(ctx, d.lim.RunTimeout)
	defer cancel()
	ringWG.Add(1)
	go func() {
		defer ringWG.Done()
		defer func() { ringUse = coreUse("ring", time.Since(scanFrom), ringRun.Stats(), 1) }()
		release, err := d.runs.Acquire(ringCtx, caller)
		if err != nil {
			hintErr = err
			cancel()
			return
		}
		defer release()
		keys := &lwepir.EvalKeys{Rotations: map[int]*rlwe.GaloisKey{}}
		for r, obj := range keyObjects {
			gk, err := d.lweKeys.get(d, p, obj)
			if err != nil {
				hintErr = err
				cancel()
				return
			}
			keys.Rotations[r] = gk
		}
		d.enterISP()
		defer d.leaveISP()
		hintErr = faultsAsErrors(func() (err error) {
			hint, err = lp.server.EvaluateHint(ringCtx, keys, secret, diagSrc, ringRun)
			return err
		})
		if hintErr != nil {
			cancel()
		}
	}()
	w := &scanWait{q: matvec.NewQuery(query), src: src, prefix: tilePrefix, caller: caller, done: make(chan struct{})}
	batcher := d.lweBatchers.get(fmt.Sprintf("%s\x00%s\x00%d\x00%d\x00%d", tilePrefix, lp.sp.LWE.Params, shape.Rows, shape.Cols, shape.RecordSize))
	scanErr := batcher.scan(ringCtx, d, lp.server, w)
	scanUse := coreUse("scan", time.Since(scanFrom), w.use, w.batch)
	if scanErr != nil {
		cancel()
	}
	ringWG.Wait()
	d.storeRead.Add(src.bytes.Load())
	d.jobsRun.Add(1)
	// A stage that fails cancels the other: report the cause.
	err = hintErr
	if err == nil || (scanErr != nil && errors.Is(err, context.Canceled)) {
		err = scanErr
	}
	if err != nil {
		if errors.Is(err, lwepir.ErrParams) {
			return nil, bad("%v", err)
		}
		return nil, fmt.Errorf("device: runstream %q: %w", name, err)
	}
	ans := &lwepir.Answer{Column: w.col, Hint: hint}
	n := 1 << lp.sp.Ring.LogN
	resp := &api.RunStreamResponse{StoreBytes: uint64(src.bytes.Load()), Stored: uint64(len(tiles) + len(diags)), Bodies: uint64(w.batch)}
	col := api.StreamValues{Node: lower.LWEColumn}
	for _, w := range lwepir.PackWords(ans.Column, n) {
		col.Instances = append(col.Instances, engine.Limbs{w})
	}
	hintOut := api.StreamValues{Node: lower.LWEHint}
	for _, ct := range ans.Hint {
		hintOut.Instances = append(hintOut.Instances, engine.Limbs(lwepir.Limbs(ct)))
	}
	resp.Outputs = []api.StreamValues{col, hintOut}
	resp.Cores = []api.CoreUse{ringUse, scanUse}
	resp.Seconds = time.Since(start).Seconds()
	return resp, nil
}

// pinLWE acquires the count objects of a stored binding, one instance
// each, checking every object's size (and shape, if given).
func (d *Device) pinLWE(b api.StoredBinding, count int64, shape object.Shape, bytes int64) ([]*store.Object, error) {
	if b.PerObject != 1 || b.RowLength != 0 || b.TileRows != 0 || b.Stride != 0 || b.Offset != 0 {
		return nil, fmt.Errorf("%w: LWE stored nodes bind one object per instance", api.ErrInvalid)
	}
	objs := make([]*store.Object, 0, count)
	for j := int64(0); j < count; j++ {
		name := api.StoredObjectName(b.Prefix, j)
		o, err := d.st.Acquire(name)
		if err != nil {
			for _, o := range objs {
				o.Release()
			}
			return nil, fmt.Errorf("%w: stored object %q: %w", api.ErrNotFound, name, err)
		}
		objs = append(objs, o)
		sh := o.Info().Shape
		if sh.Bytes() != bytes || (shape != object.Shape{} && sh != shape) || sh != objs[0].Info().Shape {
			for _, o := range objs {
				o.Release()
			}
			return nil, fmt.Errorf("%w: stored object %q is %s, not what the program reads", api.ErrInvalid, name, sh)
		}
	}
	return objs, nil
}

// lweSource reads pinned tiles and diagonals for lwepir.
type lweSource struct {
	tiles, diags        []*store.Object
	b1, slots           int
	rowBytes, pageBytes int // a page of whole rows is scanned where it was read
	bytes               atomic.Int64
	bufMu               sync.Mutex
	buf                 []byte
}

// Blocks: a tile is read limb by limb (tileShape: limbs of whole rows).
func (s *lweSource) Blocks() int { return s.tiles[0].Info().Shape.NumLimbs() }

// VisitBlock reads limb b of tile k page by page and scans each verified
// page where it was read (a page holds whole rows: pageRows); otherwise it
// reads the limb into a buffer first.
func (s *lweSource) VisitBlock(_ context.Context, k, b int, f func(row int, rows []byte)) error {
	return s.visitBlock(k, b, true, f)
}

// visitBlock is VisitBlock, its pages scanned on a goroutine per channel
// or (parallel false) all on the caller's. A page is scanned where it was
// read only if it holds whole blocks of matvec.RowBlock rows: the vector
// kernels take rows in those blocks and leave the rest to a Go loop that
// rebuilds the query's words on every call: the 2-row pages of a store of
// 4 KiB pages (the device's default), scanned page by page, made a 16 MiB
// database's query 0.49 s against 0.06 s with the limb read whole.
func (s *lweSource) visitBlock(k, b int, parallel bool, f func(row int, rows []byte)) error {
	o := s.tiles[k]
	lb := o.Info().Shape.LimbBytes()
	if b == 0 {
		// The tile's pages are read in place through the store's
		// mappings: start reading the whole tile now where it is not
		// cached, rather than page by page as the scan faults.
		o.Prefetch()
	}
	if s.rowBytes > 0 && s.pageBytes%(matvec.RowBlock*s.rowBytes) == 0 {
		scan := o.ScanLimb
		if !parallel {
			scan = o.ScanLimbSerial
		}
		if err := scan(0, b, func(off int, page []byte) { f(off/s.rowBytes, page) }); err != nil {
			return err
		}
	} else {
		bp := limbBuffer(lb)
		defer limbBuffers.Put(bp)
		if err := o.ReadLimbInto(*bp, 0, b); err != nil {
			return err
		}
		f(0, *bp)
	}
	s.bytes.Add(int64(lb))
	return nil
}

// limbBuffers holds limb-sized buffers of scans that read a limb whole
// (a fresh MiB per limb costs page faults on every query).
var limbBuffers sync.Pool

// limbBuffer returns a buffer of n bytes from limbBuffers.
func limbBuffer(n int) *[]byte {
	if bp, ok := limbBuffers.Get().(*[]byte); ok && cap(*bp) >= n {
		*bp = (*bp)[:n]
		return bp
	}
	b := make([]byte, n)
	return &b
}

// ReadDiagonal reads diagonal i: poly i mod b1 of object i / b1. On a
// little-endian machine the stored words are read straight into dst.
func (s *lweSource) ReadDiagonal(_ context.Context, i int, dst []uint64) error {
	o := s.diags[i/s.b1]
	for l := 0; l*s.slots < len(dst); l++ {
		limb := dst[l*s.slots : (l+1)*s.slots]
		if littleEndian {
			if err := o.ReadLimbInto(unsafe.Slice((*byte)(unsafe.Pointer(&limb[0])), 8*len(limb)), i%s.b1, l); err != nil {
				return err
			}
		} else {
			s.bufMu.Lock()
			if len(s.buf) != 8*s.slots {
				s.buf = make([]byte, 8*s.slots)
			}
			err := o.ReadLimbInto(s.buf, i%s.b1, l)
			for j := range limb {
				limb[j] = binary.LittleEndian.Uint64(s.buf[8*j:])
			}
			s.bufMu.Unlock()
			if err != nil {
				return err
			}
		}
		s.bytes.Add(int64(8 * len(limb)))
	}
	return nil
}

// passTiles are the tiles a scan pass reads, as the chunks of run: while
// another caller shares the cores, a block's pages are scanned on the
// worker that holds the core only.
type passTiles struct {
	*lweSource
	run *admit.Run
}

func (p passTiles) VisitBlock(_ context.Context, k, b int, f func(row int, rows []byte)) error {
	return p.visitBlock(k, b, !p.run.Shared(), f)
}

// coreUse reports a stage of a run that took seconds of wall time and
// used the cores as st says; batch queries shared it.
func coreUse(stage string, seconds time.Duration, st admit.RunStats, batch int) api.CoreUse {
	return api.CoreUse{Stage: stage, Seconds: seconds.Seconds(), Chunks: uint64(st.Chunks), WaitSeconds: st.Waited.Seconds(),
		HeldSeconds: st.Held.Seconds(), MaxWaitSeconds: st.MaxWait.Seconds(), MaxChunkSeconds: st.Chunk.Seconds(), Batch: uint64(max(batch, 1)), MinLimit: uint32(st.Limit)}
}
