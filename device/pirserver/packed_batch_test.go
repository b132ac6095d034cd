package pirserver

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// batchRequest is one packed request of the queries of cols, each with its
// own client state.
func (db *packedDB) batchRequest(t *testing.T, cols []int) (*devicepb.LWEQueryRequest, []*lwepir.Client, []*lwepir.State) {
	t.Helper()
	var (
		req *devicepb.LWEQueryRequest
		cls []*lwepir.Client
		sts []*lwepir.State
	)
	for i, col := range cols {
		r, cl, st := db.request(t, col)
		if i == 0 {
			req = r
		} else {
			req.More = append(req.More, &devicepb.LWEPackedQuery{Query: r.Query, PackingKeys: r.PackingKeys})
		}
		cls, sts = append(cls, cl), append(sts, st)
	}
	return req, cls, sts
}

// A packed request of several queries is answered with one answer a
// query, in order, each decoding to its own column; the scan answered them
// in one pass (the scan's batch is the request's queries).
func TestQueryPackedBatch(t *testing.T) {
	db := newPackedDB(t, objname.LWEPackerLimbs)
	for _, cols := range [][]int{{0, 5}, {7, 7, 1, db.shape.Cols - 1, 2}} {
		req, cls, sts := db.batchRequest(t, cols)
		resp, err := db.srv.Query(context.Background(), "alice", req)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetMorePacked()) != len(cols)-1 {
			t.Fatalf("%d answers to %d queries", 1+len(resp.GetMorePacked()), len(cols))
		}
		for i, col := range cols {
			raw := resp.GetPacked()
			if i > 0 {
				raw = resp.GetMorePacked()[i-1]
			}
			ans, err := lwepir.UnmarshalPackedAnswer(db.p, db.shape, raw)
			if err != nil {
				t.Fatal(err)
			}
			got, err := cls[i].DecodePacked(sts[i], ans)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, db.column(col)) {
				t.Fatalf("query %d (column %d) differs", i, col)
			}
		}
		var scan *devicepb.CoreUse
		for _, c := range resp.GetCores() {
			if c.GetStage() == "scan" {
				scan = c
			}
		}
		if scan == nil || scan.GetBatch() != uint64(len(cols)) {
			t.Fatalf("the scan's cores %v: want one pass of %d queries", scan, len(cols))
		}
	}
}

// A request of more queries than api.MaxPackedBatch, more queries in the
// ring mode, and a malformed further query are refused as invalid, with
// nothing answered.
func TestQueryPackedBatchRefusesMalformed(t *testing.T) {
	db := newPackedDB(t, objname.LWEPackerLimbs)
	ctx := context.Background()
	req, _, _ := db.batchRequest(t, []int{1, 2})
	for name, edit := range map[string]func(r *devicepb.LWEQueryRequest){
		"too many": func(r *devicepb.LWEQueryRequest) {
			for len(r.More) < api.MaxPackedBatch {
				r.More = append(r.More, r.More[0])
			}
		},
		"more in the ring mode": func(r *devicepb.LWEQueryRequest) {
			r.PackingKeys, r.Keys, r.Secret = nil, "db/members/a/keys/k/lwe-ab/", []byte{1}
		},
		"short further keys": func(r *devicepb.LWEQueryRequest) {
			r.More[0] = &devicepb.LWEPackedQuery{Query: r.More[0].Query, PackingKeys: r.More[0].PackingKeys[1:]}
		},
		"further keys of ones": func(r *devicepb.LWEQueryRequest) {
			r.More[0] = &devicepb.LWEPackedQuery{Query: r.More[0].Query, PackingKeys: bytes.Repeat([]byte{0xff}, len(r.More[0].PackingKeys))}
		},
		"long further query": func(r *devicepb.LWEQueryRequest) {
			r.More[0] = &devicepb.LWEPackedQuery{Query: append(bytes.Clone(r.More[0].Query), 0, 0, 0, 0), PackingKeys: r.More[0].PackingKeys}
		},
		"empty further query": func(r *devicepb.LWEQueryRequest) { r.More[0] = &devicepb.LWEPackedQuery{} },
	} {
		r := &devicepb.LWEQueryRequest{Params: req.Params, Rows: req.Rows, Cols: req.Cols, RecordSize: req.RecordSize,
			Generation: req.Generation, Query: req.Query, PackingKeys: req.PackingKeys, More: append([]*devicepb.LWEPackedQuery(nil), req.More...)}
		edit(r)
		if resp, err := db.srv.Query(ctx, "alice", r); !errors.Is(err, api.ErrInvalid) || resp != nil {
			t.Errorf("%s: %v, want ErrInvalid and no answer", name, err)
		}
	}
	// The device keeps serving: the unedited request is answered.
	if _, err := db.srv.Query(ctx, "alice", req); err != nil {
		t.Fatal(err)
	}
}

// One caller's concurrent packed requests, more than its run slot and its
// waiting runs (1 + 4) hold, are all answered, none refused busy: while the
// first one's Prepare is held, the other eleven wait in the prepare batcher
// (not for a run slot each, where seven were refused) and share the next
// Prepare.
func TestQueryPackedOneCallerConcurrent(t *testing.T) {
	db := newPackedDB(t, objname.LWEPackerLimbs)
	const n = 12
	type result struct {
		col  int
		cl   *lwepir.Client
		st   *lwepir.State
		resp *devicepb.LWEQueryResponse
		err  error
	}
	res := make([]result, n)
	reqs := make([]*devicepb.LWEQueryRequest, n)
	for i := range res {
		res[i].col = (5 * i) % db.shape.Cols
		reqs[i], res[i].cl, res[i].st = db.request(t, res[i].col)
	}
	b := db.srv.preps.get(generationKey(db.gen, db.p, db.shape))
	release := make(chan struct{})
	var once sync.Once
	b.hold = func() { once.Do(func() { <-release }) }
	done := make(chan int, n)
	query := func(i int) {
		res[i].resp, res[i].err = db.srv.Query(context.Background(), "alice", reqs[i])
		done <- i
	}
	go query(0)
	// The rest start once the first holds its Prepare.
	waitBatcher := func(cond func() bool) {
		untilQueue(&b.waitQueue, cond, func() {
			select {
			case i := <-done:
				t.Fatalf("request %d returned while the first Prepare was held: %v", i, res[i].err)
			case <-time.After(time.Millisecond):
			}
		})
	}
	waitBatcher(func() bool { return b.running && len(b.pending) == 0 })
	for i := 1; i < n; i++ {
		go query(i)
	}
	waitBatcher(func() bool { return queued(b.pending) == n-1 })
	close(release)
	for range n {
		<-done
	}
	for i, r := range res {
		if r.err != nil {
			t.Fatalf("request %d of one caller's %d at once: %v", i, n, r.err)
		}
		ans, err := lwepir.UnmarshalPackedAnswer(db.p, db.shape, r.resp.GetPacked())
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.cl.DecodePacked(r.st, ans)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, db.column(r.col)) {
			t.Fatalf("request %d (column %d) differs", i, r.col)
		}
		want := uint64(n - 1)
		if i == 0 {
			want = 1
		}
		for _, c := range r.resp.GetCores() {
			if c.GetStage() == "pack" && c.GetBatch() != want {
				t.Fatalf("request %d: its Prepare took %d queries, want %d", i, c.GetBatch(), want)
			}
		}
	}
}
