package rvcount

import (
	"reflect"
	"strings"
	"testing"
)

// Phases by hand: mark 0 at 100, phase 3 at 130, phase 4 at 200, phase 3
// again at 260 → 3: 30+60, 4: 70; marks before the opening one are ignored.
func TestPhasesHand(t *testing.T) {
	l, err := ParseLog(strings.NewReader("mark 9 0 50\nmark 0 0 100\nmark 3 0 130\nmark 4 0 200\nmark 3 0 260\ntotal 999 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if l.Total != 999 || l.VCPUs != 2 || len(l.Marks) != 5 {
		t.Fatalf("log %+v", l)
	}
	ph, err := l.Phases()
	if err != nil {
		t.Fatal(err)
	}
	if want := map[uint64]uint64{3: 90, 4: 70}; !reflect.DeepEqual(ph, want) {
		t.Fatalf("phases %v, want %v", ph, want)
	}
}

func TestParseLogRejects(t *testing.T) {
	for name, bad := range map[string]string{
		"no total":         "mark 0 0 1\n",
		"after total":      "total 1 1\nmark 0 0 1\n",
		"bad number":       "mark x 0 1\ntotal 1 1\n",
		"short mark":       "mark 0 0\ntotal 1 1\n",
		"unknown record":   "tick 1\ntotal 1 1\n",
		"negative vcpu":    "mark 0 -1 1\ntotal 1 1\n",
		"overflowing mark": "mark 0 0 18446744073709551616\ntotal 1 1\n",
	} {
		if _, err := ParseLog(strings.NewReader(bad)); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	for name, bad := range map[string]string{
		"no opening":     "mark 1 0 5\ntotal 1 1\n",
		"thread changed": "mark 0 0 5\nmark 1 1 9\ntotal 1 1\n",
		"count fell":     "mark 0 0 5\nmark 1 0 4\ntotal 1 1\n",
		"second opening": "mark 0 0 5\nmark 0 0 6\ntotal 1 1\n",
	} {
		l, err := ParseLog(strings.NewReader(bad))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := l.Phases(); err == nil {
			t.Errorf("%s: phases accepted", name)
		}
	}
}

func FuzzParseLog(f *testing.F) {
	f.Add([]byte("mark 0 0 100\nmark 3 0 130\ntotal 999 2\n"))
	f.Add([]byte("total 0 0\n"))
	f.Add([]byte("mark 255 3 18446744073709551615\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseLog(strings.NewReader(string(b)))
		if err != nil {
			return
		}
		ph, err := l.Phases()
		if err != nil {
			return
		}
		var sum uint64
		for _, v := range ph {
			sum += v
		}
		start := 0
		for i, m := range l.Marks {
			if m.ID == 0 {
				start = i
				break
			}
		}
		if last := l.Marks[len(l.Marks)-1].Count; sum != last-l.Marks[start].Count {
			t.Fatalf("phases sum %d, marks span %d", sum, last-l.Marks[start].Count)
		}
	})
}
