package client

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/bits"
	"strings"
	"sync"

	"github.com/rosemary-fhe/rosemary/client/internal/seal"
	"github.com/rosemary-fhe/rosemary/client/kv"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"google.golang.org/protobuf/proto"
)

// DeltaSegment is one sealed segment object of a delta: Ops operations
// (kv.EncodeOps), sealed under their own salt, stored as 64-bit words
// (one wire byte per byte, where a blob costs eight).
type DeltaSegment struct {
	Object string `json:"object"`
	Ops    int    `json:"ops"`
	Salt   string `json:"salt"`   // hex: fresh per segment (seal.Salt)
	Sealed int    `json:"sealed"` // bytes of the sealed operations
}

// segLimbWords is the largest limb of a segment object: small segments
// are one power-of-two limb, larger ones limbs of 4 KiB, so padding
// costs little and tells the device little.
const segLimbWords = 512

// deltaPrefix is where the segments of generation in's delta live:
// "<name>/delta/g<generation>.<token>/", outside the generation's data
// (whose bytes the manifest counts), readable by the database's readers
// (objname.Delta).
func deltaPrefix(in *Info) string {
	return objname.Delta(in.Name) + strings.TrimPrefix(genPrefix(in), in.Name+"/") + "/"
}

// deltaSealer seals a delta segment of generation in under salt: the
// database's key, the name "<name>/delta" (no database name holds a '/').
func (c *Client) deltaSealer(ctx context.Context, in *Info, salt seal.Salt) (*seal.Sealer, error) {
	return seal.NewSealer(in.keys.gen, in.Name+"/delta", in.Generation, salt)
}

// writeSegment seals ops as a new segment object of generation in's
// delta (a fresh name: it replaces nothing until a manifest lists it).
func (c *Client) writeSegment(ctx context.Context, in *Info, ops []kv.Op) (DeltaSegment, error) {
	salt, err := seal.NewSalt()
	if err != nil {
		return DeltaSegment{}, err
	}
	sl, err := c.deltaSealer(ctx, in, salt)
	if err != nil {
		return DeltaSegment{}, err
	}
	sealed := sl.Seal(nil, 0, kv.EncodeOps(nil, ops))
	token, err := newLoadToken()
	if err != nil {
		return DeltaSegment{}, err
	}
	seg := DeltaSegment{Object: deltaPrefix(in) + token, Ops: len(ops), Salt: hex.EncodeToString(salt[:]), Sealed: len(sealed)}
	limbs := packSegment(sealed)
	put, err := api.NewPut(seg.Object, object.KindPlaintext, 1, len(limbs), limbs, 8)
	if err != nil {
		return DeltaSegment{}, err
	}
	put.IfGeneration = proto.Uint64(0) // a new object
	if _, err := c.dev.Put(ctx, put); err != nil {
		return DeltaSegment{}, fmt.Errorf("client: update %s: write delta: %w", in.Name, err)
	}
	return seg, nil
}

// packSegment lays sealed bytes out as limbs of 64-bit words: the length,
// then the bytes little-endian, zero-padded.
func packSegment(sealed []byte) [][]uint64 {
	words := 1 + (len(sealed)+7)/8
	n := min(1<<bits.Len(uint(words-1)), segLimbWords)
	limbs := make([][]uint64, (words+n-1)/n)
	flat := make([]uint64, len(limbs)*n)
	flat[0] = uint64(len(sealed))
	var w [8]byte
	for i := 0; i < len(sealed); i += 8 {
		clear(w[:])
		copy(w[:], sealed[i:])
		flat[1+i/8] = binary.LittleEndian.Uint64(w[:])
	}
	for i := range limbs {
		limbs[i] = flat[i*n : (i+1)*n]
	}
	return limbs
}

// storedBytes is the size of the delta's segment objects, as every query
// reads them.
func (d *Delta) storedBytes() int64 {
	if d == nil {
		return 0
	}
	var n int64
	for _, s := range d.Segments {
		words := 1 + (s.Sealed+7)/8
		limb := min(1<<bits.Len(uint(words-1)), segLimbWords)
		n += 8 * int64((words+limb-1)/limb*limb)
	}
	return n
}

// unpackSegment reverses packSegment, checking the length against what
// the manifest recorded.
func unpackSegment(limbs [][]uint64, want int) ([]byte, error) {
	var flat []uint64
	for _, l := range limbs {
		flat = append(flat, l...)
	}
	if len(flat) == 0 || flat[0] != uint64(want) || uint64(want) > 8*uint64(len(flat)-1) {
		return nil, fmt.Errorf("a segment of %d words does not hold the %d sealed bytes the manifest lists", len(flat), want)
	}
	out := make([]byte, 0, 8*(len(flat)-1))
	for _, w := range flat[1:] {
		out = binary.LittleEndian.AppendUint64(out, w)
	}
	return out[:want], nil
}

// readSegment reads and opens one segment of generation in's delta.
func (c *Client) readSegment(ctx context.Context, in *Info, s DeltaSegment) ([]kv.Op, error) {
	var salt seal.Salt
	raw, err := hex.DecodeString(s.Salt)
	if err != nil || len(raw) != len(salt) || !strings.HasPrefix(s.Object, deltaPrefix(in)) ||
		s.Sealed < seal.Overhead || s.Sealed > MaxDeltaMax+seal.Overhead {
		return nil, fmt.Errorf("client: %s: manifest lists an invalid delta segment %q", in.Name, s.Object)
	}
	copy(salt[:], raw)
	resp, err := c.dev.Get(ctx, &devicepb.GetRequest{Name: s.Object})
	if err != nil {
		return nil, fmt.Errorf("client: %s: delta segment: %w", in.Name, err)
	}
	_, limbs, err := api.ObjectLimbs(resp)
	if err != nil {
		return nil, fmt.Errorf("client: %s: delta segment %s: %w", in.Name, s.Object, err)
	}
	sealed, err := unpackSegment(limbs, s.Sealed)
	if err != nil {
		return nil, fmt.Errorf("client: %s: delta segment %s: %w", in.Name, s.Object, err)
	}
	sl, err := c.deltaSealer(ctx, in, salt)
	if err != nil {
		return nil, err
	}
	b, err := sl.Open(nil, 0, sealed)
	if err != nil {
		return nil, fmt.Errorf("client: %s: delta: %w", in.Name, err)
	}
	ops, err := kv.DecodeOps(b)
	if err != nil {
		return nil, fmt.Errorf("client: %s: %w", in.Name, err)
	}
	if len(ops) != s.Ops {
		return nil, fmt.Errorf("client: %s: delta segment of %d operations, the manifest lists %d", in.Name, len(ops), s.Ops)
	}
	return ops, nil
}

// readSegments reads segs (all at once) and returns their operations in
// order.
func (c *Client) readSegments(ctx context.Context, in *Info, segs []DeltaSegment) ([]kv.Op, error) {
	parts := make([][]kv.Op, len(segs))
	errs := make([]error, len(segs))
	var wg sync.WaitGroup
	for i, s := range segs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[i], errs[i] = c.readSegment(ctx, in, s)
		}()
	}
	wg.Wait()
	var ops []kv.Op
	for i := range segs {
		if errs[i] != nil {
			return nil, errs[i]
		}
		ops = append(ops, parts[i]...)
	}
	return ops, nil
}

// deltaOps reads the whole delta of manifest in, every segment (none:
// nil). Every query calls it, whatever it looks for.
func (c *Client) deltaOps(ctx context.Context, in *Info) ([]kv.Op, error) {
	if in.Delta == nil {
		return nil, nil
	}
	if a := in.Delta.Appended; a < 0 || a > in.Records || in.Records < 0 {
		return nil, fmt.Errorf("client: %s: manifest lists %d appended records of %d", in.Name, a, in.Records)
	}
	ops, err := c.readSegments(ctx, in, in.Delta.Segments)
	if err != nil {
		return nil, err
	}
	if len(ops) != in.Delta.Ops {
		return nil, fmt.Errorf("client: %s: delta of %d operations, the manifest lists %d", in.Name, len(ops), in.Delta.Ops)
	}
	return ops, nil
}

// setDelta writes ops as the delta of manifest in, one segment (no ops:
// no delta).
func (c *Client) setDelta(ctx context.Context, in *Info, ops []kv.Op) error {
	if len(ops) == 0 {
		in.Delta = nil
		return nil
	}
	seg, err := c.writeSegment(ctx, in, ops)
	if err != nil {
		return err
	}
	in.Delta = &Delta{Ops: len(ops), Bytes: len(kv.EncodeOps(nil, ops)), Segments: []DeltaSegment{seg}}
	return nil
}

// removeSupersededDeltas deletes the delta segments of every generation
// but in's (earlier ones, and loads or compactions that lost).
func (c *Client) removeSupersededDeltas(ctx context.Context, in *Info) error {
	return c.removeOther(ctx, objname.Delta(in.Name)+"g", in.Name+"/delta", deltaPrefix(in), in.Generation)
}
