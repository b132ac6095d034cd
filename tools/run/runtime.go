package run

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/guard"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/resident"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// Options select what to run and where.
type Options struct {
	Workload string            // "pir", "vecdist" or "hevec" (their small, runnable forms)
	Arch     string            // architecture the compiler plans for (default "rosemary")
	Opt      compiler.OptLevel // compiler optimisation level (default full, as the compiler's)
	// Placement: "plan" runs each node where the compiler's plan puts it;
	// "device" runs every operation on the device (only Inputs and Outputs
	// on the host), the in-storage extreme.
	Placement string
	// VecPlaintexts, VecDim, VecGroups size the vector database (default
	// the workload's small form: 8 plaintexts, 4-d, 2 groups).
	VecPlaintexts, VecDim, VecGroups int
	// HEVECVectors sizes the hevec database (MNIST images, default 1024);
	// EdgeQuery encrypts its queries with the edge (RISE) encryptor;
	// QueryImage picks the first MNIST test image queried.
	HEVECVectors int
	EdgeQuery    bool
	QueryImage   int
	// Prefix namespaces the objects this session stores on the device.
	Prefix string
	// PIRRecords and PIRRecordSize size the PIR database (expanded-query
	// PIR on bgv-13): records of PIRRecordSize bytes.
	PIRRecords, PIRRecordSize int
	// Insecure allows presets that are not 128-bit secure (insecure-*,
	// small test rings).
	Insecure bool
}

func (o *Options) defaults() {
	if o.Arch == "" {
		o.Arch = "rosemary"
	}
	if o.Opt == "" {
		o.Opt = compiler.OptFull
	}
	if o.Placement == "" {
		o.Placement = "plan"
	}
	if o.VecPlaintexts == 0 {
		o.VecPlaintexts, o.VecDim, o.VecGroups = 8, 4, 2
	}
	if o.HEVECVectors == 0 {
		o.HEVECVectors = 1024
	}
	if o.Prefix == "" {
		o.Prefix = o.Workload
	}
	if o.PIRRecords == 0 {
		o.PIRRecords = 1 << 16
	}
	if o.PIRRecordSize == 0 {
		o.PIRRecordSize = 256
	}
}

// Session is a workload set up on a device: keys generated, stored data
// and evaluation keys uploaded once, ready for queries. Query is safe for
// concurrent use (each call gets its own executor; pass one client per
// goroutine to use several connections).
type Session struct {
	Opts    Options
	Program *ir.Program
	Plan    *compiler.Plan
	// SetupBytes are the payload bytes of the setup uploads (stored data
	// and keys), not query traffic.
	SetupBytes int64
	// StoredBytes is the size of the stored data: what a host-only run
	// pulls from storage for every query.
	StoredBytes int64
	// ConstantBytes are stored public constants (PIR masks): on the device
	// for its expansion, made by the host itself in a host-only run.
	ConstantBytes int64

	preset   fhe.Preset
	params   any
	rparams  rlwe.Parameters
	sk       *rlwe.SecretKey
	enc      *rlwe.Encryptor
	dec      *rlwe.Decryptor
	keys     engine.Keys
	data     dataset
	stored   map[string][]engine.Value
	onDevice func(int) bool
	keyRef   func(ir.Op, uint64) engine.Ref
	mu       sync.Mutex

	// Streams are the plan's device segments as stream programs, set on
	// the device once (by segment); nil runs device nodes op by op (the
	// "device" placement, or a segment that cannot stream: StreamErr).
	Streams     map[int]*lower.StreamProgram
	StreamErr   error
	streamNames map[int]string
	storedPer   map[string]int         // stored node → instances per object
	keyObjects  map[lower.KeyID]string // key → its object
}

// program builds the program a session runs (PIR runs as runPIR).
func (o Options) program() (*ir.Program, error) {
	switch o.Workload {
	case "hevec":
		return hevecShape(o.HEVECVectors).Program()
	case "vecdist":
		if o.VecDim < 1 || o.VecDim&(o.VecDim-1) != 0 {
			return nil, fmt.Errorf("run: vector dimension %d is not a power of two", o.VecDim)
		}
		if o.VecPlaintexts < 1 || o.VecPlaintexts > 1<<16 || o.VecGroups < 1 {
			return nil, fmt.Errorf("run: vector database of %d plaintexts in %d groups", o.VecPlaintexts, o.VecGroups)
		}
		return workload.VecDistShape{Name: "vecdist-run", Params: "hevec", Plaintexts: int64(o.VecPlaintexts),
			Dim: o.VecDim, Groups: int64(o.VecGroups)}.Program()
	}
	return nil, fmt.Errorf("run: unknown workload %q (pir, vecdist, hevec)", o.Workload)
}

// Setup compiles the workload, generates keys and data, and uploads the
// stored data and evaluation keys through c under ctx.
func Setup(ctx context.Context, c *remote.Client, opts Options) (*Session, error) {
	opts.defaults()
	p, err := opts.program()
	if err != nil {
		return nil, err
	}
	a, err := arch.Preset(opts.Arch)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	plan, err := compiler.Compile(p, a, compiler.Options{Opt: opts.Opt})
	if err != nil {
		return nil, fmt.Errorf("run: compile: %w", err)
	}
	s := &Session{Opts: opts, Program: plan.Program, Plan: plan}
	switch opts.Placement {
	case "plan":
		s.onDevice = func(i int) bool { return plan.Placement[i] == compiler.SSD }
	case "device":
		s.onDevice = func(i int) bool {
			switch plan.Program.Nodes[i].Op {
			case ir.OpInput, ir.OpOutput, ir.OpStored:
				return plan.Placement[i] == compiler.SSD
			}
			return true
		}
	default:
		return nil, fmt.Errorf("run: unknown placement %q (plan, device)", opts.Placement)
	}
	if s.preset, err = fhe.Lookup(p.Nodes[0].Params); err != nil {
		return nil, err
	}
	if s.preset.Insecure() && !opts.Insecure {
		return nil, fmt.Errorf("run: %s runs on %s, which is not 128-bit secure: pass Insecure (--insecure) to run it anyway", opts.Workload, s.preset.Name)
	}
	if err := s.keygen(); err != nil {
		return nil, err
	}
	switch opts.Workload {
	case "vecdist":
		s.data, err = newVecData(s.params.(ckks.Parameters), opts.VecPlaintexts, opts.VecDim, opts.VecGroups)
	case "hevec":
		s.data, err = newHEVECData(s.params.(ckks.Parameters), s.sk, opts.HEVECVectors, opts.EdgeQuery, opts.QueryImage)
	}
	if err != nil {
		return nil, err
	}
	sent0, recv0 := c.Traffic()
	if err := s.uploadStored(ctx, c); err != nil {
		return nil, err
	}
	if err := s.uploadKeys(ctx, c); err != nil {
		return nil, err
	}
	if opts.Placement == "plan" {
		if err := s.setStreams(ctx, c); err != nil {
			return nil, err
		}
	}
	sent1, recv1 := c.Traffic()
	s.SetupBytes = sent1 - sent0 + recv1 - recv0
	return s, nil
}

func (s *Session) keygen() error {
	var err error
	switch s.preset.Scheme {
	case fhe.BGV:
		var p bgv.Parameters
		p, err = s.preset.BGVParameters()
		s.params, s.rparams = p, p.Parameters
	case fhe.CKKS:
		var p ckks.Parameters
		p, err = s.preset.CKKSParameters()
		s.params, s.rparams = p, p.Parameters
	default:
		return fmt.Errorf("run: scheme %s", s.preset.Scheme)
	}
	if err != nil {
		return fmt.Errorf("run: parameters: %w", err)
	}
	kg := rlwe.NewKeyGenerator(s.rparams)
	sk := kg.GenSecretKeyNew()
	s.sk = sk
	s.enc = rlwe.NewEncryptor(s.rparams, sk)
	s.dec = rlwe.NewDecryptor(s.rparams, sk)
	s.keys = engine.Keys{Relin: kg.GenRelinearizationKeyNew(sk), Galois: map[uint64]*rlwe.GaloisKey{}}
	for _, g := range engine.GaloisElements(s.rparams, s.Program) {
		s.keys.Galois[g] = kg.GenGaloisKeyNew(g, sk)
	}
	return nil
}

// chunkBytes bounds one stored object (a Put message).
const chunkBytes = 32 << 20

// uploadStored stores each Stored node's instances on the device, packed
// up to 255 instances (polys) per object, and keeps references to them.
//
// A compact Stored node (ir.Node.Compact) is stored as its coefficients
// modulo t, one limb per plaintext; the device lifts them where they are
// used.
func (s *Session) uploadStored(ctx context.Context, c api.Device) error {
	s.stored = map[string][]engine.Value{}
	s.storedPer = map[string]int{}
	compact := map[string]bool{}
	for _, n := range s.Program.Nodes {
		if n.Op == ir.OpStored && n.Compact {
			compact[n.Name] = true
		}
	}
	for name, pts := range s.data.stored() {
		if len(pts) == 0 {
			continue
		}
		limbs := pts[0].Level() + 1
		if compact[name] {
			limbs = 1
		}
		ptBytes := int64(limbs) * int64(s.rparams.N()) * engine.WordBytes
		per := int(min(int64(layout.MaxPolys), chunkBytes/ptBytes))
		s.storedPer[name] = per
		vals := make([]engine.Value, len(pts))
		for first := 0; first < len(pts); first += per {
			last := min(first+per, len(pts))
			obj := fmt.Sprintf("%s/%s/%06d", s.Opts.Prefix, name, first/per)
			var data [][]uint64
			for k := first; k < last; k++ {
				if !compact[name] {
					data = append(data, pts[k].Value.Coeffs[:limbs]...)
					continue
				}
				bp, ok := s.params.(bgv.Parameters)
				if !ok {
					return fmt.Errorf("run: compact plaintexts %q need BGV parameters", name)
				}
				m, err := fhe.CompactBGV(bp, pts[k])
				if err != nil {
					return fmt.Errorf("run: %s instance %d: %w", name, k, err)
				}
				data = append(data, m)
			}
			put, err := api.NewPut(obj, object.KindPlaintext, last-first, limbs, data, 8)
			if err != nil {
				return fmt.Errorf("run: upload %s: %w", obj, err)
			}
			if _, err := c.Put(ctx, put); err != nil {
				return fmt.Errorf("run: upload %s: %w", obj, err)
			}
			for k := first; k < last; k++ {
				vals[k] = engine.Value{Dev: &engine.DeviceValue{Ref: engine.StoredRef(obj, k-first), Degree: 0,
					Level: pts[k].Level(), Meta: *pts[k].MetaData, Bytes: ptBytes, Stored: true}}
				if s.data.constant(name) {
					s.ConstantBytes += ptBytes
				} else {
					s.StoredBytes += ptBytes
				}
			}
		}
		s.stored[name] = vals
	}
	return nil
}

func (s *Session) uploadKeys(ctx context.Context, c api.Device) error {
	prefix := s.Opts.Prefix + "/keys"
	put := func(id lower.KeyID, g *rlwe.GadgetCiphertext) error {
		limbs := engine.KeyLimbs(g)
		per := len(g.Value[0][0][0].Q.Coeffs) + len(g.Value[0][0][0].P.Coeffs)
		req, err := api.NewPut(id.ObjectName(prefix), object.KindKey, len(limbs)/per, per, limbs, 8)
		if err != nil {
			return fmt.Errorf("run: upload key %s: %w", id.ObjectName(prefix), err)
		}
		if _, err := c.Put(ctx, req); err != nil {
			return fmt.Errorf("run: upload key %s: %w", req.Name, err)
		}
		s.keyObjects[id] = req.Name
		return nil
	}
	s.keyObjects = map[lower.KeyID]string{}
	if err := put(lower.RelinKey(), &s.keys.Relin.GadgetCiphertext); err != nil {
		return err
	}
	for g, k := range s.keys.Galois {
		if err := put(lower.GaloisKey(g), &k.GadgetCiphertext); err != nil {
			return err
		}
	}
	s.keyRef = func(op ir.Op, g uint64) engine.Ref {
		id := lower.GaloisKey(g)
		if op == ir.OpRelinearize || op == ir.OpHMult {
			id = lower.RelinKey()
		}
		obj, ok := s.keyObjects[id]
		if !ok {
			return engine.Ref{}
		}
		return engine.StoredRef(obj, 0)
	}
	return nil
}

// QueryResult is one query's outcome and traffic.
type QueryResult struct {
	Correct bool
	Err     error // why it is not correct
	// HostDeviceBytes are the payload bytes crossing host↔device during
	// the query (both directions, all RPCs: uploads, program sets, jobs,
	// fetches, releases), measured by the client's codec.
	HostDeviceBytes int64
	Exec            engine.ExecStats
	Seconds         float64
}

// Query runs one fresh random query under ctx through c and checks it
// against the plaintext reference: device nodes run op by op go through
// run (a runner of c, which keeps the programs it set between queries),
// stream segments through c. Traffic is measured on c, so concurrent
// queries must use distinct clients.
func (s *Session) Query(ctx context.Context, c *remote.Client, run *resident.Runner) (QueryResult, error) {
	start := time.Now()
	s.mu.Lock() // encoder and encryptor are not safe for concurrent use
	in, check, err := s.data.query(s.enc)
	s.mu.Unlock()
	if err != nil {
		return QueryResult{}, err
	}
	x, err := engine.NewExecutor(s.preset, s.params, s.keys)
	if err != nil {
		return QueryResult{}, err
	}
	x.OnDevice, x.Device, x.KeyRef = s.onDevice, run, s.keyRef
	sent0, recv0 := c.Traffic()
	stored, err := s.hostStored(ctx, c)
	if err != nil {
		return QueryResult{}, err
	}
	var out map[string][]engine.Value
	if s.Streams != nil {
		out, err = x.RunSegments(ctx, s.Plan.Program, s.execSegments(), &segmentRunner{s: s, dev: c}, in, stored)
	} else {
		out, err = x.Run(ctx, s.Program, in, stored)
	}
	sent1, recv1 := c.Traffic()
	r := QueryResult{HostDeviceBytes: sent1 - sent0 + recv1 - recv0, Exec: x.Stats}
	if err != nil {
		return r, fmt.Errorf("run: execute: %w", err)
	}
	s.mu.Lock()
	err = check(s.dec, out) // the decryptor is not safe for concurrent use
	s.mu.Unlock()
	r.Correct, r.Err = err == nil, err
	r.Seconds = time.Since(start).Seconds()
	return r, nil
}

// hostStored gives the stored values: device references, plus the
// plaintexts themselves (fetched from the device, counted as traffic) for
// stored nodes a host node reads.
func (s *Session) hostStored(ctx context.Context, c api.Device) (map[string][]engine.Value, error) {
	out := map[string][]engine.Value{}
	for name, vals := range s.stored {
		out[name] = vals
	}
	for i, n := range s.Program.Nodes {
		if s.onDevice(i) {
			continue
		}
		for _, a := range n.Args {
			an := s.Program.Nodes[a]
			if an.Op != ir.OpStored || out[an.Name] == nil || out[an.Name][0].Pt != nil {
				continue
			}
			pts, ok := s.data.stored()[an.Name]
			if !ok {
				return nil, fmt.Errorf("run: no data for stored %q", an.Name)
			}
			// A host node reads it: the host pulls every instance from the
			// device (what a host-only run does).
			vals := make([]engine.Value, len(pts))
			for k := range vals {
				vals[k] = engine.Value{Pt: pts[k]}
			}
			if err := s.pull(ctx, c, an.Name); err != nil {
				return nil, err
			}
			out[an.Name] = vals
		}
	}
	return out, nil
}

// pull reads a stored node's objects from the device (their bytes are
// query traffic; the host then uses its own identical copy).
func (s *Session) pull(ctx context.Context, c api.Device, name string) error {
	seen := map[string]bool{}
	for _, v := range s.stored[name] {
		obj := v.Dev.Ref.Name
		if seen[obj] {
			continue
		}
		seen[obj] = true
		if _, err := c.Get(ctx, &devicepb.GetRequest{Name: obj}); err != nil {
			return fmt.Errorf("run: pull %s: %w", obj, err)
		}
	}
	return nil
}

// Report is what `rosemary run --json` prints.
type Report struct {
	Workload  string `json:"workload"`
	Params    string `json:"params"`
	Placement string `json:"placement"`
	// Segments says how the device segments ran: "stream" (each segment
	// one stream program, set once and run per query), "op by op: <why>",
	// or "host scan" (the plan kept everything on the host).
	Segments string `json:"segments"`
	Queries  int    `json:"queries"`
	Correct  bool   `json:"correct"`
	Error    string `json:"error,omitempty"`
	// HostDeviceBytes: payload bytes crossing host↔device per query (mean),
	// measured by the client codec.
	HostDeviceBytes int64 `json:"host_device_bytes"`
	// CiphertextBytes: the ciphertext words among them (executor count).
	CiphertextBytes int64 `json:"ciphertext_bytes"`
	// HostOnlyBytes: stored bytes a host-only run pulls per query.
	HostOnlyBytes int64   `json:"host_only_bytes"`
	Ratio         float64 `json:"host_only_over_host_device"`
	// DeviceStoreBytes: bytes the device read from its store per query
	// (device counter).
	DeviceStoreBytes int64 `json:"device_store_bytes"`
	SetupBytes       int64 `json:"setup_bytes"`
	ConstantBytes    int64 `json:"device_constant_bytes"`
	// WarmupBytes: traffic of a first, unmeasured query (installs the
	// mPrograms on the device; also checked for correctness).
	WarmupBytes    int64   `json:"warmup_query_bytes"`
	DeviceMicroOps int64   `json:"device_micro_ops"`
	HostOps        int64   `json:"host_ops"`
	DeviceOps      int64   `json:"device_ops"`
	PlanCutBytes   int64   `json:"plan_cut_bytes"`
	PlanHostOnly   int64   `json:"plan_host_only_bytes"`
	WallSeconds    float64 `json:"wall_s"`
}

// Run sets a workload up on the device behind c (nil: an in-process
// device on a temporary store), runs queries under ctx and reports.
func Run(ctx context.Context, c *remote.Client, opts Options, queries int) (*Report, error) {
	start := time.Now()
	if queries < 1 {
		return nil, fmt.Errorf("run: %d queries", queries)
	}
	var st *store.Store // the in-process device's store
	var own func(db string) error
	if c == nil {
		dir, err := os.MkdirTemp("", "rosemary-device-")
		if err != nil {
			return nil, fmt.Errorf("run: %w", err)
		}
		defer os.RemoveAll(dir)
		st, err = store.Open(dir, layout.Layout{Channels: 4, PageSize: 4096})
		if err != nil {
			return nil, fmt.Errorf("run: open store: %w", err)
		}
		defer st.Close()
		var d *device.Device
		c, d, err = device.InProcess(st, device.DefaultLimits())
		if err != nil {
			return nil, err
		}
		defer c.Close()
		// The harness writes the PIR database straight into the store; its
		// in-process client (one plaintext identity) owns it.
		own = func(db string) error { return d.Own(db, guard.Plaintext.Name) }
	}
	if opts.Workload == "pir" {
		opts.defaults()
		return runPIR(ctx, c, st, own, opts, queries)
	}
	s, err := Setup(ctx, c, opts)
	if err != nil {
		return nil, err
	}
	segs := "stream"
	switch {
	case s.Streams == nil && s.StreamErr != nil:
		segs = "op by op: " + s.StreamErr.Error()
	case s.Streams == nil:
		segs = "op by op (every operation on the device)"
	}
	rep := &Report{Workload: s.Opts.Workload, Params: s.preset.Name, Segments: segs, Placement: s.Opts.Placement, Queries: queries, Correct: true,
		HostOnlyBytes: s.StoredBytes, SetupBytes: s.SetupBytes, ConstantBytes: s.ConstantBytes,
		PlanCutBytes: s.Plan.CutBytes, PlanHostOnly: s.Plan.HostOnlyBytes}
	// Queries send jobs without waiting for each (the device orders them).
	run := resident.New(c, resident.Async())
	note := func(r QueryResult) {
		if !r.Correct && rep.Correct {
			rep.Correct, rep.Error = false, r.Err.Error()
		}
	}
	warm, err := s.Query(ctx, c, run)
	if err != nil {
		return nil, err
	}
	note(warm)
	rep.WarmupBytes = warm.HostDeviceBytes
	st0, err := c.Stats(ctx, &devicepb.StatsRequest{})
	if err != nil {
		return nil, err
	}
	for q := 0; q < queries; q++ {
		r, err := s.Query(ctx, c, run)
		if err != nil {
			return nil, err
		}
		note(r)
		rep.HostDeviceBytes += r.HostDeviceBytes
		rep.CiphertextBytes += r.Exec.BytesToDevice + r.Exec.BytesFromDevice + r.Exec.KeyBytesToDevice
		rep.DeviceMicroOps += r.Exec.DeviceMicroOps
		rep.HostOps += r.Exec.HostOps
		rep.DeviceOps += r.Exec.DeviceOps
	}
	st1, err := c.Stats(ctx, &devicepb.StatsRequest{})
	if err != nil {
		return nil, err
	}
	n := int64(queries)
	rep.HostDeviceBytes /= n
	rep.CiphertextBytes /= n
	rep.DeviceMicroOps /= n
	rep.HostOps /= n
	rep.DeviceOps /= n
	rep.DeviceStoreBytes = int64(st1.StoreBytesRead-st0.StoreBytesRead) / n
	rep.DeviceMicroOps = int64(st1.MicroOps-st0.MicroOps) / n
	if rep.HostDeviceBytes > 0 {
		rep.Ratio = float64(rep.HostOnlyBytes) / float64(rep.HostDeviceBytes)
	}
	rep.WallSeconds = time.Since(start).Seconds()
	return rep, nil
}

// LastAnswer returns the outcome of the most recent nearest-neighbour
// query of a hevec session (false for other workloads).
func (s *Session) LastAnswer() (NNAnswer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.data.(*hevecData)
	if !ok {
		return NNAnswer{}, false
	}
	return d.last, true
}
