package client_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// heapLiar is an honest device behind a hook on the packed queries of a
// heap (its generation prefix ends in "/heap"), and one that may keep
// what it is told to delete.
type heapLiar struct {
	api.Device
	mu        sync.Mutex
	lie       func(req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error)
	keepAll   bool
	heapCalls int
}

func (d *heapLiar) QueryLWE(ctx context.Context, req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
	d.mu.Lock()
	lie := d.lie
	if strings.HasSuffix(req.GetGeneration(), "/heap") {
		d.heapCalls++
	} else {
		lie = nil
	}
	d.mu.Unlock()
	if lie == nil {
		return d.Device.QueryLWE(ctx, req)
	}
	return lie(req)
}

func (d *heapLiar) Delete(ctx context.Context, req *devicepb.DeleteRequest) (*devicepb.DeleteResponse, error) {
	d.mu.Lock()
	keep := d.keepAll
	d.mu.Unlock()
	if keep {
		return &devicepb.DeleteResponse{}, nil
	}
	return d.Device.Delete(ctx, req)
}

func (d *heapLiar) set(f func(req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error)) {
	d.mu.Lock()
	d.lie = f
	d.mu.Unlock()
}

func heapOf(in *client.Info) string { return strings.TrimSuffix(in.DataPrefix(), "/") + "/heap" }

// A device that answers a heap query with anything but the column asked
// of the current generation — bits flipped, cut short, another query's
// answer, two answers of one request swapped, one left out or one too
// many, the same column of another database or of the generation before —
// is caught by the column's seal: the lookup fails with
// ErrTampered, never returns a wrong value.
func TestKVHeapLyingDeviceCaughtBySeal(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	liar := &heapLiar{Device: e.c.Device()}
	c := client.New(liar, e.keys)
	defer c.Close()
	want, data := heapData(3, 30)
	liar.mu.Lock()
	liar.keepAll = true // generation 1's objects stay on the device
	liar.mu.Unlock()
	old := createHeap(t, c, "h", data)
	in, err := c.Load(ctx, "h", bytes.NewReader(data), client.LoadOptions{KV: "jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	other := createHeap(t, c, "other", data)
	if in.KV.Heap.PIR.Cols != old.KV.Heap.PIR.Cols || other.KV.Heap.PIR.Cols != in.KV.Heap.PIR.Cols {
		t.Fatalf("heaps of %d, %d and %d columns: the redirections below need one shape", old.KV.Heap.PIR.Cols, in.KV.Heap.PIR.Cols, other.KV.Heap.PIR.Cols)
	}
	honest := func(req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
		return liar.Device.QueryLWE(ctx, req)
	}
	redirect := func(gen string) func(req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
		return func(req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
			r := proto.Clone(req).(*devicepb.LWEQueryRequest)
			r.Generation = gen
			return liar.Device.QueryLWE(ctx, r)
		}
	}
	var replayMu sync.Mutex
	var first *devicepb.LWEQueryResponse
	for _, lie := range []struct {
		name string
		f    func(req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error)
	}{
		{"bits flipped", func(req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
			resp, err := honest(req)
			if err == nil {
				resp = proto.Clone(resp).(*devicepb.LWEQueryResponse)
				resp.Packed[len(resp.Packed)/2] ^= 0x5a
			}
			return resp, err
		}},
		{"cut short", func(req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
			resp, err := honest(req)
			if err == nil {
				resp = proto.Clone(resp).(*devicepb.LWEQueryResponse)
				resp.Packed = resp.Packed[:len(resp.Packed)-1]
			}
			return resp, err
		}},
		{"another query's answer", func(req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
			// Every query of the request answered with the first's.
			resp, err := honest(req)
			replayMu.Lock()
			defer replayMu.Unlock()
			if first == nil {
				first = resp
			}
			if err != nil {
				return nil, err
			}
			out := proto.Clone(resp).(*devicepb.LWEQueryResponse)
			out.Packed = first.Packed
			for i := range out.MorePacked {
				out.MorePacked[i] = first.Packed
			}
			return out, nil
		}},
		{"another column (the query's words reversed)", func(req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
			r := proto.Clone(req).(*devicepb.LWEQueryRequest)
			q := r.Query
			for i, j := 0, len(q)-4; i < j; i, j = i+4, j-4 {
				for k := range 4 {
					q[i+k], q[j+k] = q[j+k], q[i+k]
				}
			}
			return liar.Device.QueryLWE(ctx, r)
		}},
		{"two answers of one request swapped", func(req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
			resp, err := honest(req)
			if err == nil && len(resp.MorePacked) > 0 {
				resp = proto.Clone(resp).(*devicepb.LWEQueryResponse)
				resp.Packed, resp.MorePacked[0] = resp.MorePacked[0], resp.Packed
			}
			return resp, err
		}},
		{"an answer left out", func(req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
			resp, err := honest(req)
			if err == nil && len(resp.MorePacked) > 0 {
				resp = proto.Clone(resp).(*devicepb.LWEQueryResponse)
				resp.MorePacked = resp.MorePacked[:len(resp.MorePacked)-1]
			}
			return resp, err
		}},
		{"an answer too many", func(req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
			resp, err := honest(req)
			if err == nil {
				resp = proto.Clone(resp).(*devicepb.LWEQueryResponse)
				resp.MorePacked = append(resp.MorePacked, resp.Packed)
			}
			return resp, err
		}},
		{"another database's column", redirect(heapOf(other))},
		{"the generation before's column", redirect(heapOf(old))},
	} {
		first = nil
		liar.set(lie.f)
		_, err := c.Lookup(ctx, "h", []byte("key-1"))
		if !errors.Is(err, client.ErrTampered) {
			t.Fatalf("%s: %v, want ErrTampered", lie.name, err)
		}
		t.Logf("%s: %v", lie.name, err)
	}
	// Honest again: the same client reads right.
	liar.set(nil)
	v, err := c.Lookup(ctx, "h", []byte("key-1"))
	if err != nil || !bytes.Equal(v, want["key-1"]) {
		t.Fatalf("honest again: %d bytes, %v", len(v), err)
	}
}
