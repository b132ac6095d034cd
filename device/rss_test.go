package device

import (
	"runtime/debug"
	"testing"
	"time"
)

// The sampler sees memory a job holds: a 64 MiB buffer touched while a
// job runs shows in the peak of RssAnon, whatever the page cache does.
func TestRSSPeaksSeeAJobsMemory(t *testing.T) {
	debug.FreeOSMemory() // the baseline holds no garbage a new buffer could reuse
	anon, file := ProcessRSS("self")
	if anon == 0 || file == 0 {
		t.Fatalf("RssAnon %d, RssFile %d: /proc/self/status not read", anon, file)
	}
	var r rssPeaks
	r.begin()
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	want := anon + uint64(len(buf))*9/10
	r.end()
	// The last sample is taken as the sampler stops; wait for it (a bound
	// against a hang, not a timing assertion).
	for deadline := time.Now().Add(10 * time.Second); r.anon.Load() < want && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if got := r.anon.Load(); got < want {
		t.Fatalf("peak RssAnon %d with a 64 MiB buffer held, want ≥ %d", got, want)
	}
	if r.file.Load() == 0 {
		t.Fatal("peak RssFile not sampled")
	}
	buf[len(buf)-1]++ // held until here
}

// ProcessRSS (statm) splits the resident set as /proc/self/status does:
// RssAnon, and RssFile with RssShmem, within what a few pages of this
// test's own allocation between the two reads can move.
func TestProcessRSSMatchesStatus(t *testing.T) {
	for range 3 {
		anon, file := ProcessRSS("self")
		st := procStatus("self")
		near := func(a, b uint64) bool { return a+1<<20 >= b && b+1<<20 >= a }
		if anon == 0 || !near(anon, st["RssAnon"]) || !near(file, st["RssFile"]+st["RssShmem"]) {
			t.Fatalf("statm: anon %d, file %d; status: RssAnon %d, RssFile %d, RssShmem %d",
				anon, file, st["RssAnon"], st["RssFile"], st["RssShmem"])
		}
	}
}

func BenchmarkProcessRSS(b *testing.B) {
	b.Run("statm", func(b *testing.B) {
		for b.Loop() {
			ProcessRSS("self")
		}
	})
	b.Run("status", func(b *testing.B) {
		for b.Loop() {
			st := procStatus("self")
			_, _ = st["RssAnon"], st["RssFile"]
		}
	})
}
