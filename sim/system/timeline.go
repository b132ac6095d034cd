package system

import (
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/rosemary-fhe/rosemary/sim/eventsim"
)

// Interval is one busy period of a resource, in seconds of simulated time.
type Interval struct {
	Start, End float64
}

// Timeline holds, per resource, its busy intervals (overlapping or touching
// bookings merged). For the flash, "nand" is the union over channels.
type Timeline struct {
	Resources map[string][]Interval
}

// timeline records bookings; a nil *timeline records nothing.
type timeline struct {
	res map[string][]span
}

type span struct{ s, e eventsim.Time }

func newTimeline() *timeline { return &timeline{res: map[string][]span{}} }

// add records [s, e) on resource name, merging it into the previous
// interval when they overlap or touch.
func (t *timeline) add(name string, s, e eventsim.Time) {
	if t == nil || e <= s {
		return
	}
	l := t.res[name]
	if n := len(l); n > 0 && s <= l[n-1].e && e >= l[n-1].s {
		l[n-1].s = min(l[n-1].s, s)
		l[n-1].e = max(l[n-1].e, e)
		return
	}
	t.res[name] = append(l, span{s, e})
}

func (t *timeline) export() *Timeline {
	if t == nil {
		return nil
	}
	out := &Timeline{Resources: map[string][]Interval{}}
	for name, l := range t.res {
		iv := make([]Interval, len(l))
		for i, x := range l {
			iv[i] = Interval{Start: x.s.Seconds(), End: x.e.Seconds()}
		}
		sort.Slice(iv, func(i, j int) bool { return iv[i].Start < iv[j].Start })
		out.Resources[name] = iv
	}
	return out
}

// WriteCSV writes the timeline as CSV rows "resource,start_s,end_s",
// resources sorted by name, intervals by start.
func (t *Timeline) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"resource", "start_s", "end_s"}); err != nil {
		return fmt.Errorf("system: timeline: %w", err)
	}
	if t != nil {
		names := make([]string, 0, len(t.Resources))
		for n := range t.Resources {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			for _, iv := range t.Resources[n] {
				rec := []string{n, strconv.FormatFloat(iv.Start, 'g', 12, 64), strconv.FormatFloat(iv.End, 'g', 12, 64)}
				if err := cw.Write(rec); err != nil {
					return fmt.Errorf("system: timeline: %w", err)
				}
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("system: timeline: %w", err)
	}
	return nil
}
