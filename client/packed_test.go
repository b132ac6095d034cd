package client

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/objname"
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

// TestPackedIsTheDefault: a database created with no mode stores its
// generation for the packed mode only (the packer, no hint diagonals) and
// says so in its manifest; a client set to the ring mode still reads it,
// packed, since the generation decides. A database created LWERing stores
// the diagonals only and is read with the ring stage by a client set to
// packed. A ring query sent to the packed-only generation (another
// generation's request, the same shape) is refused NotFound, and the
// device keeps answering.
func TestPackedIsTheDefault(t *testing.T) {
	e := newAdvEnv(t) // the client is set to LWERing
	ctx := context.Background()
	if _, err := e.c.CreatePIR(ctx, "packed", advSize, PIROptions{LWEParams: "test", InsecureParams: true}); err != nil {
		t.Fatal(err)
	}
	data := advRecords(advN, advSize)
	in, err := e.c.Load(ctx, "packed", bytes.NewReader(data), LoadOptions{Records: dataset.FixedSize})
	if err != nil {
		t.Fatal(err)
	}
	if m := in.pir(); !m.Packed || !m.NoRing || m.Mode() != LWEPacked {
		t.Fatalf("default manifest: packed %v, no ring %v", m.Packed, m.NoRing)
	}
	count := func(prefix string) int {
		l, err := e.dev.List(ctx, &devicepb.ListRequest{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		return len(l.Objects)
	}
	if n := count(objname.LWEDiagonals(genPrefix(in))); n != 0 {
		t.Fatalf("%d diagonal objects stored for a packed generation", n)
	}
	if count(objname.LWEPacker(genPrefix(in))) == 0 {
		t.Fatal("no packer stored for a packed generation")
	}
	var packed, ring int
	e.liar.onRun(func(resp *devicepb.LWEQueryResponse) (*devicepb.LWEQueryResponse, error) {
		if len(resp.GetPacked()) > 0 {
			packed++
		}
		if len(resp.GetHint()) > 0 {
			ring++
		}
		return resp, nil
	})
	for _, i := range []int{0, advN - 1} {
		wantRecord(t, e.c, "packed", data, i)
	}
	if packed != 2 || ring != 0 {
		t.Fatalf("a ring-mode client's gets of a packed generation: %d packed, %d ring answers", packed, ring)
	}
	packedReq := e.liar.last.Load()

	e.c.SetLWEMode(LWEPacked)
	if _, err := e.c.CreatePIR(ctx, "ring", advSize, PIROptions{LWEParams: "test", InsecureParams: true, LWEMode: LWERing}); err != nil {
		t.Fatal(err)
	}
	rin, err := e.c.Load(ctx, "ring", bytes.NewReader(data), LoadOptions{Records: dataset.FixedSize})
	if err != nil {
		t.Fatal(err)
	}
	if m := rin.pir(); m.Packed || m.NoRing || m.Mode() != LWERing {
		t.Fatalf("ring manifest: packed %v, no ring %v", m.Packed, m.NoRing)
	}
	if n := count(objname.LWEPacker(genPrefix(rin))); n != 0 {
		t.Fatalf("%d packer objects stored for a ring generation", n)
	}
	packed, ring = 0, 0
	wantRecord(t, e.c, "ring", data, 3)
	if packed != 0 || ring != 1 {
		t.Fatalf("a packed-mode client's get of a ring generation: %d packed, %d ring answers", packed, ring)
	}
	e.liar.onRun(nil)

	// The ring request, sent to the packed generation.
	req := proto.Clone(e.liar.last.Load()).(*devicepb.LWEQueryRequest)
	if req.GetGeneration() == packedReq.GetGeneration() {
		t.Fatal("the ring request names the packed generation already")
	}
	req.Generation = packedReq.GetGeneration()
	if _, err := e.dev.QueryLWE(ctx, req); !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("a ring query of a packed-only generation: %v, want ErrNotFound", err)
	}
	if resp, err := e.dev.QueryLWE(ctx, packedReq); err != nil || len(resp.GetPacked()) == 0 {
		t.Fatalf("the device after the refused query: %v", err)
	}
}
