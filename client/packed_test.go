package client

import (
	"context"
	"errors"
	"os"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// TestPackedModeRecordsAndTampering: a client in the packed mode reads
// the loaded records back with no Galois key and no ring secret stored,
// one QueryLWE a record carrying packing keys; an answer the device
// altered (every row's byte shifted, the answer re-encoded at its exact
// size) is detected by the record's seal — ErrTampered, the generation not
// queried again — never returned as a record; a truncated answer too.
func TestPackedModeRecordsAndTampering(t *testing.T) {
	e := newAdvEnv(t)
	e.c.SetLWEMode(LWEPacked)
	ctx := context.Background()
	data := e.loadPIR(t, "acct")
	in, err := e.c.Info(ctx, "acct")
	if err != nil {
		t.Fatal(err)
	}
	if !in.pir().Packed {
		t.Fatal("the manifest does not say the generation stores its packer")
	}
	var packedQueries int
	e.liar.onRun(func(resp *devicepb.LWEQueryResponse) (*devicepb.LWEQueryResponse, error) {
		if len(resp.GetPacked()) > 0 && len(resp.GetColumn()) == 0 && len(resp.GetHint()) == 0 {
			packedQueries++
		}
		return resp, nil
	})
	for _, i := range []int{0, 1, advN / 2, advN - 1} {
		wantRecord(t, e.c, "acct", data, i)
	}
	if packedQueries != 4 {
		t.Fatalf("%d packed answers for 4 gets", packedQueries)
	}
	if _, err := os.Stat(e.keys.ringPath(in, ".key")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a ring secret in the packed mode: %v", err)
	}
	if l, err := e.dev.List(ctx, &devicepb.ListRequest{Prefix: "acct/members/"}); err != nil || len(l.Objects) != 0 {
		t.Fatalf("objects stored for the client's keys in the packed mode: %v, %v", l, err)
	}

	p := lwepir.Test()
	shape := lwepir.Shape{Rows: in.pir().Rows, Cols: in.pir().Cols, RecordSize: in.StoredRecordSize()}
	pp := p.Pack()
	e.liar.onRun(func(resp *devicepb.LWEQueryResponse) (*devicepb.LWEQueryResponse, error) {
		a, err := lwepir.UnmarshalPackedAnswer(p, shape, resp.GetPacked())
		if err != nil {
			return nil, err
		}
		mask := uint32(1)<<pp.LogQB - 1
		for _, b := range a.B {
			for c := range b {
				b[c] = (b[c] + 1<<(pp.LogQB-8)) & mask
			}
		}
		out := proto.Clone(resp).(*devicepb.LWEQueryResponse)
		if out.Packed, err = lwepir.MarshalPackedAnswer(p, shape, a); err != nil {
			return nil, err
		}
		return out, nil
	})
	runs := e.liar.runs.Load()
	if got, err := e.c.Get(ctx, "acct", 5); !errors.Is(err, ErrTampered) {
		t.Fatalf("a shifted packed answer: %q, %v; want ErrTampered", got, err)
	}
	e.liar.onRun(nil)
	if _, err := e.c.Get(ctx, "acct", 5); !errors.Is(err, ErrTampered) {
		t.Fatalf("after the failure: %v, want ErrTampered", err)
	}
	if n := e.liar.runs.Load(); n != runs+1 {
		t.Fatalf("%d queries reached the device after the failure", n-runs-1)
	}

	// A truncated answer: malformed, fatal too (a second database).
	data2 := e.loadPIR(t, "acct2")
	wantRecord(t, e.c, "acct2", data2, 3)
	e.liar.onRun(func(resp *devicepb.LWEQueryResponse) (*devicepb.LWEQueryResponse, error) {
		out := proto.Clone(resp).(*devicepb.LWEQueryResponse)
		out.Packed = out.Packed[:len(out.Packed)-1]
		return out, nil
	})
	if _, err := e.c.Get(ctx, "acct2", 3); !errors.Is(err, ErrTampered) {
		t.Fatalf("a truncated packed answer: %v, want ErrTampered", err)
	}
}
