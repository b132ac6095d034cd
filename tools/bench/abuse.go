package bench

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// AbuseOptions configure RunAbuse: attackers of one identity try to
// starve or bloat a device while its honest owner queries a small PIR
// database on it.
type AbuseOptions struct {
	// Dir holds the run's store and certificates (emptied first).
	Dir           string
	DeviceCommand []string // `rosemary device serve` and its flags
	// MemoryLimitMB is the daemon's --memory-limit-mb, which the peak of
	// its own memory (RssAnon) is reported against.
	MemoryLimitMB int64
	Duration      time.Duration
	Attackers     int   // clients of the other identity, each its own connection
	Size          int64 // the owner's database bytes
	RecordSize    int
	LWEParams     string // "" is "default"
	Seed          uint64
	Log           func(format string, args ...any)
}

// AbuseReport is what `rosemary bench abuse --json` prints; every figure
// is measured in the run.
type AbuseReport struct {
	Transport       string  `json:"transport"`
	DurationSeconds float64 `json:"duration_s"`
	Attackers       int     `json:"attackers"`
	// The device's own memory (RssAnon of its process, sampled every
	// 20 ms from /proc) at most, before the attack (the database served,
	// the owner's session set up) and over the whole run, against the
	// daemon's --memory-limit-mb.
	MemoryLimitBytes   int64  `json:"memory_limit_bytes"`
	BaselineAnonBytes  uint64 `json:"baseline_anon_rss_bytes"`
	PeakAnonBytes      uint64 `json:"peak_anon_rss_bytes"`
	UnderLimit         bool   `json:"under_limit"`
	Samples            int    `json:"rss_samples"`
	DevicePeakRSSBytes uint64 `json:"device_peak_rss_bytes"` // VmHWM, as the device reports it
	// The owner's queries meanwhile: answered and checked record for
	// record, or failed (the first few errors kept).
	DBBytes          int64    `json:"db_bytes"`
	OwnerQueries     int      `json:"owner_queries"`
	OwnerFailures    int      `json:"owner_failures"`
	OwnerWrong       int      `json:"owner_wrong_records"`
	OwnerMeanSeconds float64  `json:"owner_query_mean_s"`
	OwnerMaxSeconds  float64  `json:"owner_query_max_s"`
	OwnerErrors      []string `json:"owner_errors,omitempty"`
	// The attackers' requests by kind, and the gRPC codes they got.
	Attacks map[string]*AttackCount `json:"attacks"`
	// The owner's stream program set again after the attack: the
	// attackers' table filling did not lock it out.
	OwnerSetAfter bool   `json:"owner_set_after"`
	Provenance    string `json:"provenance"`
}

// AttackCount is one kind of attack request: how many were sent and the
// codes they were answered with.
type AttackCount struct {
	Sent  int64            `json:"sent"`
	Codes map[string]int64 `json:"codes"`
	Bytes int64            `json:"bytes_each"`
}

const (
	ownerDB      = "owner"
	attackerUser = "bench-mallory"
)

// RunAbuse starts a device (DeviceCommand, with --memory-limit-mb) over a
// small LWE PIR database its owner queries in a loop for Duration while
// Attackers clients of another identity send, in turn, a RunStream of
// 32 MB of empty Instances (the expansion probe), malformed 8 MB
// requests, requests past their method's size limit, and ProgSet and
// SetStream of fresh names (the table-filling probe). It samples the
// device's RssAnon throughout.
func RunAbuse(ctx context.Context, opt AbuseOptions) (*AbuseReport, error) {
	logf, _ := orQuiet(opt.Log, nil)
	if opt.Duration <= 0 || opt.Attackers < 1 || opt.MemoryLimitMB <= 0 || len(opt.DeviceCommand) == 0 {
		return nil, fmt.Errorf("bench: abuse: duration %v, %d attackers, memory limit %d MiB, device command %q", opt.Duration, opt.Attackers, opt.MemoryLimitMB, opt.DeviceCommand)
	}
	p := lwepir.Default()
	if opt.LWEParams != "" {
		var err error
		if p, err = lwepir.ByName(opt.LWEParams); err != nil {
			return nil, err
		}
	}
	records := int(opt.Size / int64(max(opt.RecordSize, 1)))
	shape, err := lwepir.NewShape(p, records, opt.RecordSize)
	if err != nil {
		return nil, fmt.Errorf("bench: a database of %d bytes with %d-byte records: %w", opt.Size, opt.RecordSize, err)
	}
	storeDir := filepath.Join(opt.Dir, "store")
	for _, d := range []string{storeDir, filepath.Join(opt.Dir, "certs")} {
		if err := os.RemoveAll(d); err != nil {
			return nil, err
		}
	}
	var lweSeed [lwepir.SeedSize]byte
	if _, err := crand.Read(lweSeed[:]); err != nil {
		return nil, err
	}
	logf("writing the owner's %d-byte database", opt.Size)
	if err := writeOwnerDB(ctx, storeDir, p, shape, records, opt, lweSeed); err != nil {
		return nil, err
	}
	cmd := append(append([]string(nil), opt.DeviceCommand...), "--memory-limit-mb", strconv.FormatInt(opt.MemoryLimitMB, 10))
	dp, err := startDeviceProc(ctx, PIROptions{StoreDir: storeDir, DeviceCommand: cmd}, logf)
	if err != nil {
		return nil, err
	}
	defer dp.stop()
	rep := &AbuseReport{Transport: dp.transport, Attackers: opt.Attackers, MemoryLimitBytes: opt.MemoryLimitMB << 20,
		DBBytes: int64(records) * int64(opt.RecordSize), Attacks: map[string]*AttackCount{}, Provenance: "measured here"}

	owner, err := remote.Dial(dp.addr, dp.dial...)
	if err != nil {
		return nil, err
	}
	defer owner.Close()
	var keySeed [32]byte
	crand.Read(keySeed[:])
	sk, err := lwepir.DeriveSecretKey(p, keySeed[:])
	if err != nil {
		return nil, err
	}
	sess, err := client.NewLWESession(ctx, owner, ownerDB+"/g1", p, shape, lweSeed, sk, ownerDB+"/members/"+benchUser+"/keys/bench")
	if err != nil {
		return nil, fmt.Errorf("bench: the owner's session: %w", err)
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0xab5e))
	query := func() (time.Duration, bool, error) {
		idx := rng.IntN(records)
		start := time.Now()
		q, err := sess.Get(ctx, idx)
		if err != nil {
			return 0, false, err
		}
		return time.Since(start), bytes.Equal(q.Record, client.SeededLWERecord(opt.Seed, idx, opt.RecordSize)), nil
	}
	if _, ok, err := query(); err != nil || !ok { // warm: keys and program set
		return nil, fmt.Errorf("bench: the owner's first query: %v (record right: %v)", err, ok)
	}

	pid := strconv.Itoa(dp.pid)
	sampler := newRSSSampler(pid)
	rep.BaselineAnonBytes, _ = device.ProcessRSS(pid)

	attackDial, err := attackerDial(filepath.Join(opt.Dir, "certs"))
	if err != nil {
		return nil, err
	}
	kinds, err := attackKinds()
	if err != nil {
		return nil, err
	}
	for _, k := range kinds {
		rep.Attacks[k.name] = &AttackCount{Codes: map[string]int64{}, Bytes: int64(k.size)}
	}
	actx, stopAttack := context.WithTimeout(ctx, opt.Duration)
	defer stopAttack()
	var mu sync.Mutex
	var wg sync.WaitGroup
	var serial atomic.Int64
	logf("%d attackers as %s for %v; the owner queries meanwhile", opt.Attackers, attackerUser, opt.Duration)
	start := time.Now()
	for a := 0; a < opt.Attackers; a++ {
		c, err := remote.Dial(dp.addr, attackDial...)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := a; actx.Err() == nil; i++ {
				k := kinds[i%len(kinds)]
				err := k.send(actx, c.Conn(), serial.Add(1))
				if actx.Err() != nil {
					return // cut short by the end of the run, not answered
				}
				mu.Lock()
				rep.Attacks[k.name].Sent++
				rep.Attacks[k.name].Codes[status.Code(err).String()]++
				mu.Unlock()
			}
		}()
	}
	var total time.Duration
	for actx.Err() == nil {
		took, ok, err := query()
		if actx.Err() != nil && err != nil {
			break
		}
		rep.OwnerQueries++
		switch {
		case err != nil:
			rep.OwnerFailures++
			if len(rep.OwnerErrors) < 5 {
				rep.OwnerErrors = append(rep.OwnerErrors, err.Error())
			}
		case !ok:
			rep.OwnerWrong++
		default:
			total += took
			rep.OwnerMaxSeconds = max(rep.OwnerMaxSeconds, took.Seconds())
		}
	}
	wg.Wait()
	rep.DurationSeconds = time.Since(start).Seconds()
	if ok := rep.OwnerQueries - rep.OwnerFailures - rep.OwnerWrong; ok > 0 {
		rep.OwnerMeanSeconds = total.Seconds() / float64(ok)
	}
	// The owner can still set programs: the attackers' tables did not
	// take the device's.
	sp, err := abuseStreamProgram()
	if err != nil {
		return nil, err
	}
	_, err = owner.SetStream(ctx, &devicepb.SetStreamRequest{Name: "after-the-attack", Program: sp})
	rep.OwnerSetAfter = err == nil
	rep.PeakAnonBytes, rep.Samples = sampler.stop()
	rep.UnderLimit = rep.PeakAnonBytes <= uint64(rep.MemoryLimitBytes)
	if st, err := owner.Stats(ctx, &devicepb.StatsRequest{}); err == nil {
		rep.DevicePeakRSSBytes = st.PeakRssBytes
	}
	return rep, nil
}

// writeOwnerDB writes the owner's LWE database (generation ownerDB/g1)
// into a fresh store and makes benchUser its owner.
func writeOwnerDB(ctx context.Context, dir string, p lwepir.Params, shape lwepir.Shape, records int, opt AbuseOptions, lweSeed [lwepir.SeedSize]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	st, err := store.Open(dir, layout.Layout{Channels: 4, PageSize: 16 << 10})
	if err != nil {
		return err
	}
	defer st.Close()
	if _, _, err := client.WriteSeededLWE(ctx, storeSink(st), ownerDB+"/g1", p, shape.Rows, records, opt.RecordSize, opt.Seed, lweSeed, nil); err != nil {
		return err
	}
	d, err := device.New(st, device.DefaultLimits())
	if err != nil {
		return err
	}
	return d.Own(ownerDB, benchUser)
}

// attackerDial issues the attackers' certificate in the run's directory.
func attackerDial(certDir string) ([]remote.Option, error) {
	if err := certs.Issue(certDir, attackerUser, certs.RoleUser, nil); err != nil {
		return nil, err
	}
	cfg, err := certs.ClientConfig(certs.InDir(certDir, attackerUser))
	if err != nil {
		return nil, err
	}
	return []remote.Option{remote.WithTLS(cfg), remote.WithDialOptions(grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(64 << 20)))}, nil
}

// attackKind is one request an attacker sends.
type attackKind struct {
	name string
	size int
	send func(ctx context.Context, cc grpc.ClientConnInterface, serial int64) error
}

// rawBytes sends a request's bytes as they are and ignores the reply.
type rawBytes struct{}

func (rawBytes) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.([]byte))}, nil
}
func (rawBytes) Unmarshal(mem.BufferSlice, any) error { return nil }
func (rawBytes) Name() string                         { return "proto" }

func rawInvoke(ctx context.Context, cc grpc.ClientConnInterface, method string, body []byte) error {
	var reply []byte
	return cc.Invoke(ctx, "/"+api.ServiceName+"/"+method, body, &reply, grpc.ForceCodecV2(rawBytes{}))
}

// attackKinds are the probes of security item 4, as requests.
func attackKinds() ([]attackKind, error) {
	// 32 MB of empty Instances: 16 M elements, two bytes each.
	node := protowire.AppendTag(nil, 2, protowire.BytesType)
	node = protowire.AppendBytes(node, bytes.Repeat([]byte{0x12, 0x00}, 16<<20))
	expand := append(protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "p"), node...)
	// A Put of an 8 MB limb cut short by a byte.
	put := protowire.AppendBytes(protowire.AppendTag(nil, 5, protowire.BytesType), make([]byte, 8<<20))
	malformed := put[:len(put)-1]
	// A Get whose name is 2 MB: far past its method's size limit.
	oversized := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), string(make([]byte, 2<<20)))
	prog, err := abuseProgram()
	if err != nil {
		return nil, err
	}
	sp, err := abuseStreamProgram()
	if err != nil {
		return nil, err
	}
	return []attackKind{
		{"expanding_runstream", len(expand), func(ctx context.Context, cc grpc.ClientConnInterface, _ int64) error {
			return rawInvoke(ctx, cc, "RunStream", expand)
		}},
		{"malformed_put", len(malformed), func(ctx context.Context, cc grpc.ClientConnInterface, _ int64) error {
			return rawInvoke(ctx, cc, "Put", malformed)
		}},
		{"oversized_get", len(oversized), func(ctx context.Context, cc grpc.ClientConnInterface, _ int64) error {
			return rawInvoke(ctx, cc, "Get", oversized)
		}},
		{"table_fill", len(prog) + len(sp), func(ctx context.Context, cc grpc.ClientConnInterface, serial int64) error {
			dev := api.NewClient(cc)
			name := fmt.Sprintf("fill-%d", serial)
			if _, err := dev.ProgSet(ctx, &devicepb.ProgSetRequest{Name: name, Program: prog}); err != nil {
				return err
			}
			_, err := dev.SetStream(ctx, &devicepb.SetStreamRequest{Name: name, Program: sp})
			return err
		}},
	}, nil
}

// abuseProgram is a small valid mProgram (a homomorphic addition).
func abuseProgram() ([]byte, error) {
	preset, err := fhe.Lookup("insecure-test")
	if err != nil {
		return nil, err
	}
	params, err := preset.CKKSParameters()
	if err != nil {
		return nil, err
	}
	l, err := lower.Op(ir.OpHAdd, &lower.Context{Scheme: fhe.CKKS, Ring: lower.RingOf(params.Parameters), Level: 1})
	if err != nil {
		return nil, err
	}
	return l.Program.MarshalBinary()
}

// abuseStreamProgram is a small valid stream program.
func abuseStreamProgram() ([]byte, error) {
	preset, err := fhe.Lookup("insecure-test")
	if err != nil {
		return nil, err
	}
	params, err := preset.CKKSParameters()
	if err != nil {
		return nil, err
	}
	ring := lower.RingOf(params.Parameters)
	sp := &lower.StreamProgram{Scheme: fhe.CKKS, Ring: lower.Ring{LogN: ring.LogN, Q: ring.Q[:1], P: ring.P},
		Nodes: []lower.StreamNode{{Node: 7, Kind: lower.StreamInput, Name: "x", Count: 1, Polys: 2, Limbs: 1, Out: true}}}
	return sp.MarshalBinary()
}

// rssSampler samples a process's RssAnon every 20 ms.
type rssSampler struct {
	done    chan struct{}
	result  chan [2]uint64
	pid     string
	peak    uint64
	samples int
}

func newRSSSampler(pid string) *rssSampler {
	s := &rssSampler{done: make(chan struct{}), result: make(chan [2]uint64, 1), pid: pid}
	go func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if anon, _ := device.ProcessRSS(s.pid); anon > 0 {
				s.peak, s.samples = max(s.peak, anon), s.samples+1
			}
			select {
			case <-s.done:
				s.result <- [2]uint64{s.peak, uint64(s.samples)}
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// stop ends the sampling and returns the peak and the sample count.
func (s *rssSampler) stop() (uint64, int) {
	close(s.done)
	r := <-s.result
	return r[0], int(r[1])
}
