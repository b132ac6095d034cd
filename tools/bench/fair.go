package bench

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/programs"
	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/authz"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
	"github.com/rosemary-fhe/rosemary/fhe/pir"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
)

// FairOptions configure RunFair: one identity loops queries over a large
// database while another queries a small one, on one device.
type FairOptions struct {
	PIROptions       // the large database (Size, RecordSize, Seed, StoreDir, DeviceCommand)
	SmallSize  int64 // the small database's bytes
	Light      int   // the small database's queries, alone and under load
}

// FairReport is what `rosemary bench fair --json` prints; every figure is
// measured in the run.
type FairReport struct {
	Transport  string `json:"transport"`
	Scheme     string `json:"scheme"` // both databases': lwe (the default) or bgv
	BigBytes   int64  `json:"big_db_bytes"`
	SmallBytes int64  `json:"small_db_bytes"`
	// The small database's query time (mean, seconds) alone and while
	// the other identity loops queries over the large one, measured in
	// alternating segments (measureFair); the first and the last alone
	// segment are also reported, and each cycle's ratio (a loaded
	// segment over the alone one before it).
	LightAloneS       float64   `json:"light_alone_s"`
	LightFirstS       float64   `json:"light_alone_first_s"`
	LightLastS        float64   `json:"light_alone_last_s"`
	LightUnderLoadS   float64   `json:"light_under_load_s"`
	Ratio             float64   `json:"ratio"` // under load / alone
	CycleRatios       []float64 `json:"cycle_ratios"`
	LightAloneQueries int       `json:"light_alone_queries"`
	// The same on the device alone (its RunStream time): client and
	// device share this machine's cores, so the end-to-end figures also
	// charge the load to the client's encryption and decryption.
	LightAloneDeviceS     float64 `json:"light_alone_device_s"`
	LightUnderLoadDeviceS float64 `json:"light_under_load_device_s"`
	DeviceRatio           float64 `json:"device_ratio"`
	LightUnderLoadQueries int     `json:"light_under_load_queries"`
	// Medians of the same queries: a shared host's stalls of a query or
	// two weigh less.
	LightAloneMedianS     float64 `json:"light_alone_median_s"`
	LightUnderLoadMedianS float64 `json:"light_under_load_median_s"`
	MedianRatio           float64 `json:"median_ratio"`
	HeavyQueries          int     `json:"heavy_queries"` // answered during the loaded segments
	HeavyMeanS            float64 `json:"heavy_mean_s"`
	// The device's stages of a light query alone and under load, and of
	// a heavy query: their use of the device's shared cores (means).
	LightAloneStages     []StageUse `json:"light_alone_stages,omitempty"`
	LightUnderLoadStages []StageUse `json:"light_under_load_stages,omitempty"`
	HeavyStages          []StageUse `json:"heavy_stages,omitempty"`
	// The machine's cores over the alone and the loaded segments, from
	// /proc (0 where unknown): what the device process, this one (both
	// clients) and everything else on the machine used, in cores (CPU
	// seconds per second). On a shared machine, segments whose other
	// load differs are not a fair comparison.
	CoresAlone     RoundCores `json:"cores_alone"`
	CoresUnderLoad RoundCores `json:"cores_under_load"`
	Correct        bool       `json:"correct"`
	Provenance     string     `json:"provenance"`
	devicePid      int
}

const smallDB = "small"

// lightUser is the second identity of the fairness benchmark.
const lightUser = "bench-light"

// RunFair measures fair admission: the small database's query time alone,
// then while benchUser loops queries over the large one, then alone again;
// both answers are checked record for record. Both databases are of
// opt.Scheme (lwe, the default, or bgv).
func RunFair(ctx context.Context, opt FairOptions) (*FairReport, error) {
	if opt.Plaintext {
		return nil, errors.New("bench: admission is fair per identity, and a plaintext device sees one: run with TLS")
	}
	if opt.Light < 1 {
		return nil, fmt.Errorf("bench: %d small queries", opt.Light)
	}
	var (
		heavy, light fairSide
		stop         func()
		err          error
	)
	rep := &FairReport{BigBytes: opt.Size, SmallBytes: opt.SmallSize, Provenance: "measured here"}
	switch opt.Scheme {
	case "", "lwe":
		rep.Scheme = "lwe"
		heavy, light, stop, err = fairLWE(ctx, opt, rep)
	case "bgv":
		rep.Scheme = "bgv"
		heavy, light, stop, err = fairBGV(ctx, opt, rep)
	default:
		return nil, fmt.Errorf("bench: scheme %q (lwe or bgv)", opt.Scheme)
	}
	if err != nil {
		return nil, err
	}
	defer stop()
	return rep, measureFair(ctx, opt, rep, heavy, light)
}

// fairSide is one identity's database in the fairness benchmark: how to
// query it and what each record must be.
type fairSide struct {
	records int
	get     func(ctx context.Context, idx int) (*client.PIRQuery, error)
	want    func(idx int) ([]byte, error)
}

// measureFair measures the light identity's queries alone and under the
// heavy identity's loop, in alternating segments: alone, under load,
// alone, … fairCycles loaded segments between fairCycles+1 alone ones, so
// that a drift in a shared host's load weighs on both sides alike. An
// alone segment is opt.Light queries with the loop paused between two of
// its queries (a cancelled scan pass would run on to its end on the
// device); a loaded segment runs from the loop's resumption until it has
// made opt.Light queries and the loop has answered one more (or
// maxLoaded has passed), so it samples the loop's whole cycle (the heavy
// client's encryption and decryption, its ring stage, its scan). A heavy
// query before the first segment warms its plan and store reads.
func measureFair(ctx context.Context, opt FairOptions, rep *FairReport, heavy, light fairSide) error {
	logf, _ := orQuiet(opt.Log, opt.Progress)
	rep.Correct = true
	rng := rand.New(rand.NewPCG(opt.Seed, 0xfa1))
	query := func(s fairSide) (*client.PIRQuery, error) {
		idx := rng.IntN(s.records)
		q, err := s.get(ctx, idx)
		if err != nil {
			return nil, err
		}
		wantRec, err := s.want(idx)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(q.Record, wantRec) {
			rep.Correct = false
		}
		return q, nil
	}
	if _, err := query(light); err != nil { // warm: plan and keys set
		return err
	}
	if _, err := heavy.get(ctx, 0); err != nil { // the loop's warm-up
		return fmt.Errorf("bench: the looping identity's query: %w", err)
	}
	loop := newHeavyLoop(ctx, heavy, opt.Seed, logf)
	defer loop.stop()
	var alone, under fairRounds
	segment := func(r *fairRounds, label string, more func(done int) bool) error {
		c0 := readCPU(rep.devicePid)
		seg, err := r.segment(func() (*client.PIRQuery, error) { return query(light) }, more, func(i int, q *client.PIRQuery) {
			var ds float64
			if q.Device != nil {
				ds = q.Device.Seconds
			}
			logf("%s: small query %d in %.3f s (device %.3f s) %s", label, i, q.Seconds, ds, stageLine(q.Device))
		})
		r.cpu.add(readCPU(rep.devicePid).since(c0), seg)
		return err
	}
	count := func(done int) bool { return done < opt.Light }
	var cycleRatios []float64
	for cyc := 0; cyc <= fairCycles; cyc++ {
		a0, a0n := alone.wallSum, alone.queries
		if err := segment(&alone, fmt.Sprintf("alone %d", cyc), count); err != nil {
			return err
		}
		aloneMean := (alone.wallSum - a0) / float64(alone.queries-a0n)
		if cyc == 0 {
			rep.LightFirstS = aloneMean
		}
		rep.LightLastS = aloneMean
		if cyc == fairCycles {
			break
		}
		loop.resume()
		answered, from := loop.answers(), time.Now()
		u0, u0n := under.wallSum, under.queries
		err := segment(&under, fmt.Sprintf("under load %d", cyc), func(done int) bool {
			return loop.err() == nil && (done < opt.Light || (loop.answers() <= answered && time.Since(from) < maxLoaded))
		})
		loop.pause()
		if err != nil {
			return err
		}
		if err := loop.err(); err != nil {
			return fmt.Errorf("bench: the looping identity's query: %w", err)
		}
		cycleRatios = append(cycleRatios, ((under.wallSum-u0)/float64(under.queries-u0n))/aloneMean)
	}
	rep.CycleRatios = cycleRatios
	rep.HeavyQueries, rep.HeavyMeanS, rep.HeavyStages = loop.summary()
	rep.LightAloneS, rep.LightAloneDeviceS, rep.LightAloneMedianS = alone.means()
	rep.LightUnderLoadS, rep.LightUnderLoadDeviceS, rep.LightUnderLoadMedianS = under.means()
	rep.LightAloneQueries, rep.LightUnderLoadQueries = alone.queries, under.queries
	rep.LightAloneStages, rep.LightUnderLoadStages = alone.stages.mean(), under.stages.mean()
	rep.CoresAlone, rep.CoresUnderLoad = alone.cpu.mean(), under.cpu.mean()
	rep.Ratio = rep.LightUnderLoadS / rep.LightAloneS
	rep.MedianRatio = rep.LightUnderLoadMedianS / rep.LightAloneMedianS
	if rep.LightAloneDeviceS > 0 {
		rep.DeviceRatio = rep.LightUnderLoadDeviceS / rep.LightAloneDeviceS
	}
	return nil
}

// fairCycles is how many loaded segments a run measures, each between
// two alone ones.
const fairCycles = 3

// maxLoaded bounds a loaded segment waiting for the loop's answer: a
// large query slowed that much by the light ones is in flight on the
// device the whole segment anyway.
const maxLoaded = 15 * time.Second

// fairRounds gathers the light queries of one kind of segment.
type fairRounds struct {
	queries         int
	wallSum, devSum float64
	walls           []float64
	stages          stageSums
	cpu             coreSums
}

// segment makes queries until more says stop (asked after each).
func (r *fairRounds) segment(get func() (*client.PIRQuery, error), more func(done int) bool, log func(int, *client.PIRQuery)) (float64, error) {
	start := time.Now()
	for done := 0; done == 0 || more(done); done++ {
		q, err := get()
		if err != nil {
			return time.Since(start).Seconds(), err
		}
		r.queries++
		r.wallSum += q.Seconds
		r.walls = append(r.walls, q.Seconds)
		if q.Device != nil {
			r.devSum += q.Device.Seconds
			r.stages.add(q.Device.Cores)
		}
		log(done, q)
	}
	return time.Since(start).Seconds(), nil
}

// means are the mean wall and device times and the median wall time.
func (r *fairRounds) means() (wall, dev, median float64) {
	if r.queries == 0 {
		return 0, 0, 0
	}
	w := slices.Sorted(slices.Values(r.walls))
	return r.wallSum / float64(r.queries), r.devSum / float64(r.queries), (w[(len(w)-1)/2] + w[len(w)/2]) / 2
}

// StageUse is a stage of a query on the device's shared cores (the
// device's report, api.CoreUse), a mean over a round's queries.
type StageUse struct {
	Stage   string  `json:"stage"`
	Seconds float64 `json:"s"` // wall time
	Chunks  float64 `json:"chunks"`
	// Summed over the stage's workers: waiting for a core, holding one.
	WaitS float64 `json:"wait_s"`
	HeldS float64 `json:"held_s"`
	// The longest wait and the longest chunk of any query of the round.
	MaxWaitS  float64 `json:"max_wait_s"`
	MaxChunkS float64 `json:"max_chunk_s"`
	Batch     float64 `json:"batch"` // queries sharing the stage
	// MinLimit is the fewest cores the device granted in any query's
	// stage: below its workers, it narrowed its grants to the CPU the
	// host gave it.
	MinLimit uint32 `json:"min_limit"`
}

// stageSums adds up the stages of a round's queries.
type stageSums struct {
	n     map[string]int
	order []string
	sum   map[string]*StageUse
}

func (s *stageSums) add(us []*devicepb.CoreUse) {
	if s.sum == nil {
		s.sum, s.n = map[string]*StageUse{}, map[string]int{}
	}
	for _, u := range us {
		t := s.sum[u.Stage]
		if t == nil {
			t = &StageUse{Stage: u.Stage}
			s.sum[u.Stage] = t
			s.order = append(s.order, u.Stage)
		}
		s.n[u.Stage]++
		t.Seconds += u.Seconds
		t.Chunks += float64(u.Chunks)
		t.WaitS += u.WaitSeconds
		t.HeldS += u.HeldSeconds
		t.MaxWaitS = max(t.MaxWaitS, u.MaxWaitSeconds)
		t.MaxChunkS = max(t.MaxChunkS, u.MaxChunkSeconds)
		t.Batch += float64(u.Batch)
		if t.MinLimit == 0 || u.MinLimit < t.MinLimit {
			t.MinLimit = u.MinLimit
		}
	}
}

func (s *stageSums) mean() []StageUse {
	var out []StageUse
	for _, name := range s.order {
		t, n := *s.sum[name], float64(s.n[name])
		t.Seconds, t.Chunks, t.WaitS, t.HeldS, t.Batch = t.Seconds/n, t.Chunks/n, t.WaitS/n, t.HeldS/n, t.Batch/n
		out = append(out, t)
	}
	return out
}

// stageLine is a reply's stages in a log line.
func stageLine(r *devicepb.RunStreamResponse) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	for _, u := range r.Cores {
		fmt.Fprintf(&b, "[%s %.1f ms: %d chunks, wait %.1f ms (max %.2f), held %.1f ms (max chunk %.2f), batch %d, cores ≥ %d] ", u.Stage, 1e3*u.Seconds,
			u.Chunks, 1e3*u.WaitSeconds, 1e3*u.MaxWaitSeconds, 1e3*u.HeldSeconds, 1e3*u.MaxChunkSeconds, u.Batch, u.MinLimit)
	}
	return strings.TrimSpace(b.String())
}

// lightDial is how lightUser dials the device (a certificate issued in the
// run's certificate directory).
func lightDial(opt PIROptions) ([]remote.Option, error) {
	certDir := filepath.Join(filepath.Dir(filepath.Clean(opt.StoreDir)), "certs")
	if err := certs.Issue(certDir, lightUser, certs.RoleUser, nil); err != nil {
		return nil, err
	}
	cfg, err := certs.ClientConfig(certs.InDir(certDir, lightUser))
	if err != nil {
		return nil, err
	}
	return []remote.Option{remote.WithTLS(cfg)}, nil
}

// fairBGV sets up both sides with the BGV scheme (package fhe/pir): the
// large database of bench pir --scheme bgv and a small one beside it.
func fairBGV(ctx context.Context, opt FairOptions, rep *FairReport) (heavy, light fairSide, stop func(), err error) {
	logf, progress := orQuiet(opt.Log, opt.Progress)
	if opt.Preset == "" {
		opt.Preset = "bgv-13"
	}
	preset, err := fhe.Lookup(opt.Preset)
	if err != nil {
		return heavy, light, nil, err
	}
	params, err := preset.BGVParameters()
	if err != nil {
		return heavy, light, nil, err
	}
	shapeOf := func(size int64) (pir.Shape, error) {
		perPt := int64(2 * params.N())
		if size < perPt || opt.RecordSize < 1 || int64(opt.RecordSize) > perPt {
			return pir.Shape{}, fmt.Errorf("bench: a database of %d bytes with %d-byte records", size, opt.RecordSize)
		}
		return pir.NewShape(params, opt.RecordSize, int(size/perPt)*(int(perPt)/opt.RecordSize))
	}
	big, err := shapeOf(opt.Size)
	if err != nil {
		return heavy, light, nil, err
	}
	small, err := shapeOf(opt.SmallSize)
	if err != nil {
		return heavy, light, nil, err
	}
	prep := &PIRReport{DBBytes: opt.Size}
	want := manifest{Size: opt.Size, RecordSize: opt.RecordSize, Seed: opt.Seed, Preset: preset.Name, Shape: big, TileRows: client.PIRTileRows}
	if err := buildStore(ctx, opt.PIROptions, want, prep, progress, logf); err != nil {
		return heavy, light, nil, err
	}
	if err := writeSmall(ctx, opt.StoreDir, small, opt.Seed+1); err != nil {
		return heavy, light, nil, err
	}
	addr, dial, lightOpts, stop, err := startFairDevice(ctx, opt, rep, logf)
	if err != nil {
		return heavy, light, nil, err
	}
	session := func(dial []remote.Option, db string, shape pir.Shape, seed uint64) (fairSide, error) {
		c, err := remote.Dial(addr, dial...)
		if err != nil {
			return fairSide{}, err
		}
		context.AfterFunc(ctx, func() { c.Close() })
		sk := rlwe.NewKeyGenerator(params).GenSecretKeyNew()
		s, err := programs.NewPIRSession(ctx, c, db, preset, shape, sk)
		if err != nil {
			c.Close()
			return fairSide{}, fmt.Errorf("bench: session on %s: %w", db, err)
		}
		return fairSide{records: shape.Records, get: s.Get,
			want: func(idx int) ([]byte, error) { return client.SeededRecord(seed, shape, idx) }}, nil
	}
	if heavy, err = session(dial, benchDB, big, opt.Seed); err == nil {
		light, err = session(lightOpts, smallDB, small, opt.Seed+1)
	}
	if err != nil {
		stop()
		return heavy, light, nil, err
	}
	return heavy, light, stop, nil
}

// startFairDevice starts the device child over opt.StoreDir and returns
// its address, the heavy identity's and the light identity's dial options.
func startFairDevice(ctx context.Context, opt FairOptions, rep *FairReport, logf func(string, ...any)) (string, []remote.Option, []remote.Option, func(), error) {
	opt.Device = ""
	dp, err := startDeviceProc(ctx, opt.PIROptions, logf)
	if err != nil {
		return "", nil, nil, nil, err
	}
	addr, dial, stop := dp.addr, dp.dial, dp.stop
	rep.Transport, rep.devicePid = dp.transport, dp.pid
	lightOpts, err := lightDial(opt.PIROptions)
	if err != nil {
		stop()
		return "", nil, nil, nil, err
	}
	return addr, dial, lightOpts, stop, nil
}

// fairLWE sets up both sides with the LWE scheme (package fhe/lwepir, the
// default): the large database of bench pir (reused from its store) and a
// small one beside it, generation smallDB/g1.
func fairLWE(ctx context.Context, opt FairOptions, rep *FairReport) (heavy, light fairSide, stop func(), err error) {
	logf, progress := orQuiet(opt.Log, opt.Progress)
	p := lwepir.Default()
	if opt.LWEParams != "" {
		if p, err = lwepir.ByName(opt.LWEParams); err != nil {
			return heavy, light, nil, err
		}
	}
	shapeOf := func(size int64) (lweManifest, error) {
		records := int(size / int64(max(opt.RecordSize, 1)))
		shape, err := lwepir.NewShape(p, records, opt.RecordSize)
		if err != nil {
			return lweManifest{}, fmt.Errorf("bench: a database of %d bytes with %d-byte records: %w", size, opt.RecordSize, err)
		}
		return lweManifest{Size: size, RecordSize: opt.RecordSize, Seed: opt.Seed, Params: p.Name(), Packing: p.Packing, Shape: shape, Records: records}, nil
	}
	bigWant, err := shapeOf(opt.Size)
	if err != nil {
		return heavy, light, nil, err
	}
	smallWant, err := shapeOf(opt.SmallSize)
	if err != nil {
		return heavy, light, nil, err
	}
	smallWant.Seed = opt.Seed + 1
	prep := &PIRReport{DBBytes: int64(bigWant.Records) * int64(opt.RecordSize)}
	if bigWant, err = buildLWEStore(ctx, opt.PIROptions, p, bigWant, prep, progress, logf); err != nil {
		return heavy, light, nil, err
	}
	if smallWant, err = writeSmallLWE(ctx, opt.StoreDir, p, smallWant); err != nil {
		return heavy, light, nil, err
	}
	addr, dial, lightOpts, stop, err := startFairDevice(ctx, opt, rep, logf)
	if err != nil {
		return heavy, light, nil, err
	}
	session := func(dial []remote.Option, db, identity string, m lweManifest) (fairSide, error) {
		c, err := remote.Dial(addr, dial...)
		if err != nil {
			return fairSide{}, err
		}
		context.AfterFunc(ctx, func() { c.Close() })
		var keySeed [32]byte
		crand.Read(keySeed[:])
		sk, err := lwepir.DeriveSecretKey(p, keySeed[:])
		if err != nil {
			return fairSide{}, err
		}
		s, err := client.NewLWESession(ctx, c, db+"/g1", p, m.Shape, m.LWESeed, sk, objname.Keys(db, identity, "bench"))
		if err != nil {
			c.Close()
			return fairSide{}, fmt.Errorf("bench: session on %s: %w", db, err)
		}
		return fairSide{records: m.Records, get: s.Get,
			want: func(idx int) ([]byte, error) { return client.SeededLWERecord(m.Seed, idx, m.RecordSize), nil }}, nil
	}
	if heavy, err = session(dial, benchDB, benchUser, bigWant); err == nil {
		light, err = session(lightOpts, smallDB, lightUser, smallWant)
	}
	if err != nil {
		stop()
		return heavy, light, nil, err
	}
	return heavy, light, stop, nil
}

// smallLWEManifestFile records the small LWE database beside the large one.
const smallLWEManifestFile = "lwe-fair-small.json"

// writeSmallLWE writes the small LWE database (generation smallDB/g1)
// unless the store holds it, and sets both databases' owners.
func writeSmallLWE(ctx context.Context, dir string, p lwepir.Params, want lweManifest) (lweManifest, error) {
	st, err := store.Open(dir, layout.Layout{})
	if err != nil {
		return want, err
	}
	defer st.Close()
	path := filepath.Join(dir, smallLWEManifestFile)
	var have lweManifest
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &have) == nil &&
		have.Shape == want.Shape && have.Seed == want.Seed && have.Params == want.Params && have.Packing == want.Packing {
		want = have
	} else {
		os.Remove(path)
		if err := deleteUnder(st, smallDB+"/g1/"); err != nil {
			return want, err
		}
		if _, err := crand.Read(want.LWESeed[:]); err != nil {
			return want, err
		}
		if _, _, err := client.WriteSeededLWE(ctx, storeSink(st), smallDB+"/g1", p, want.Shape.Rows, want.Records, want.RecordSize, want.Seed, want.LWESeed, nil); err != nil {
			return want, err
		}
		b, _ := json.Marshal(want)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return want, err
		}
	}
	d, err := device.New(st, device.DefaultLimits())
	if err != nil {
		return want, err
	}
	return want, errors.Join(d.SaveACL(smallDB, &authz.ACL{Owner: lightUser}), d.SaveACL(benchDB, &authz.ACL{Owner: benchUser}))
}

// writeSmall writes the small database into the store beside the large
// one and makes lightUser its owner (benchUser owns the large one).
func writeSmall(ctx context.Context, dir string, shape pir.Shape, seed uint64) error {
	st, err := store.Open(dir, layout.Layout{})
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := client.WriteSeededPIR(ctx, storeSink(st), smallDB, shape, seed, nil); err != nil {
		return err
	}
	d, err := device.New(st, device.DefaultLimits())
	if err != nil {
		return err
	}
	return errors.Join(d.SaveACL(smallDB, &authz.ACL{Owner: lightUser}), d.SaveACL(benchDB, &authz.ACL{Owner: benchUser}))
}
