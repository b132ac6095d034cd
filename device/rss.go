package device

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// peakRSS returns this process's peak resident set in bytes (VmHWM in
// /proc/self/status), 0 where the system does not say.
func peakRSS() uint64 { return ProcessPeakRSS("self") }

// ProcessPeakRSS returns the peak resident set of process pid ("self" for
// this one) from /proc/<pid>/status, 0 where unknown.
func ProcessPeakRSS(pid string) uint64 {
	f, err := os.Open("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
