package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/kv"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/certs"
)

// KVLargeOptions configure `rosemary bench kv --long-tail`: a generated
// keyword set of issue 40's shape (values of 0.1 KB to MaxValue with a
// long tail) loaded into one keyword database per layout on a device
// process, then looked up from fresh processes (`rosemary db lookup`,
// Exe) and with LookupMany, every answer checked.
type KVLargeOptions struct {
	Records  int
	MaxValue int
	Layouts  []string // client.KVLayoutKind names, in order
	// Fresh: lookups from a fresh process each, per layout (FreshOld for
	// the cuckoo layout, which takes seconds a lookup); Many: the keys of
	// one LookupMany (ManyOld for the cuckoo layout; 0 skips it).
	Fresh, FreshOld, Many, ManyOld int
	// Warm: in-process lookups of the largest value (WarmOld: cuckoo).
	Warm, WarmOld int
	HeapRows      int
	LWEParams     string
	Seed          uint64
	Dir           string
	Device        []string // command starting a device daemon
	Exe           string   // the rosemary binary, for fresh lookups
	Plaintext     bool
	Log           func(format string, args ...any)
	Progress      func(stage string, done, total int64)
}

// KVLargeLayout is one layout's figures.
type KVLargeLayout struct {
	Layout           string  `json:"layout"`
	LoadS            float64 `json:"load_s"`
	StoredBytes      int64   `json:"stored_bytes"`
	StoredOverData   float64 `json:"stored_over_data"`
	QueriesPerLookup int     `json:"queries_per_lookup"`
	// Fresh-process lookups (`rosemary db lookup --json`): each one's wall
	// time, the keys asked (kinds: largest, present, absent), how many
	// answers were exact.
	FreshS       []float64 `json:"fresh_s"`
	FreshKinds   []string  `json:"fresh_kinds"`
	FreshMedianS float64   `json:"fresh_median_s"`
	FreshCorrect int       `json:"fresh_correct"`
	// In this process, warm: one lookup of the largest value (the median
	// of Warm), the device's CPU and the payload bytes of one.
	WarmS         float64 `json:"warm_s"`
	DeviceCPUPerS float64 `json:"device_cpu_s_per_lookup"`
	QueryBytes    int64   `json:"query_bytes_per_lookup"`
	AnswerBytes   int64   `json:"answer_bytes_per_lookup"`
	// DeviceBytesIn/Out: the request and reply payloads the device
	// counted (Stats' WireBytesIn/Out) a warm lookup. QueryBytes and
	// AnswerBytes are the client's count on the connection during each
	// call, which overlapping calls inflate.
	DeviceBytesIn    int64   `json:"device_bytes_in_per_lookup"`
	DeviceBytesOut   int64   `json:"device_bytes_out_per_lookup"`
	ManyKeys         int     `json:"many_keys"`
	ManyS            float64 `json:"many_s"`
	ManyOverFresh    float64 `json:"many_over_fresh_median"`
	ManyOverWarm     float64 `json:"many_over_warm"`
	ManyCorrect      int     `json:"many_correct"`
	LoadAvgAtLookups string  `json:"loadavg_at_lookups"`
}

// KVLargeReport is what `rosemary bench kv --long-tail --json` prints.
type KVLargeReport struct {
	Transport  string          `json:"transport"`
	Records    int             `json:"records"`
	DataBytes  int64           `json:"data_bytes"`
	ValueMin   int             `json:"value_min"`
	ValueMed   int             `json:"value_median"`
	ValueP99   int             `json:"value_p99"`
	ValueMax   int             `json:"value_max"`
	MaxValue   int             `json:"max_value"`
	Layouts    []KVLargeLayout `json:"layouts"`
	LoadAvg    string          `json:"loadavg_at_start"`
	Provenance string          `json:"provenance"`
}

// longTailLen is value i's length: log-normal about a median of 680 bytes
// (σ = 0.4: 99% under about 2 KB) from 100 bytes, 0.8% of 2–20 KB and
// 0.15% of 20 KB up to max, log-uniform; value 0 is max long.
func longTailLen(rng *rand.Rand, i, maxValue int) int {
	if i == 0 {
		return maxValue
	}
	logU := func(lo, hi float64) int {
		return int(math.Exp(math.Log(lo) + rng.Float64()*(math.Log(hi)-math.Log(lo))))
	}
	switch u := rng.Float64(); {
	case u < 0.0015:
		return min(maxValue, logU(20000, float64(maxValue)))
	case u < 0.0095:
		return min(maxValue, logU(2000, 20000))
	}
	return min(maxValue, max(100, int(680*math.Exp(0.4*rng.NormFloat64()))))
}

// longTailValue is value i: printable bytes of a seeded stream (no commas,
// quotes or newlines: a CSV field as it is).
func longTailValue(seed uint64, i, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, uint64(i)+1<<40))
	v := make([]byte, n)
	for j := range v {
		v[j] = 'a' + byte(rng.IntN(26))
	}
	return v
}

// RunKVLarge runs the benchmark.
func RunKVLarge(ctx context.Context, opt KVLargeOptions) (*KVLargeReport, error) {
	logf, progress := orQuiet(opt.Log, opt.Progress)
	if opt.Records < 2 || opt.MaxValue < 1 || len(opt.Layouts) == 0 || opt.Exe == "" {
		return nil, errors.New("bench kv --long-tail: records ≥ 2, a maximum value, layouts and the rosemary binary are needed")
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, err
	}
	rep := &KVLargeReport{Records: opt.Records, MaxValue: opt.MaxValue, LoadAvg: loadAvg(), Provenance: "measured here"}
	rng := rand.New(rand.NewPCG(opt.Seed, 40))
	lens := make([]int, opt.Records)
	for i := range lens {
		lens[i] = longTailLen(rng, i, opt.MaxValue)
		rep.DataBytes += int64(lens[i])
	}
	sorted := slices.Clone(lens)
	sort.Ints(sorted)
	rep.ValueMin, rep.ValueMed, rep.ValueP99, rep.ValueMax = sorted[0], sorted[len(sorted)/2], sorted[len(sorted)*99/100], sorted[len(sorted)-1]
	csvPath := filepath.Join(opt.Dir, "kv.csv")
	logf("generating %d keys, %d B of values (min %d, median %d, p99 %d, max %d) in %s", opt.Records, rep.DataBytes, rep.ValueMin, rep.ValueMed, rep.ValueP99, rep.ValueMax, csvPath)
	if err := writeBuffered(csvPath, func(w io.Writer) error {
		for i := range opt.Records {
			if _, err := fmt.Fprintf(w, "%s,%s\n", kvKey(i), longTailValue(opt.Seed, i, lens[i])); err != nil {
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
	c, err := client.Open(ctx, dp.addr, keys, dp.dial...)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	certsDir := filepath.Join(opt.Dir, "certs")
	want := func(i int) []byte { return longTailValue(opt.Seed, i, lens[i]) }
	for _, layout := range opt.Layouts {
		lr := KVLargeLayout{Layout: layout}
		name := "kv-" + layout
		kopt := client.KVOptions{MaxValue: opt.MaxValue, LWEParams: opt.LWEParams, InsecureParams: insecureParams(opt.LWEParams), Layout: client.KVLayoutKind(layout), HeapRows: opt.HeapRows}
		if _, err := c.CreateKV(ctx, name, kopt); err != nil {
			return nil, err
		}
		f, err := os.Open(csvPath)
		if err != nil {
			return nil, err
		}
		fi, _ := f.Stat()
		start := time.Now()
		in, err := c.Load(ctx, name, bufio.NewReaderSize(f, 1<<20), client.LoadOptions{KV: kv.CSV, Progress: func(done int64) { progress("load "+name, done, fi.Size()) }})
		f.Close()
		if err != nil {
			return nil, err
		}
		lr.LoadS, lr.StoredBytes = time.Since(start).Seconds(), in.Bytes
		lr.StoredOverData = float64(in.Bytes) / float64(rep.DataBytes)
		logf("%s: loaded %d keys in %.1f s, %d B stored (%.2f× the data)", layout, in.KV.Entries, lr.LoadS, in.Bytes, lr.StoredOverData)
		lr.LoadAvgAtLookups = loadAvg()

		// Fresh processes: the largest value, then present and absent keys.
		fresh := opt.Fresh
		if layout == string(client.KVCuckoo) {
			fresh = opt.FreshOld
		}
		for j := range fresh {
			i, kind := 0, "largest"
			switch {
			case j == 0:
			case j%3 == 2:
				i, kind = -1-j, "absent"
			default:
				i, kind = 1+rng.IntN(opt.Records-1), "present"
			}
			key := kvKey(i)
			if i < 0 {
				key = fmt.Sprintf("absent-%d", j)
			}
			s, v, found, err := freshLookup(ctx, opt.Exe, dp.addr, certsDir, opt.Plaintext, filepath.Join(opt.Dir, "keys"), name, key)
			if err != nil {
				return nil, fmt.Errorf("%s: fresh lookup of %s: %w", layout, key, err)
			}
			ok := (i < 0 && !found) || (i >= 0 && found && bytes.Equal(v, want(i)))
			if ok {
				lr.FreshCorrect++
			}
			lr.FreshS, lr.FreshKinds = append(lr.FreshS, s), append(lr.FreshKinds, kind)
			logf("%s: fresh lookup %d (%s, %d B): %.3f s, right %v", layout, j, kind, len(v), s, ok)
		}
		lr.FreshMedianS = median(lr.FreshS)

		// Warm, in this process: lookups of the largest value (the median),
		// with the device's CPU.
		nwarm := opt.Warm
		if layout == string(client.KVCuckoo) {
			nwarm = opt.WarmOld
		}
		var warm []float64
		wire := func() (int64, int64) {
			st, err := c.Device().Stats(ctx, &devicepb.StatsRequest{})
			if err != nil {
				return 0, 0
			}
			return int64(st.WireBytesIn), int64(st.WireBytesOut)
		}
		in0, out0 := wire()
		cpu0, _ := procCPU(dp.pid)
		for range nwarm {
			t := time.Now()
			r, err := c.LookupMany(ctx, name, [][]byte{[]byte(kvKey(0))})
			if err != nil {
				return nil, err
			}
			warm = append(warm, time.Since(t).Seconds())
			if !r[0].Found || !bytes.Equal(r[0].Value, want(0)) {
				return nil, fmt.Errorf("%s: warm lookup of the largest value: wrong answer", layout)
			}
			lr.QueryBytes, lr.AnswerBytes, lr.QueriesPerLookup = r[0].QueryBytes, r[0].AnswerBytes, r[0].Queries
		}
		cpu1, _ := procCPU(dp.pid)
		in1, out1 := wire()
		if nwarm > 0 {
			lr.WarmS, lr.DeviceCPUPerS = median(warm), (cpu1-cpu0)/float64(nwarm)
			lr.DeviceBytesIn, lr.DeviceBytesOut = (in1-in0)/int64(nwarm), (out1-out0)/int64(nwarm)
			logf("%s: warm lookup %.3f s (median of %d), device CPU %.2f s a lookup", layout, lr.WarmS, nwarm, lr.DeviceCPUPerS)
		}

		many := opt.Many
		if layout == string(client.KVCuckoo) {
			many = opt.ManyOld
		}
		if many > 0 {
			var ks [][]byte
			var idx []int
			for j := range many {
				i := rng.IntN(opt.Records)
				if j == 0 {
					i = 0
				}
				if j%4 == 3 {
					i = -1
				}
				idx = append(idx, i)
				if i < 0 {
					ks = append(ks, []byte(fmt.Sprintf("absent-many-%d", j)))
				} else {
					ks = append(ks, []byte(kvKey(i)))
				}
			}
			t := time.Now()
			rs, err := c.LookupMany(ctx, name, ks)
			if err != nil {
				return nil, err
			}
			lr.ManyKeys, lr.ManyS = many, time.Since(t).Seconds()
			for j, r := range rs {
				if (idx[j] < 0 && !r.Found) || (idx[j] >= 0 && r.Found && bytes.Equal(r.Value, want(idx[j]))) {
					lr.ManyCorrect++
				}
			}
			if lr.FreshMedianS > 0 {
				lr.ManyOverFresh = lr.ManyS / lr.FreshMedianS
			}
			if lr.WarmS > 0 {
				lr.ManyOverWarm = lr.ManyS / lr.WarmS
			}
			logf("%s: LookupMany of %d keys: %.3f s (%.1f× a warm lookup), %d right", layout, many, lr.ManyS, lr.ManyOverWarm, lr.ManyCorrect)
		}
		rep.Layouts = append(rep.Layouts, lr)
		if _, err := c.Device().Stats(ctx, &devicepb.StatsRequest{}); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// freshLookup runs `rosemary db lookup --json` against the device as a
// process of its own and returns its wall time and answer.
func freshLookup(ctx context.Context, exe, addr, certsDir string, plaintext bool, keys, name, key string) (float64, []byte, bool, error) {
	args := []string{"db", "lookup", "--device", addr, "--keys", keys, "--name", name, "--kv-key", key, "--json"}
	if plaintext {
		args = append(args, "--insecure-plaintext")
	} else {
		u := certs.InDir(certsDir, benchUser)
		args = append(args, "--cert", u.Cert, "--key", u.Key, "--cacert", filepath.Join(certsDir, certs.CAFile))
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t := time.Now()
	err := cmd.Run()
	s := time.Since(t).Seconds()
	var r struct {
		Found bool   `json:"found"`
		Value []byte `json:"value"`
	}
	if jerr := json.Unmarshal(out.Bytes(), &r); jerr != nil {
		if err == nil {
			err = jerr
		}
		return s, nil, false, fmt.Errorf("%w: %s", err, strings.TrimSpace(errb.String()))
	}
	return s, r.Value, r.Found, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// loadAvg is /proc/loadavg's first three fields ("" where there is none).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
