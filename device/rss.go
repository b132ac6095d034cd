package device

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// peakRSS returns this process's peak resident set in bytes (VmHWM in
// /proc/self/status), 0 where the system does not say.
func peakRSS() uint64 { return ProcessPeakRSS("self") }

// ProcessPeakRSS returns the peak resident set of process pid ("self" for
// this one) from /proc/<pid>/status, 0 where unknown.
func ProcessPeakRSS(pid string) uint64 { return procStatus(pid)["VmHWM"] }

// ProcessRSS returns the resident set of process pid split as the kernel
// counts it: anon (its own memory: heap, stacks) and file (mapped files:
// for a device, the store pages its scans read in place, which are page
// cache shared with every reader of the files; shared memory counts here
// too). 0 where unknown. It reads /proc/<pid>/statm, one line of page
// counts, where /proc/<pid>/status is fifty lines the kernel formats: the
// device samples it every rssSampleEvery while jobs run.
func ProcessRSS(pid string) (anon, file uint64) {
	b, err := os.ReadFile("/proc/" + pid + "/statm")
	if err != nil {
		return 0, 0
	}
	// size resident shared text lib data dt, in pages.
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return 0, 0
	}
	resident, err1 := strconv.ParseUint(f[1], 10, 64)
	shared, err2 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil || shared > resident {
		return 0, 0
	}
	pg := uint64(os.Getpagesize())
	return (resident - shared) * pg, shared * pg
}

// procStatus reads the "kB" fields of /proc/<pid>/status, in bytes.
func procStatus(pid string) map[string]uint64 {
	out := map[string]uint64{}
	f, err := os.Open("/proc/" + pid + "/status")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		v, ok := strings.CutSuffix(strings.TrimSpace(rest), " kB")
		if !ok {
			continue
		}
		if kb, err := strconv.ParseUint(v, 10, 64); err == nil {
			out[key] = kb << 10
		}
	}
	return out
}

// rssSampleEvery is how often rssPeaks samples while jobs run.
const rssSampleEvery = 20 * time.Millisecond

// rssPeaks keeps the largest RssAnon and RssFile seen while jobs ran:
// the kernel keeps only the peak of their sum (VmHWM), which a scan over
// mapped store pages fills with page cache.
type rssPeaks struct {
	mu     sync.Mutex
	active int
	stop   chan struct{}
	anon   atomic.Uint64
	file   atomic.Uint64
}

// begin marks a job's start; the first starts the sampler.
func (r *rssPeaks) begin() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.active++; r.active == 1 {
		r.stop = make(chan struct{})
		go r.sample(r.stop)
	}
}

// end marks a job's end; the last stops the sampler (after a last sample).
func (r *rssPeaks) end() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.active--; r.active == 0 {
		close(r.stop)
	}
}

func (r *rssPeaks) sample(stop <-chan struct{}) {
	t := time.NewTicker(rssSampleEvery)
	defer t.Stop()
	for {
		anon, file := ProcessRSS("self")
		maxTo(&r.anon, anon)
		maxTo(&r.file, file)
		select {
		case <-stop:
			anon, file := ProcessRSS("self")
			maxTo(&r.anon, anon)
			maxTo(&r.file, file)
			return
		case <-t.C:
		}
	}
}

func maxTo(a *atomic.Uint64, v uint64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}
