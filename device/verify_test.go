package device

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	pb "github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
)

// rotting serves objects as a source whose data went bad after it was
// read and checksummed (memory, a bus, the network): it flips one bit of
// every Get reply that carries data, leaving the checksum alone.
func rotting(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	if r, ok := req.(*pb.GetRequest); ok && strings.HasPrefix(r.GetName(), objname.ACL("")) {
		return resp, err // the access list comes through intact
	}
	if g, ok := resp.(*pb.GetResponse); ok && err == nil && len(g.Data) > 0 && len(g.Data[0]) > 0 {
		g.Data[0][0] ^= 0x04
	}
	return resp, err
}

// flipStored XORs one byte of the page on disk that holds name's first
// limb (found by its content, which verifyLimbs makes unique).
func flipStored(t *testing.T, d *Device, name string) {
	t.Helper()
	want := make([]byte, 0, 64)
	for _, v := range verifyLimbs(name)[0] {
		want = binary.LittleEndian.AppendUint64(want, v)
	}
	for ch := range d.st.Layout().Channels {
		path := filepath.Join(d.st.Dir(), fmt.Sprintf("ch%02d", ch))
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if i := bytes.Index(b, want); i >= 0 {
			b[i+3] ^= 0x5a
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no page of %s found on disk", name)
}

// verifyLimbs is name's content: two limbs of 8 words, unique to name.
func verifyLimbs(name string) [][]uint64 {
	h := uint64(crc32.ChecksumIEEE([]byte(name))) << 8
	out := [][]uint64{make([]uint64, 8), make([]uint64, 8)}
	for i := range 16 {
		out[i/8][i%8] = h + uint64(i)
	}
	return out
}

func putVerifyObjects(t *testing.T, c *testClient, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := c.Put(context.Background(), mustPut(name, object.Kind(2), 2, 1, verifyLimbs(name), 8)); err != nil {
			t.Fatal(err)
		}
	}
}

// A copy whose data does not match the checksum its source sent is
// refused with the named error and publishes nothing; the same copy from
// a healthy source then succeeds, byte for byte.
func TestCopyFromRefusesObjectFailingChecksum(t *testing.T) {
	ctx := context.Background()
	bad := serveTCP(t, WithServerOptions(grpc.ChainUnaryInterceptor(rotting)))
	good, dst := serveTCP(t), serveTCP(t)
	cbad, cgood, cdst := dialT(t, bad.addr), dialT(t, good.addr), dialT(t, dst.addr)
	putVerifyObjects(t, cbad, "db/a")
	putVerifyObjects(t, cgood, "db/a")

	_, err := cdst.CopyFrom(ctx, &devicepb.CopyFromRequest{Source: bad.addr, Prefix: "db/"})
	if !errors.Is(err, api.ErrChecksum) || code(err) != codes.DataLoss {
		t.Fatalf("copy from a rotting source: %v (code %v), want api.ErrChecksum, DataLoss", err, code(err))
	}
	if _, err := cdst.Get(ctx, &devicepb.GetRequest{Name: "db/a"}); code(err) != codes.NotFound {
		t.Fatalf("the refused object was published: %v", err)
	}
	if n := dst.d.copyCorrupt.Load(); n != 1 {
		t.Fatalf("copy checksum failures counted %d, want 1", n)
	}
	r, err := cdst.CopyFrom(ctx, &devicepb.CopyFromRequest{Source: good.addr, Prefix: "db/"})
	if err != nil || r.Objects != 1 {
		t.Fatalf("copy from the healthy source: %+v, %v", r, err)
	}
	got, err := getObject(ctx, cdst, "db/a")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.Data) != fmt.Sprint(verifyLimbs("db/a")) {
		t.Fatalf("copied %v, want %v", got.Data, verifyLimbs("db/a"))
	}
}

// A corrupt object already at the destination is not taken for a copy
// done: CopyFrom reads it back, finds a page failing its CRC and copies
// it again.
func TestCopyFromReplacesCorruptLocalObject(t *testing.T) {
	ctx := context.Background()
	src, dst := serveTCP(t), serveTCP(t)
	csrc, cdst := dialT(t, src.addr), dialT(t, dst.addr)
	putVerifyObjects(t, csrc, "db/a", "db/b")
	if _, err := cdst.CopyFrom(ctx, &devicepb.CopyFromRequest{Source: src.addr, Prefix: "db/"}); err != nil {
		t.Fatal(err)
	}
	flipStored(t, dst.d, "db/a")
	if _, err := cdst.Get(ctx, &devicepb.GetRequest{Name: "db/a"}); code(err) != codes.DataLoss {
		t.Fatalf("reading the flipped object: %v, want DataLoss", err)
	}
	r, err := cdst.CopyFrom(ctx, &devicepb.CopyFromRequest{Source: src.addr, Prefix: "db/"})
	if err != nil || r.Objects != 1 {
		t.Fatalf("second copy: %+v, %v (want db/a copied again, db/b kept)", r, err)
	}
	got, err := getObject(ctx, cdst, "db/a")
	if err != nil || fmt.Sprint(got.Data) != fmt.Sprint(verifyLimbs("db/a")) {
		t.Fatalf("db/a after the copy: %v, %v", got, err)
	}
}

// The scrub reads every page: a byte flipped on disk is found, its object
// quarantined (deleted, so that no query reads it), the others kept and
// counted; a second pass finds nothing.
func TestScrubQuarantinesCorruptObject(t *testing.T) {
	ctx := context.Background()
	c, d := newDevice(t)
	putVerifyObjects(t, c, "db/a", "db/b", "db/c")
	flipStored(t, d, "db/a")
	rep, err := d.Scrub(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Four objects: db's access list (a blob of aclBytes) and three.
	if !slices.Equal(rep.Corrupt, []string{"db/a"}) || rep.Objects != 4 {
		t.Fatalf("scrub: %+v, want db/a corrupt of 4 objects", rep)
	}
	acl, err := d.st.Stat(objname.ACL("db"))
	if err != nil {
		t.Fatal(err)
	}
	objBytes := int64(2 * 8 * 8)
	if rep.Bytes != acl.Bytes+2*objBytes || d.scrubbed.Load() != rep.Bytes {
		t.Fatalf("scrub read %d bytes (counted %d), want %d: the access list and two whole objects", rep.Bytes, d.scrubbed.Load(), acl.Bytes+2*objBytes)
	}
	if d.scrubCorrupt.Load() != 1 || d.quarantined.Load() != 1 {
		t.Fatalf("counted %d corruptions, %d quarantined; want 1, 1", d.scrubCorrupt.Load(), d.quarantined.Load())
	}
	if _, err := c.Get(ctx, &devicepb.GetRequest{Name: "db/a"}); code(err) != codes.NotFound {
		t.Fatalf("the corrupt object is still served: %v", err)
	}
	for _, name := range []string{"db/b", "db/c"} {
		got, err := getObject(ctx, c, name)
		if err != nil || fmt.Sprint(got.Data) != fmt.Sprint(verifyLimbs(name)) {
			t.Fatalf("%s after the scrub: %v, %v", name, got, err)
		}
	}
	rep, err = d.Scrub(ctx)
	if err != nil || len(rep.Corrupt) != 0 || rep.Objects != 3 || rep.Bytes != acl.Bytes+2*objBytes {
		t.Fatalf("second scrub: %+v, %v; want 3 clean objects", rep, err)
	}
}
