package device

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/device/admit"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/authz"
	"github.com/rosemary-fhe/rosemary/device/guard"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/device/pirserver"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/engine"
)

// Limits bound what the device holds and does at once.
type Limits struct {
	MaxResidentBytes int64 // uploads and job results held in device DRAM
	MaxPrograms      int   // programs set by ProgSet (and, apart, stream programs by SetStream)
	// MaxProgramsPerCaller bounds one caller's share of MaxPrograms (0:
	// a quarter): a caller setting more loses its own least recently
	// used, and a full table evicts from the caller holding the most, so
	// no caller locks the others out.
	MaxProgramsPerCaller int
	// StreamKeyBytes bounds the evaluation keys stream runs keep decoded
	// (0: 512 MiB), StreamKeyBytesPerCaller one caller's share (0: half),
	// each caller's least recently used evicted first.
	StreamKeyBytes, StreamKeyBytesPerCaller int64
	MaxJobs                                 int // jobs not yet released
	// MaxJobsPerCaller and MaxResidentBytesPerCaller bound one certificate
	// identity's share of MaxJobs and MaxResidentBytes (0: a quarter and
	// a half).
	MaxJobsPerCaller          int
	MaxResidentBytesPerCaller int64
	Workers                   int // jobs executing at once
	// KeyCacheBytes bounds the cache of evaluation-key limbs kept in
	// device memory between jobs (0: no cache).
	KeyCacheBytes int64
	// Runs is how many stream runs go at once (of different callers;
	// each gets MaxResidentBytes/Runs of value memory), RunQueue how many
	// may wait, RunTimeout how long one may take.
	Runs       int
	RunQueue   int
	RunTimeout time.Duration
	// WriteWait is how long a conventional write (Put, Delete) waiting
	// for ISP mode to end lets new runs go before it; past it new runs
	// wait until the write is in (0: 50 ms).
	WriteWait time.Duration
}

// DefaultLimits are the limits of `rosemary device serve`.
func DefaultLimits() Limits {
	return Limits{MaxResidentBytes: 1 << 30, MaxPrograms: 1024, MaxJobs: 1 << 14, Workers: runtime.GOMAXPROCS(0),
		KeyCacheBytes: 256 << 20, Runs: 2, RunQueue: 64, RunTimeout: 10 * time.Minute, WriteWait: defaultWriteWait}
}

// Device is the in-storage device: an object store, the programs set on
// it, and the jobs it runs next to the data. It implements api.Device; the
// gRPC service and in-process callers both use it. Safe for concurrent
// use.
type Device struct {
	st  *store.Store
	lim Limits
	sem chan struct{}

	progs *callerTable[*setProgram] // ProgSet's programs, per caller

	mu       sync.Mutex
	jobs     map[uint64]*job
	usage    map[string]callerUse // by quotaCaller: the jobs and DRAM each holds
	nextJob  uint64
	resident int64
	peak     int64
	ispJobs  int

	// isp: jobs and stream runs enter it together, conventional writes
	// alone (they wait for ISP mode to end, holding new runs back only
	// once they have waited Limits.WriteWait).
	isp *ispGate
	rss rssPeaks // RssAnon and RssFile at most while jobs ran

	storeRead, microOps, instrs, jobsRun atomic.Int64
	keys                                 *keyCache
	streams                              streamTable              // stream programs (SetStream, RunStream)
	pir                                  *pirserver.Server        // QueryLWE: the typed PIR service
	wire                                 *api.PayloadCounter      // payload bytes over gRPC, if served
	rpcSeconds                           *prometheus.HistogramVec // served RPC latencies (metrics.go)

	// Scrubbing and verified copies (scrub.go, copy.go).
	scrubbed, scrubCorrupt, quarantined, copyCorrupt atomic.Int64
	// access decides who may do what over gRPC (every served call passes
	// it; in-process callers hold the store and are trusted).
	access  *authz.Authorizer
	guarded *authz.Guarded // the device as served: access checked per call
	runs    *admit.Queue   // stream runs admitted fairly per caller
	// cores: the workers of every run take a core per chunk of work, so
	// runs of different callers share the cores by caller, not by
	// goroutine (admit.Cores).
	cores *admit.Cores
	// peerDial is how CopyFrom dials other devices; sourceCheck, if set,
	// what it asks of a source first.
	peerDial    []remote.Option
	sourceCheck func(ctx context.Context, addr string) error
}

var _ api.Device = (*Device)(nil)

// setProgram is a program ProgSet registered, with its bytes (setting
// the same bytes again is a no-op).
type setProgram struct {
	p   *isa.Program
	raw string
}

type job struct {
	caller string // charged for it (quotaCaller)
	done   chan struct{}
	result [][]uint64 // poly-major
	polys  int
	bytes  int64 // charged to resident
	err    error
	st     engine.Stats
	stored int64
}

// New returns a device over an open store.
func New(st *store.Store, lim Limits) (*Device, error) {
	if st == nil {
		return nil, fmt.Errorf("device: no store")
	}
	if lim.MaxResidentBytes <= 0 || lim.MaxPrograms <= 0 || lim.MaxJobs <= 0 || lim.Workers <= 0 || lim.KeyCacheBytes < 0 {
		return nil, fmt.Errorf("device: limits must be positive: %+v", lim)
	}
	if lim.MaxProgramsPerCaller <= 0 {
		lim.MaxProgramsPerCaller = max(lim.MaxPrograms/4, 1)
	}
	if lim.MaxJobsPerCaller <= 0 {
		lim.MaxJobsPerCaller = max(lim.MaxJobs/4, 1)
	}
	if lim.MaxResidentBytesPerCaller <= 0 {
		lim.MaxResidentBytesPerCaller = max(lim.MaxResidentBytes/2, 1)
	}
	if lim.StreamKeyBytes <= 0 {
		lim.StreamKeyBytes = 512 << 20
	}
	if lim.StreamKeyBytesPerCaller <= 0 {
		lim.StreamKeyBytesPerCaller = lim.StreamKeyBytes / 2
	}
	d := &Device{st: st, lim: lim, sem: make(chan struct{}, lim.Workers), jobs: map[uint64]*job{}, usage: map[string]callerUse{}, keys: newKeyCache(lim.KeyCacheBytes),
		wire: &api.PayloadCounter{}, rpcSeconds: newRPCSeconds(),
		progs: newCallerTable[*setProgram]("programs", int64(lim.MaxProgramsPerCaller), int64(lim.MaxPrograms))}
	d.streams = newStreamTable(lim)
	lim.Runs = max(lim.Runs, 1)
	if lim.RunTimeout <= 0 {
		lim.RunTimeout = 10 * time.Minute
	}
	d.lim = lim
	d.isp = newISPGate(lim.WriteWait)
	d.runs = admit.New(admit.Limits{Slots: lim.Runs, PerCaller: 1, MaxWaiting: max(lim.RunQueue, 1), MaxWaitingPerCaller: 4})
	d.cores = admit.NewCores(lim.Workers)
	d.pir = pirserver.New(pirserver.Config{Store: st, Runs: d.runs, Cores: d.cores, Workers: lim.Workers, RunTimeout: lim.RunTimeout,
		EnterISP: d.enterISP, LeaveISP: d.leaveISP})
	d.access = authz.New(d)
	d.guarded = authz.Guard(d, d.access)
	// Until told otherwise (DialPeersWith), peers are dialled as the
	// device is served in tests: plaintext, loopback only.
	d.peerDial = []remote.Option{remote.WithPlaintext()}
	return d, nil
}

// Config implements the paper's config(): the device's parameters.
func (d *Device) Config(context.Context, *devicepb.ConfigRequest) (*devicepb.ConfigResponse, error) {
	objs, err := d.st.List()
	if err != nil {
		return nil, fmt.Errorf("device: config: %w", err)
	}
	l := d.st.Layout()
	d.mu.Lock()
	defer d.mu.Unlock()
	return &devicepb.ConfigResponse{WireVersion: api.WireVersion, Channels: uint32(l.Channels), PageSize: uint32(l.PageSize),
		WordBytes: engine.WordBytes, MaxMessageBytes: api.MaxMessageBytes, MaxResidentBytes: uint64(d.lim.MaxResidentBytes),
		MaxPrograms: uint32(d.lim.MaxPrograms), Workers: uint32(d.lim.Workers), Objects: uint32(len(objs)),
		Programs: uint32(d.progs.len())}, nil
}

// ProgSet registers an mProgram. Setting the same bytes again is a no-op;
// different bytes under a taken name are refused. The program is charged
// to the caller (Limits.MaxProgramsPerCaller).
func (d *Device) ProgSet(ctx context.Context, req *devicepb.ProgSetRequest) (*devicepb.ProgSetResponse, error) {
	if err := api.CheckObjectName("name", req.Name); err != nil {
		return nil, err
	}
	if len(req.Program) > api.MaxMessageBytes {
		return nil, fmt.Errorf("device: progset %q: %w: program of %d bytes exceeds %d", req.Name, api.ErrInvalid, len(req.Program), api.MaxMessageBytes)
	}
	var p isa.Program
	if err := p.UnmarshalBinary(req.Program); err != nil {
		return nil, fmt.Errorf("device: progset %q: %w: %w", req.Name, api.ErrInvalid, err)
	}
	set, _, err := d.progs.add(quotaCaller(ctx), req.Name, &setProgram{p: &p, raw: string(req.Program)}, 1)
	if err != nil {
		return nil, fmt.Errorf("device: progset %q: %w", req.Name, err)
	}
	if set.raw != string(req.Program) {
		return nil, fmt.Errorf("device: progset %q: %w: name taken by a different program", req.Name, api.ErrInvalid)
	}
	return &devicepb.ProgSetResponse{Instructions: uint32(len(p.Code))}, nil
}

// Put stores an object limb by limb (refused while jobs run: ISP mode).
func (d *Device) Put(_ context.Context, req *devicepb.PutRequest) (*devicepb.PutResponse, error) {
	if err := api.CheckObjectName("name", req.Name); err != nil {
		return nil, err
	}
	kind, shape, raw, err := api.PutObject(req)
	if err != nil {
		return nil, fmt.Errorf("device: put %q: %w", req.Name, err)
	}
	var gen store.Generation
	err = d.write(func() (err error) {
		// Writes of other objects go on meanwhile; the store checks the
		// generation and publishes with no other writer of this object
		// in between.
		if req.IfGeneration != nil {
			gen, err = d.st.PutIf(req.Name, store.Generation(req.GetIfGeneration()), kind, shape, raw)
		} else {
			gen, err = d.st.Put(req.Name, kind, shape, raw)
		}
		return err
	})
	if err != nil {
		if errors.Is(err, store.ErrStale) {
			return nil, fmt.Errorf("device: put %q: %w: %w", req.Name, api.ErrStale, err)
		}
		if errors.Is(err, store.ErrISPMode) {
			return nil, fmt.Errorf("device: put %q: %w", req.Name, err)
		}
		if errors.Is(err, syscall.ENOSPC) {
			return nil, fmt.Errorf("device: put %q: %w: %w", req.Name, api.ErrDiskFull, err)
		}
		return nil, fmt.Errorf("device: put %q: %w: %w", req.Name, api.ErrInvalid, err)
	}
	return &devicepb.PutResponse{Generation: uint64(gen), Bytes: uint64(shape.Bytes())}, nil
}

// Get reads a stored object.
func (d *Device) Get(_ context.Context, req *devicepb.GetRequest) (*devicepb.GetResponse, error) {
	if err := api.CheckObjectName("name", req.Name); err != nil {
		return nil, err
	}
	info, raw, err := d.st.Get(req.Name)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("device: get %q: %w", req.Name, api.ErrNotFound)
		}
		return nil, fmt.Errorf("device: get %q: %w", req.Name, err)
	}
	ws := int64(info.Shape.WordSize)
	if ws != 8 && ws != 2 && ws != 1 {
		return nil, fmt.Errorf("device: get %q: word size %d, want 8, 2 or 1", req.Name, ws)
	}
	// The object crosses as stored: words of its stored size.
	if info.Bytes > api.MaxMessageBytes-1024 {
		return nil, fmt.Errorf("device: get %q: %w: object of %d bytes exceeds a message", req.Name, api.ErrExhausted, info.Bytes)
	}
	return api.ObjectReply(info.Kind, info.Shape, raw, object.Checksum(raw)), nil
}

func decodeWords(b []byte, dst []uint64) []uint64 {
	if dst == nil {
		dst = make([]uint64, len(b)/8)
	}
	for i := range dst {
		dst[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return dst
}

// Delete deletes a stored object (refused while jobs run).
func (d *Device) Delete(_ context.Context, req *devicepb.DeleteRequest) (*devicepb.DeleteResponse, error) {
	if err := api.CheckObjectName("name", req.Name); err != nil {
		return nil, err
	}
	if err := d.write(func() error { return d.st.Delete(req.Name) }); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("device: delete %q: %w", req.Name, api.ErrNotFound)
		}
		return nil, fmt.Errorf("device: delete %q: %w", req.Name, err)
	}
	if db, err := authz.DatabaseOf(req.Name); err == nil && req.Name == objname.Manifest(db) {
		if err := d.clearGrants(db); err != nil {
			return nil, fmt.Errorf("device: delete %q: %w", req.Name, err)
		}
	}
	return &devicepb.DeleteResponse{}, nil
}

// Stats returns the device counters.
func (d *Device) Stats(context.Context, *devicepb.StatsRequest) (*devicepb.StatsResponse, error) {
	d.mu.Lock()
	res, peak := d.resident, d.peak
	d.mu.Unlock()
	s := &devicepb.StatsResponse{StoreBytesRead: uint64(d.storeRead.Load()), MicroOps: uint64(d.microOps.Load()),
		Instructions: uint64(d.instrs.Load()), Jobs: uint64(d.jobsRun.Load()), ResidentBytes: uint64(res), PeakResidentBytes: uint64(peak),
		PeakRssBytes: peakRSS(), PeakAnonRssBytes: d.rss.anon.Load(), PeakFileRssBytes: d.rss.file.Load()}
	if d.wire != nil {
		s.WireBytesIn, s.WireBytesOut = uint64(d.wire.Received()), uint64(d.wire.Sent())
	}
	return s, nil
}

// forgetLocked drops job id from the table (d.mu held). A job still
// running keeps its memory until it ends, so its bytes stay counted until
// then: a client cannot release its way past MaxResidentBytes.
func (d *Device) forgetLocked(id uint64, j *job) {
	delete(d.jobs, id)
	d.chargeLocked(j.caller, -1, 0)
	select {
	case <-j.done:
		d.resident -= j.bytes
		d.chargeLocked(j.caller, 0, -j.bytes)
	default:
		go func() {
			<-j.done
			d.mu.Lock()
			d.resident -= j.bytes
			d.chargeLocked(j.caller, 0, -j.bytes)
			d.mu.Unlock()
		}()
	}
}

// callerUse is what one caller's jobs hold (d.usage).
type callerUse struct {
	jobs  int
	bytes int64
}

// chargeLocked adds to caller's use (d.mu held); a caller holding nothing
// leaves the table.
func (d *Device) chargeLocked(caller string, jobs int, bytes int64) {
	if caller == "" {
		return
	}
	u := d.usage[caller]
	u.jobs += jobs
	u.bytes += bytes
	if u.jobs <= 0 && u.bytes <= 0 {
		delete(d.usage, caller)
		return
	}
	d.usage[caller] = u
}

// quotaCaller is the caller a call's jobs are charged to: its certificate
// identity; "" (no share, the device's whole limits) in process and on a
// plaintext server, whose callers are all one identity.
func quotaCaller(ctx context.Context) string {
	id, ok := guard.IdentityFrom(ctx)
	if !ok || id == guard.Plaintext {
		return ""
	}
	return id.Name
}

// Release drops finished or running jobs' results.
func (d *Device) Release(_ context.Context, req *devicepb.ReleaseRequest) (*devicepb.ReleaseResponse, error) {
	if len(req.Jobs) > api.MaxRelease {
		return nil, fmt.Errorf("device: release: %w: %d jobs (at most %d)", api.ErrInvalid, len(req.Jobs), api.MaxRelease)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var missing []uint64
	for _, id := range req.Jobs {
		j, ok := d.jobs[id]
		if !ok {
			missing = append(missing, id)
			continue
		}
		d.forgetLocked(id, j)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("device: release: %w: jobs %v", api.ErrNotFound, missing)
	}
	return &devicepb.ReleaseResponse{}, nil
}

// Recv waits for a job and returns its result.
func (d *Device) Recv(ctx context.Context, req *devicepb.RecvRequest) (*devicepb.RecvResponse, error) {
	d.mu.Lock()
	j, ok := d.jobs[req.Job]
	d.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("device: recv: %w: job %d", api.ErrNotFound, req.Job)
	}
	select {
	case <-j.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if req.Release {
		d.mu.Lock()
		if _, ok := d.jobs[req.Job]; ok {
			d.forgetLocked(req.Job, j)
		}
		d.mu.Unlock()
	}
	if j.err != nil {
		return nil, fmt.Errorf("device: job %d: %w", req.Job, j.err)
	}
	resp := &devicepb.RecvResponse{Polys: uint32(j.polys), Instructions: uint64(j.st.Instructions), MicroOps: uint64(j.st.MicroOps),
		StoreBytes: uint64(j.stored)}
	if req.GetFetch() {
		resp.Data = api.EncodeLimbs(j.result)
	}
	return resp, nil
}

// Grant gives an identity a role on a database: an in-process caller holds
// the store, so it acts as the owner (a served caller's Grant is checked
// by package authz first).
func (d *Device) Grant(_ context.Context, req *devicepb.GrantRequest) (*devicepb.GrantResponse, error) {
	if err := api.CheckGrant(req); err != nil {
		return nil, fmt.Errorf("device: grant: %w", err)
	}
	if err := d.access.GrantTrusted(req.Database, req.Identity, req.Role); err != nil {
		return nil, fmt.Errorf("device: grant: %w", err)
	}
	return &devicepb.GrantResponse{}, nil
}
