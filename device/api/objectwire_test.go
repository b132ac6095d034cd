package api

import (
	"errors"
	"math/bits"
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/object"
)

// An object round-trips at every word size, its trailing zeros left out on
// the wire and restored.
func TestObjectLimbsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		wb    uint8
		limbs [][]uint64
	}{
		{8, [][]uint64{{1, 2, 1 << 63, 0}, {0, 0, 0, 0}, {5, 0, 6, 0}}},
		{2, [][]uint64{{65535, 0, 3, 0, 0, 0, 0, 0}, {1, 2, 3, 4, 5, 6, 7, 8}}},
		{1, [][]uint64{{255, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}},
	} {
		put, err := NewPut("db/x", 2, 1, len(tc.limbs), tc.limbs, int(tc.wb))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, back, err := PutObject(put); err != nil || !reflect.DeepEqual(back, rawOf(tc.limbs, int(tc.wb))) {
			t.Fatalf("%d-byte words: %v, %v", tc.wb, back, err)
		}
		raw, _, err := encodeObjectLimbs(tc.limbs, int(tc.wb), false)
		if err != nil {
			t.Fatal(err)
		}
		shape := object.Shape{Polys: 1, Limbs: len(tc.limbs), LogN: uint8(bits.Len(uint(len(tc.limbs[0]))) - 1), WordSize: tc.wb}
		gm := ObjectReply(2, shape, raw, object.Checksum(raw))
		if kind, limbs, err := ObjectLimbs(gm); err != nil || kind != 2 || !reflect.DeepEqual(limbs, tc.limbs) {
			t.Fatalf("%d-byte words, get: %v, %v, %v", tc.wb, kind, limbs, err)
		}
		if kind, sh, back, err := ObjectRaw(gm); err != nil || kind != 2 || sh != shape || !reflect.DeepEqual(back, raw) {
			t.Fatalf("%d-byte words, get as stored: %v, %v, %v", sh, back, err, shape)
		}
	}
	if _, err := NewPut("db/x", 2, 1, 1, [][]uint64{{1 << 16}}, 2); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a word wider than 2 bytes: %v, want ErrInvalid", err)
	}
}

// A blob costs about a byte a byte on the wire: a manifest of 4,100 bytes
// (its limb padded to 8,192 in the store) travels in under 1.01 bytes a
// byte; before, each byte was an 8-byte word and the padding went along.
func TestBlobCostsAByteAByte(t *testing.T) {
	manifest := make([]byte, 4100)
	for i := range manifest {
		manifest[i] = byte('a' + i%26)
	}
	limb := object.EncodeBlob(manifest)
	data := make([]uint64, len(limb))
	for i, b := range limb {
		data[i] = uint64(b)
	}
	m := ObjectReply(object.KindBlob, object.BlobShape(len(limb)), [][]byte{limb}, object.Checksum([][]byte{limb}))
	if size := proto.Size(m); float64(size) > 1.01*float64(len(manifest)) {
		t.Fatalf("a %d-byte manifest costs %d bytes on the wire", len(manifest), size)
	}
	if back, err := BlobBytes(m); err != nil || string(back) != string(manifest) {
		t.Fatalf("the manifest back: %v", err)
	}
	p, err := NewPut("db/head", object.KindBlob, 1, 1, [][]uint64{data}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if size := proto.Size(p); float64(size) > 1.01*float64(len(manifest))+16 {
		t.Fatalf("putting a %d-byte manifest costs %d bytes", len(manifest), size)
	}
}

// A request cannot ask the device for much more memory than it carries: a
// few bytes claiming whole limbs are refused before anything is allocated;
// a limb mostly of zeros is sent whole by the client, so it passes.
func TestObjectLimbsExpansionBounded(t *testing.T) {
	m := &pb.PutRequest{Name: "db/x", Kind: 2, Polys: 1, Limbs: 1024, WordBytes: 8, LimbWords: MaxLimbCoeffs, Data: make([][]byte, 1024)}
	if _, _, _, err := PutObject(m); !errors.Is(err, ErrInvalid) {
		t.Fatalf("1024 empty limbs claiming %d words each: %v, want ErrInvalid", MaxLimbCoeffs, err)
	}
	zeros := make([]uint64, 1<<14)
	zeros[0] = 7
	pm, err := NewPut("db/x", 2, 1, 1, [][]uint64{zeros}, 8)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, back, err := PutObject(pm); err != nil || !reflect.DeepEqual(back, rawOf([][]uint64{zeros}, 8)) {
		t.Fatalf("a limb mostly of zeros: %v", err)
	}
}

// A Get reply is the device's word: one naming more limbs than it
// carries, limbs of a length that is no power of two, or a blob in words
// wider than bytes, is refused, named.
func TestObjectRepliesChecked(t *testing.T) {
	good := func() *pb.GetResponse {
		raw := [][]byte{make([]byte, 64), make([]byte, 64)}
		raw[0][0], raw[1][9] = 1, 2
		return ObjectReply(2, object.Shape{Polys: 1, Limbs: 2, LogN: 3, WordSize: 8}, raw, object.Checksum(raw))
	}
	if _, _, _, err := ObjectRaw(good()); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(m *pb.GetResponse){
		"more limbs named": func(m *pb.GetResponse) { m.Limbs = 3 },
		"no limbs":         func(m *pb.GetResponse) { m.Data = nil },
		"not a power of 2": func(m *pb.GetResponse) { m.LimbWords = 6 },
		"a limb too long":  func(m *pb.GetResponse) { m.Data[1] = make([]byte, 72) },
		"odd word size":    func(m *pb.GetResponse) { m.WordBytes = 4 },
	} {
		m := good()
		mutate(m)
		if _, _, _, err := ObjectRaw(m); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if _, err := BlobBytes(good()); !errors.Is(err, ErrInvalid) {
		t.Errorf("a blob of two 8-byte-word limbs: %v, want ErrInvalid", err)
	}
}
