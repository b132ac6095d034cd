package rvcount

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Mark is one marker call: the phase id the program passed, the guest
// thread (vCPU) that made it and that thread's instruction count then.
type Mark struct {
	ID    uint64
	VCPU  int
	Count uint64
}

// Log is the plugin's output for one run.
type Log struct {
	Marks []Mark
	Total uint64 // instructions of every thread
	VCPUs int    // threads seen making system calls
}

// maxLogLines bounds what ParseLog accepts (a run marks a few hundred
// phases at most).
const maxLogLines = 1 << 16

// ParseLog reads the plugin's output: "mark ID VCPU COUNT" lines and one
// final "total COUNT VCPUS" line.
func ParseLog(r io.Reader) (Log, error) {
	var l Log
	sc := bufio.NewScanner(r)
	line, total := 0, false
	for sc.Scan() {
		line++
		if line > maxLogLines {
			return Log{}, fmt.Errorf("rvcount: log longer than %d lines", maxLogLines)
		}
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if total {
			return Log{}, fmt.Errorf("rvcount: line %d after the total", line)
		}
		switch {
		case f[0] == "mark" && len(f) == 4:
			id, e1 := strconv.ParseUint(f[1], 10, 64)
			v, e2 := strconv.ParseUint(f[2], 10, 31)
			c, e3 := strconv.ParseUint(f[3], 10, 64)
			if e1 != nil || e2 != nil || e3 != nil {
				return Log{}, fmt.Errorf("rvcount: line %d: bad mark %q", line, sc.Text())
			}
			l.Marks = append(l.Marks, Mark{ID: id, VCPU: int(v), Count: c})
		case f[0] == "total" && len(f) == 3:
			c, e1 := strconv.ParseUint(f[1], 10, 64)
			v, e2 := strconv.ParseUint(f[2], 10, 31)
			if e1 != nil || e2 != nil {
				return Log{}, fmt.Errorf("rvcount: line %d: bad total %q", line, sc.Text())
			}
			l.Total, l.VCPUs, total = c, int(v), true
		default:
			return Log{}, fmt.Errorf("rvcount: line %d: unknown record %q", line, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		return Log{}, fmt.Errorf("rvcount: %w", err)
	}
	if !total {
		return Log{}, fmt.Errorf("rvcount: log has no total (the program did not exit normally)")
	}
	return l, nil
}

// Phases attributes the instructions between marks: from the first mark 0
// on, each mark's count minus the previous mark's goes to the mark's id
// (summed over repeats, e.g. once per limb). All marks from the opening one
// on must come from one thread, whose counter only grows.
func (l Log) Phases() (map[uint64]uint64, error) {
	start := -1
	for i, m := range l.Marks {
		if m.ID == 0 {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, fmt.Errorf("rvcount: no opening mark 0 in %d marks", len(l.Marks))
	}
	out := map[uint64]uint64{}
	prev := l.Marks[start]
	for _, m := range l.Marks[start+1:] {
		if m.VCPU != prev.VCPU {
			return nil, fmt.Errorf("rvcount: mark %d on thread %d after thread %d: the measured code changed threads", m.ID, m.VCPU, prev.VCPU)
		}
		if m.Count < prev.Count {
			return nil, fmt.Errorf("rvcount: thread %d's count fell from %d to %d", m.VCPU, prev.Count, m.Count)
		}
		if m.ID == 0 {
			return nil, fmt.Errorf("rvcount: a second opening mark")
		}
		out[m.ID] += m.Count - prev.Count
		prev = m
	}
	return out, nil
}
