package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/client/kv"
	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// KVOptions configure the keyword PIR benchmark: a CSV of Records keys
// with values of ValueSize bytes, loaded into a keyword database on a
// device process, looked up (present and absent keys, checked), updated,
// compacted while two clients query; then GetMany against single Gets on
// a PIR database of the same values.
type KVOptions struct {
	Records   int
	ValueSize int
	Lookups   int // of present keys, and as many of absent keys
	Updates   int
	Many      int // GetMany batch (0: skip the PIR database)
	// DeltaMax and CompactAt: the delta's bound and the size at which an
	// update starts a compaction in the background (updates go on).
	DeltaMax, CompactAt int
	LWEParams           string
	Seed                uint64
	Dir                 string
	Device              []string // command starting a device daemon
	Plaintext           bool
	Log                 func(format string, args ...any)
	Progress            func(stage string, done, total int64)
}

// KVReport is what `rosemary bench kv --json` prints: every figure
// measured in the run.
type KVReport struct {
	Transport   string  `json:"transport"`
	Records     int     `json:"records"`
	ValueSize   int     `json:"value_size"`
	Buckets     int     `json:"buckets"`
	BucketBytes int     `json:"bucket_bytes"`
	StoredBytes int64   `json:"stored_bytes"`
	LoadS       float64 `json:"load_s"`
	// Lookups (before any update): mean latency, all checked.
	Lookups          int     `json:"lookups"`
	PresentCorrect   int     `json:"present_correct"`
	AbsentNotFound   int     `json:"absent_not_found"`
	PresentMeanS     float64 `json:"present_mean_s"`
	AbsentMeanS      float64 `json:"absent_mean_s"`
	QueriesPerLookup int     `json:"queries_per_lookup"`
	// Bytes per lookup on the wire, as the device counts request and reply
	// payloads (WireBytesIn/Out), with an empty delta and with the delta
	// of all the updates.
	WireBytesPerLookup      int64 `json:"wire_bytes_per_lookup"`
	WireBytesPerLookupDelta int64 `json:"wire_bytes_per_lookup_full_delta"`
	// Updates: latency of each Put/Delete until the next lookup sees it.
	Updates     int     `json:"updates"`
	UpdateMeanS float64 `json:"update_mean_s"`
	UpdateMaxS  float64 `json:"update_max_s"`
	// UpdateP99S: the 99th percentile; UpdatesOver100ms: how many took
	// longer than the 100 ms.
	UpdateP99S       float64 `json:"update_p99_s"`
	UpdatesOver100ms int     `json:"updates_over_100ms"`
	UpdatesVerified  int     `json:"updates_verified"`
	// The updates that began while a background compaction ran, and of
	// them the longest and those over 100 ms: the compaction shares the
	// cores and the device's write gate with them.
	UpdatesBesideCompaction          int     `json:"updates_beside_compaction"`
	UpdateMaxBesideCompactionS       float64 `json:"update_max_beside_compaction_s"`
	UpdatesOver100msBesideCompaction int     `json:"updates_over_100ms_beside_compaction"`
	DeltaBytes                       int     `json:"delta_bytes"`
	// Background compactions the updates started (at CompactAt), their
	// mean time, and updates that found the delta full and waited for one
	// (their wait is not in the update latency).
	BackgroundCompactions int     `json:"background_compactions"`
	BackgroundCompactS    float64 `json:"background_compact_mean_s"`
	UpdateStalls          int     `json:"update_stalls"`
	// Compaction while two clients look keys up.
	CompactS            float64 `json:"compact_s"`
	LookupsDuringCompct int     `json:"lookups_during_compaction"`
	FailedDuringCompact int     `json:"failed_during_compaction"`
	WrongDuringCompact  int     `json:"wrong_during_compaction"`
	PostCompactCorrect  int     `json:"post_compaction_correct"`
	// GetMany of Many indices against Many Gets (device CPU seconds, from
	// the device process's /proc stat; wall seconds).
	Many              int     `json:"many,omitempty"`
	GetsDeviceCPUS    float64 `json:"gets_device_cpu_s,omitempty"`
	GetsWallS         float64 `json:"gets_wall_s,omitempty"`
	GetManyDeviceCPUS float64 `json:"get_many_device_cpu_s,omitempty"`
	GetManyWallS      float64 `json:"get_many_wall_s,omitempty"`
	ManyCorrect       bool    `json:"many_correct,omitempty"`
	DevicePeakRSS     uint64  `json:"device_peak_rss_bytes"`
	// DevicePeakAnonRSS, DevicePeakFileRSS: the device's own memory and
	// the store pages its scans map (page cache), sampled while it ran jobs.
	DevicePeakAnonRSS uint64 `json:"device_peak_anon_rss_bytes,omitempty"`
	DevicePeakFileRSS uint64 `json:"device_peak_file_rss_bytes,omitempty"`
	// ClientPeakRSS: this process's peak resident set (VmHWM): the
	// generated input is streamed, the load and compaction hold the
	// values once.
	ClientPeakRSS uint64 `json:"client_peak_rss_bytes"`
	Provenance    string `json:"provenance"`
}

// kvValue is value version v of key i: printable bytes of a seeded stream.
func kvValue(seed uint64, i, v, size int) []byte {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	binary.LittleEndian.PutUint64(key[8:], uint64(i))
	binary.LittleEndian.PutUint64(key[16:], uint64(v))
	rng := rand.NewChaCha8(key)
	out := make([]byte, size)
	rng.Read(out)
	const alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for j := range out {
		out[j] = alpha[out[j]&63]
	}
	return out
}

func kvKey(i int) string { return fmt.Sprintf("k%09d", i) }

// RunKV runs the keyword PIR benchmark.
func RunKV(ctx context.Context, opt KVOptions) (*KVReport, error) {
	logf, progress := orQuiet(opt.Log, opt.Progress)
	if opt.Records < 1 || opt.ValueSize < 1 || opt.Lookups < 1 {
		return nil, errors.New("bench kv: records, value size and lookups must be positive")
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, err
	}
	rep := &KVReport{Records: opt.Records, ValueSize: opt.ValueSize, Lookups: opt.Lookups, Updates: opt.Updates, Provenance: "measured here"}
	csvPath := filepath.Join(opt.Dir, "kv.csv")
	logf("generating %d keys with %d-byte values in %s", opt.Records, opt.ValueSize, csvPath)
	if err := writeBuffered(csvPath, func(w io.Writer) error {
		for i := range opt.Records {
			if _, err := fmt.Fprintf(w, "%s,%s\n", kvKey(i), kvValue(opt.Seed, i, 0, opt.ValueSize)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	keys, dp, err := freshDevice(ctx, opt.Dir, opt.Device, opt.Plaintext, logf)
	if err != nil {
		return nil, err
	}
	defer dp.stop()
	rep.Transport = dp.transport
	open := func() (*client.Client, error) { return client.Open(ctx, dp.addr, keys, dp.dial...) }
	c, err := open()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if _, err := c.CreateKV(ctx, "kv", client.KVOptions{MaxValue: opt.ValueSize, LWEParams: opt.LWEParams, InsecureParams: insecureParams(opt.LWEParams), DeltaMax: opt.DeltaMax, CompactAt: opt.CompactAt}); err != nil {
		return nil, err
	}
	f, err := os.Open(csvPath)
	if err != nil {
		return nil, err
	}
	fi, _ := f.Stat()
	start := time.Now()
	in, err := c.Load(ctx, "kv", bufio.NewReaderSize(f, 1<<20), client.LoadOptions{KV: kv.CSV, Progress: func(done int64) { progress("load kv", done, fi.Size()) }})
	f.Close()
	if err != nil {
		return nil, err
	}
	rep.LoadS = time.Since(start).Seconds()
	rep.Buckets, rep.BucketBytes, rep.StoredBytes = in.KV.Layout.Buckets, in.Matrix().RecordSize, in.Bytes
	rep.QueriesPerLookup = in.KV.Layout.Queries()
	logf("loaded %d keys in %.1f s: %d buckets of %d B, %d B stored", in.KV.Entries, rep.LoadS, rep.Buckets, rep.BucketBytes, rep.StoredBytes)

	rng := rand.New(rand.NewPCG(opt.Seed, 26))
	// Warm-up: the session (program, evaluation keys) is set once.
	if _, err := c.Lookup(ctx, "kv", []byte(kvKey(0))); err != nil {
		return nil, err
	}
	wire := func() (int64, error) {
		st, err := c.Device().Stats(ctx, &devicepb.StatsRequest{})
		if err != nil {
			return 0, err
		}
		return int64(st.WireBytesIn + st.WireBytesOut), nil
	}
	w0, err := wire()
	if err != nil {
		return nil, err
	}
	var presentS, absentS float64
	for k := range opt.Lookups {
		i := rng.IntN(opt.Records)
		t := time.Now()
		v, err := c.Lookup(ctx, "kv", []byte(kvKey(i)))
		presentS += time.Since(t).Seconds()
		if err == nil && bytes.Equal(v, kvValue(opt.Seed, i, 0, opt.ValueSize)) {
			rep.PresentCorrect++
		}
		t = time.Now()
		_, err = c.Lookup(ctx, "kv", []byte("absent-"+strconv.Itoa(k)))
		absentS += time.Since(t).Seconds()
		if errors.Is(err, client.ErrNotFound) {
			rep.AbsentNotFound++
		}
		progress("lookups", int64(k+1), int64(opt.Lookups))
	}
	w1, err := wire()
	if err != nil {
		return nil, err
	}
	rep.PresentMeanS, rep.AbsentMeanS = presentS/float64(opt.Lookups), absentS/float64(opt.Lookups)
	rep.WireBytesPerLookup = (w1 - w0) / int64(2*opt.Lookups)
	logf("lookups: %d/%d present byte-exact (%.3f s each), %d/%d absent not found (%.3f s each), %d B on the wire each",
		rep.PresentCorrect, opt.Lookups, rep.PresentMeanS, rep.AbsentNotFound, opt.Lookups, rep.AbsentMeanS, rep.WireBytesPerLookup)

	// Updates: overwrite, add, delete; each visible to the next lookup.
	want := map[string][]byte{} // nil: deleted
	var updS float64
	var updAll []float64
	var (
		compacting atomic.Bool
		cwg        sync.WaitGroup
		cerr       error
		cmu        sync.Mutex
	)
	background := func() {
		defer cwg.Done()
		t := time.Now()
		_, err := c.Compact(ctx, "kv")
		cmu.Lock()
		if err != nil && cerr == nil {
			cerr = err
		}
		rep.BackgroundCompactions++
		rep.BackgroundCompactS += time.Since(t).Seconds()
		cmu.Unlock()
		compacting.Store(false)
	}
	for u := range opt.Updates {
		var key string
		var err error
		var res *client.Update
		var d float64
		beside := compacting.Load()
		for try := 0; ; try++ {
			t := time.Now()
			switch {
			case u%20 == 19:
				key = kvKey((u * 7919) % opt.Records)
				res, err = c.Delete(ctx, "kv", []byte(key))
				want[key] = nil
			case u%10 == 9:
				key = "new-" + strconv.Itoa(u)
				v := kvValue(opt.Seed, opt.Records+u, 1, opt.ValueSize)
				res, err = c.Put(ctx, "kv", []byte(key), v)
				want[key] = v
			default:
				i := (u * 104729) % opt.Records
				key = kvKey(i)
				v := kvValue(opt.Seed, i, u+1, opt.ValueSize)
				res, err = c.Put(ctx, "kv", []byte(key), v)
				want[key] = v
			}
			d = time.Since(t).Seconds()
			if !errors.Is(err, client.ErrDeltaFull) || try > 0 {
				break
			}
			// The delta is full: wait for the compaction under way.
			rep.UpdateStalls++
			if !compacting.Load() {
				compacting.Store(true)
				cwg.Add(1)
				go background()
			}
			cwg.Wait()
		}
		if err != nil {
			return nil, fmt.Errorf("bench kv: update %d: %w", u, err)
		}
		if res.CompactDue && !compacting.Load() {
			compacting.Store(true)
			cwg.Add(1)
			go background()
		}
		updS += d
		updAll = append(updAll, d)
		if d > 0.1 {
			rep.UpdatesOver100ms++
		}
		if beside {
			rep.UpdatesBesideCompaction++
			rep.UpdateMaxBesideCompactionS = max(rep.UpdateMaxBesideCompactionS, d)
			if d > 0.1 {
				rep.UpdatesOver100msBesideCompaction++
			}
		}
		rep.UpdateMaxS = max(rep.UpdateMaxS, d)
		rep.DeltaBytes = res.DeltaBytes
		progress("updates", int64(u+1), int64(opt.Updates))
	}
	cwg.Wait()
	if cerr != nil {
		return nil, fmt.Errorf("bench kv: background compaction: %w", cerr)
	}
	if rep.BackgroundCompactions > 0 {
		rep.BackgroundCompactS /= float64(rep.BackgroundCompactions)
	}
	if opt.Updates > 0 {
		rep.UpdateMeanS = updS / float64(opt.Updates)
		slices.Sort(updAll)
		rep.UpdateP99S = updAll[min(len(updAll)-1, len(updAll)*99/100)]
	}
	check := func(c *client.Client, key string) (bool, error) {
		v, err := c.Lookup(ctx, "kv", []byte(key))
		exp, touched := want[key]
		if !touched {
			i, _ := strconv.Atoi(strings.TrimPrefix(key, "k"))
			exp = kvValue(opt.Seed, i, 0, opt.ValueSize)
		}
		if exp == nil {
			return errors.Is(err, client.ErrNotFound), nil
		}
		if err != nil {
			return false, err
		}
		return bytes.Equal(v, exp), nil
	}
	var touched []string
	for k := range want {
		touched = append(touched, k)
	}
	verify := min(len(touched), opt.Lookups)
	w2, err := wire()
	if err != nil {
		return nil, err
	}
	for _, k := range touched[:verify] {
		if ok, err := check(c, k); err != nil {
			return nil, err
		} else if ok {
			rep.UpdatesVerified++
		}
	}
	if verify > 0 {
		w3, err := wire()
		if err != nil {
			return nil, err
		}
		rep.WireBytesPerLookupDelta = (w3 - w2) / int64(verify)
	}
	logf("updates beside a background compaction: %d (max %.4f s, %d over 100 ms)", rep.UpdatesBesideCompaction, rep.UpdateMaxBesideCompactionS, rep.UpdatesOver100msBesideCompaction)
	logf("updates: %d in %.4f s each (p99 %.4f s, max %.4f s, %d over 100 ms), delta %d B, %d background compactions (%.1f s each), %d stalls; %d/%d updated keys read back right (%d B on the wire per lookup with the delta)",
		opt.Updates, rep.UpdateMeanS, rep.UpdateP99S, rep.UpdateMaxS, rep.UpdatesOver100ms, rep.DeltaBytes, rep.BackgroundCompactions, rep.BackgroundCompactS, rep.UpdateStalls, rep.UpdatesVerified, verify, rep.WireBytesPerLookupDelta)

	// Compaction while two other clients look keys up (updated and not).
	var stop atomic.Bool
	var wg sync.WaitGroup
	var mu sync.Mutex
	for g := range 2 {
		cg, err := open()
		if err != nil {
			return nil, err
		}
		defer cg.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(opt.Seed, uint64(g)))
			for !stop.Load() {
				key := kvKey(r.IntN(opt.Records))
				if len(touched) > 0 && r.IntN(2) == 0 {
					key = touched[r.IntN(len(touched))]
				}
				ok, err := check(cg, key)
				mu.Lock()
				rep.LookupsDuringCompct++
				if err != nil {
					rep.FailedDuringCompact++
					logf("lookup during compaction: %v", err)
				} else if !ok {
					rep.WrongDuringCompact++
				}
				mu.Unlock()
			}
		}()
	}
	start = time.Now()
	if _, err := c.Compact(ctx, "kv"); err != nil {
		stop.Store(true)
		wg.Wait()
		return nil, err
	}
	rep.CompactS = time.Since(start).Seconds()
	stop.Store(true)
	wg.Wait()
	for _, k := range touched[:verify] {
		if ok, err := check(c, k); err != nil {
			return nil, err
		} else if ok {
			rep.PostCompactCorrect++
		}
	}
	logf("compaction: %.1f s; %d lookups by 2 clients meanwhile, %d failed, %d wrong; after it %d/%d updated keys right",
		rep.CompactS, rep.LookupsDuringCompct, rep.FailedDuringCompact, rep.WrongDuringCompact, rep.PostCompactCorrect, verify)

	if opt.Many > 0 {
		if err := kvMany(ctx, c, dp.pid, opt, rep, logf); err != nil {
			return nil, err
		}
	}
	if st, err := c.Device().Stats(ctx, &devicepb.StatsRequest{}); err == nil {
		rep.DevicePeakRSS = st.PeakRssBytes
		rep.DevicePeakAnonRSS, rep.DevicePeakFileRSS = st.PeakAnonRssBytes, st.PeakFileRssBytes
	}
	rep.ClientPeakRSS = device.ProcessPeakRSS("self")
	return rep, nil
}

// kvMany loads the values as a PIR database of fixed-size records and
// reads opt.Many random records one Get at a time, then with one GetMany,
// measuring the device process's CPU time of each.
func kvMany(ctx context.Context, c *client.Client, pid int, opt KVOptions, rep *KVReport, logf func(string, ...any)) error {
	if _, err := c.CreatePIR(ctx, "vals", opt.ValueSize, client.PIROptions{LWEParams: opt.LWEParams, InsecureParams: insecureParams(opt.LWEParams)}); err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 1<<20)
		for i := range opt.Records {
			w.Write(kvValue(opt.Seed, i, 0, opt.ValueSize))
		}
		w.Flush()
		pw.Close()
	}()
	if _, err := c.Load(ctx, "vals", pr, client.LoadOptions{Records: dataset.FixedSize}); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 64))
	idx := make([]int, opt.Many)
	for k := range idx {
		idx[k] = rng.IntN(opt.Records)
	}
	if _, err := c.Get(ctx, "vals", idx[0]); err != nil { // session set up
		return err
	}
	rep.Many, rep.ManyCorrect = opt.Many, true
	cpu0, _ := procCPU(pid)
	t := time.Now()
	for _, i := range idx {
		r, err := c.Get(ctx, "vals", i)
		if err != nil {
			return err
		}
		rep.ManyCorrect = rep.ManyCorrect && bytes.Equal(r, kvValue(opt.Seed, i, 0, opt.ValueSize))
	}
	rep.GetsWallS = time.Since(t).Seconds()
	cpu1, _ := procCPU(pid)
	t = time.Now()
	recs, err := c.GetMany(ctx, "vals", idx)
	if err != nil {
		return err
	}
	rep.GetManyWallS = time.Since(t).Seconds()
	cpu2, ok := procCPU(pid)
	for k, i := range idx {
		rep.ManyCorrect = rep.ManyCorrect && bytes.Equal(recs[k], kvValue(opt.Seed, i, 0, opt.ValueSize))
	}
	if ok {
		rep.GetsDeviceCPUS, rep.GetManyDeviceCPUS = cpu1-cpu0, cpu2-cpu1
	}
	logf("%d Gets: %.1f s wall, %.1f s device CPU; GetMany of %d: %.1f s wall, %.1f s device CPU; records right: %v",
		opt.Many, rep.GetsWallS, rep.GetsDeviceCPUS, opt.Many, rep.GetManyWallS, rep.GetManyDeviceCPUS, rep.ManyCorrect)
	return nil
}

// procCPU is the CPU seconds (user and system) process pid has used, from
// /proc (Linux; false elsewhere or for pid 0).
func procCPU(pid int) (float64, bool) {
	if pid <= 0 {
		return 0, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// Fields after the command name (which may hold spaces), from 3 on.
	s := string(b)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return 0, false
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	const ticks = 100 // USER_HZ on Linux
	return (ut + st) / ticks, true
}

// procFaults is the page faults process pid has taken, minor (a page
// mapped from the page cache) and major (a page read from the disk),
// from /proc (Linux; false elsewhere or for pid 0).
func procFaults(pid int) (minor, major int64, ok bool) {
	if pid <= 0 {
		return 0, 0, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	s := string(b)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return 0, 0, false
	}
	// Fields from 3 on: minflt is field 10, majflt field 12.
	f := strings.Fields(s[end+1:])
	if len(f) < 10 {
		return 0, 0, false
	}
	mi, err1 := strconv.ParseInt(f[7], 10, 64)
	ma, err2 := strconv.ParseInt(f[9], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return mi, ma, true
}

// insecureParams reports whether the benchmark was asked for a parameter
// set marked insecure (--lwe-params test): asking is the explicit request
// the client library wants for it.
func insecureParams(name string) bool {
	p, err := lwepir.ByName(name)
	return err == nil && p.Insecure
}
