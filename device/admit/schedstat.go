package admit

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// cpuSample is what this process's threads have spent running on a CPU
// and runnable but waiting for one, since they started.
type cpuSample struct {
	run, wait time.Duration
}

// threadCPU sums the scheduler statistics of this process's threads
// (Linux's /proc/self/task/*/schedstat: nanoseconds on a CPU, nanoseconds
// waiting on a run queue). ok is false where the system does not say;
// Cores then never narrows its grants. Threads that have exited drop out
// of the sum, so a window's difference can be off by a thread's life:
// Go's threads are long-lived, and an error either way only delays a
// decision by a window.
func threadCPU() (cpuSample, bool) {
	dir, err := os.Open("/proc/self/task")
	if err != nil {
		return cpuSample{}, false
	}
	defer dir.Close()
	tids, err := dir.Readdirnames(-1)
	if err != nil {
		return cpuSample{}, false
	}
	var s cpuSample
	buf := make([]byte, 0, 64)
	for _, tid := range tids {
		f, err := os.Open("/proc/self/task/" + tid + "/schedstat")
		if err != nil {
			continue // exited since the listing
		}
		n, _ := f.Read(buf[:cap(buf)])
		f.Close()
		fields := bytes.Fields(buf[:n])
		if len(fields) < 2 {
			return cpuSample{}, false
		}
		run, err1 := strconv.ParseInt(string(fields[0]), 10, 64)
		wait, err2 := strconv.ParseInt(string(fields[1]), 10, 64)
		if err1 != nil || err2 != nil {
			return cpuSample{}, false
		}
		s.run += time.Duration(run)
		s.wait += time.Duration(wait)
	}
	return s, true
}
