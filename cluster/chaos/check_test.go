package chaos

import (
	"strings"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/cluster"
)

// The checker's verdicts on made-up histories: an answer is accepted only
// when it is a record of the load that published the generation it names,
// the only load answered for that generation, and no newer generation was
// acknowledged before the query began.
func TestCheckHoldsAnswersToAccount(t *testing.T) {
	const records, size = 4, 8
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	newRun := func() *run {
		r := &run{cfg: Config{Seed: 5, Records: records, RecordSize: size}}
		// Load 0 published generation 1 in [0, 1]; load 1 generation 2 in
		// [10, 11]; load 2 (concurrent with 1) failed in [10, 12]; load 3
		// is running since 20.
		for id, w := range []struct {
			start, end float64
			gen        uint64
		}{{0, 1, 1}, {10, 11, 2}, {10, 12, 0}, {20, -1, 0}} {
			a := &attempt{id: id, data: attemptData(5, id, records, size), start: at(w.start), generation: w.gen}
			if w.end >= 0 {
				a.end = at(w.end)
			}
			r.history.attempts = append(r.history.attempts, a)
		}
		return r
	}
	rec := func(r *run, load, i int) []byte { return r.history.attempts[load].data[i*size : (i+1)*size] }
	for _, c := range []struct {
		name       string
		answers    []func(r *run) (int, *cluster.Answer, float64, float64)
		anomaly    string // "": none
		acceptedOK int    // answers accepted
	}{
		{name: "each generation from its load", answers: []func(r *run) (int, *cluster.Answer, float64, float64){
			func(r *run) (int, *cluster.Answer, float64, float64) {
				return 1, &cluster.Answer{Generation: 1, Record: rec(r, 0, 1)}, 2, 3
			},
			func(r *run) (int, *cluster.Answer, float64, float64) {
				return 2, &cluster.Answer{Generation: 2, Record: rec(r, 1, 2)}, 11.5, 12
			},
			// Generation 1 answered by a query that began before generation
			// 2 was acknowledged: published during the query.
			func(r *run) (int, *cluster.Answer, float64, float64) {
				return 3, &cluster.Answer{Generation: 1, Record: rec(r, 0, 3)}, 10.5, 11.5
			},
		}, acceptedOK: 3},
		{name: "a record no load wrote", answers: []func(r *run) (int, *cluster.Answer, float64, float64){
			func(r *run) (int, *cluster.Answer, float64, float64) {
				return 0, &cluster.Answer{Generation: 1, Record: make([]byte, size)}, 2, 3
			},
		}, anomaly: "no load wrote"},
		{name: "a record of another record index", answers: []func(r *run) (int, *cluster.Answer, float64, float64){
			func(r *run) (int, *cluster.Answer, float64, float64) {
				return 0, &cluster.Answer{Generation: 1, Record: rec(r, 0, 1)}, 2, 3
			},
		}, anomaly: "no load wrote"},
		{name: "the wrong generation's record", answers: []func(r *run) (int, *cluster.Answer, float64, float64){
			func(r *run) (int, *cluster.Answer, float64, float64) {
				return 1, &cluster.Answer{Generation: 2, Record: rec(r, 0, 1)}, 12, 13
			},
		}, anomaly: "which published generation 1"},
		{name: "a generation mixing two loads", answers: []func(r *run) (int, *cluster.Answer, float64, float64){
			func(r *run) (int, *cluster.Answer, float64, float64) {
				return 1, &cluster.Answer{Generation: 3, Record: rec(r, 2, 1)}, 13, 14
			},
			func(r *run) (int, *cluster.Answer, float64, float64) {
				return 2, &cluster.Answer{Generation: 3, Record: rec(r, 3, 2)}, 21, 22
			},
		}, anomaly: "mixes loads 2 and 3", acceptedOK: 1},
		{name: "a stale generation", answers: []func(r *run) (int, *cluster.Answer, float64, float64){
			func(r *run) (int, *cluster.Answer, float64, float64) {
				return 1, &cluster.Answer{Generation: 1, Record: rec(r, 0, 1)}, 11.5, 12
			},
		}, anomaly: "after generation 2 was acknowledged"},
		{name: "a record before its load began", answers: []func(r *run) (int, *cluster.Answer, float64, float64){
			func(r *run) (int, *cluster.Answer, float64, float64) {
				return 1, &cluster.Answer{Generation: 4, Record: rec(r, 3, 1)}, 15, 16
			},
		}, anomaly: "before that load began"},
	} {
		r := newRun()
		for _, a := range c.answers {
			i, ans, s, e := a(r)
			r.check(i, ans, at(s), at(e))
		}
		got := strings.Join(r.rep.Anomalies, "; ")
		switch {
		case c.anomaly == "" && got != "":
			t.Errorf("%s: anomalies %q, want none", c.name, got)
		case c.anomaly != "" && !strings.Contains(got, c.anomaly):
			t.Errorf("%s: anomalies %q, want one saying %q", c.name, got, c.anomaly)
		}
		if r.rep.Queries != c.acceptedOK {
			t.Errorf("%s: %d answers accepted, want %d", c.name, r.rep.Queries, c.acceptedOK)
		}
	}
}
