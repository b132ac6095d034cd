package api

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// Prescan checks a request's wire bytes against its method's limits
// before they are decoded: the message's size, and how many elements its
// repeated fields hold. proto.Unmarshal materialises every element of a
// repeated field before the checks (check.go, limbs.go) can count them, and
// an empty element costs two bytes on the wire but tens on the heap (32
// MB of empty Instances decode to 800 MB); Prescan walks the bytes with
// protowire, allocating nothing, and refuses with an error wrapping
// ErrInvalid. m names the request type (its contents are not read); a
// type without limits of its own gets DefaultPrescanBytes.
//
// Prescan does not validate what it does not count: bytes it accepts may
// still fail to decode or convert.
func Prescan(m proto.Message, b []byte) error { return PrescanPieces(m, [][]byte{b}) }

// PrescanPieces is Prescan of the bytes of pieces one after the other,
// as gRPC receives a message (mem.BufferSlice): they are not gathered.
func PrescanPieces(m proto.Message, pieces [][]byte) error {
	p, ok := prescans[string(m.ProtoReflect().Descriptor().FullName())]
	if !ok {
		p = &prescan{name: string(m.ProtoReflect().Descriptor().Name()), maxBytes: DefaultPrescanBytes}
	}
	n := 0
	for _, b := range pieces {
		n += len(b)
	}
	if n > p.maxBytes {
		return fmt.Errorf("%w: %s of %d bytes exceeds %d", ErrInvalid, p.name, n, p.maxBytes)
	}
	if p.rule == nil {
		return nil
	}
	w := walker{p: p}
	return w.message(cursor{segs: pieces, n: n}, p.rule, 0)
}

// Limits of one request that Prescan enforces beyond those of the
// conversion.
const (
	// MaxRequestInstances bounds the stream instances of one request, all
	// nodes together (MaxStreamInstances bounds one node's).
	MaxRequestInstances = 1 << 17
	// MaxRequestLimbs bounds the limbs of one request, all operands
	// together: each is at least 8 bytes on the wire and a slice header
	// on the heap.
	MaxRequestLimbs = 1 << 20
	// DefaultPrescanBytes bounds a request with no limits of its own (the
	// health and reflection services').
	DefaultPrescanBytes = 1 << 20
	// smallRequestBytes bounds a request that carries names and numbers
	// only.
	smallRequestBytes = 64 << 10
	// bulkRequestBytes bounds a request carrying limbs: MaxMessageBytes
	// of payload plus room for its framing.
	bulkRequestBytes = MaxMessageBytes + 1<<20
)

// counter is what one prescan counts over a whole request.
type counter uint8

const (
	cNone counter = iota
	cLimbs
	cInstances
	cValues
	cBindings
	cStored
	cKeys
	cJobs
	nCounters
)

var counterNames = [nCounters]string{"", "limbs", "instances", "stream nodes", "bindings", "stored bindings", "key bindings", "jobs"}

type fieldKind uint8

const (
	kMessage    fieldKind = iota // a nested message, walked with its rule
	kLimb                        // bytes: one limb, 8·N bytes, 1 ≤ N ≤ MaxLimbCoeffs
	kObjectLimb                  // bytes: one limb of a stored object, in its word size, trailing zeros left out: at most 8·MaxLimbCoeffs bytes
	kVarint                      // a repeated integer, packed or not
)

// field is what Prescan checks of one field: its kind, the counter each
// element adds to, and how many elements one message may hold.
type field struct {
	kind      fieldKind
	sub       *rule
	count     counter
	perParent int    // 0: no bound of its own
	what      string // its elements, as an error names them
}

// rule is a message's fields that Prescan looks into; others are skipped
// (proto.Unmarshal keeps unknown fields as one byte string, no bigger
// than the message).
type rule struct {
	name   string
	fields map[protowire.Number]field
}

type prescan struct {
	name     string
	maxBytes int
	rule     *rule
	limits   [nCounters]int64 // 0: unbounded
}

// maxRuleField is the largest field number a rule names.
const maxRuleField = 8

// maxDepth bounds the nesting a rule can describe (RunStreamRequest →
// StreamValues → Instance is the deepest).
const maxDepth = 4

var (
	instanceRule = &rule{name: "Instance", fields: map[protowire.Number]field{1: {kind: kLimb, count: cLimbs}}}
	valuesRule   = &rule{name: "StreamValues", fields: map[protowire.Number]field{
		2: {kind: kMessage, sub: instanceRule, count: cInstances, perParent: MaxStreamInstances, what: "instances of one node"}}}
	inlineRule  = &rule{name: "Inline", fields: map[protowire.Number]field{1: {kind: kLimb, count: cLimbs}}}
	bindingRule = &rule{name: "Binding", fields: map[protowire.Number]field{5: {kind: kMessage, sub: inlineRule}}}

	prescans = map[string]*prescan{}
)

func limits(kv ...int64) (l [nCounters]int64) {
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = kv[i+1]
	}
	return l
}

func init() {
	add := func(m proto.Message, maxBytes int, r *rule, l [nCounters]int64) {
		checkRule(r)
		d := m.ProtoReflect().Descriptor()
		prescans[string(d.FullName())] = &prescan{name: string(d.Name()), maxBytes: maxBytes, rule: r, limits: l}
	}
	for _, m := range []proto.Message{&devicepb.ConfigRequest{}, &devicepb.StatsRequest{}, &devicepb.GetRequest{},
		&devicepb.DeleteRequest{}, &devicepb.RecvRequest{}, &devicepb.ListRequest{}, &devicepb.GrantRequest{},
		&devicepb.CopyFromRequest{}} {
		add(m, smallRequestBytes, nil, limits())
	}
	// A job id is at most 10 bytes as a varint.
	add(&devicepb.ReleaseRequest{}, 12*MaxRelease+1024,
		&rule{name: "ReleaseRequest", fields: map[protowire.Number]field{1: {kind: kVarint, count: cJobs}}},
		limits(int64(cJobs), MaxRelease))
	add(&devicepb.ProgSetRequest{}, MaxMessageBytes+1024, nil, limits())
	add(&devicepb.SetStreamRequest{}, MaxMessageBytes+1024, nil, limits())
	add(&devicepb.PutRequest{}, bulkRequestBytes,
		&rule{name: "PutRequest", fields: map[protowire.Number]field{5: {kind: kObjectLimb, count: cLimbs}}},
		limits(int64(cLimbs), MaxRequestLimbs))
	add(&devicepb.SendRequest{}, bulkRequestBytes,
		&rule{name: "SendRequest", fields: map[protowire.Number]field{
			2: {kind: kMessage, sub: bindingRule, count: cBindings, perParent: MaxBindings, what: "inputs"},
			3: {kind: kMessage, sub: bindingRule}}},
		limits(int64(cLimbs), MaxRequestLimbs, int64(cBindings), MaxBindings))
	// A query is two byte fields, bounded by the message size: nothing
	// repeated to count.
	add(&devicepb.LWEQueryRequest{}, bulkRequestBytes, nil, limits())
	add(&devicepb.RunStreamRequest{}, bulkRequestBytes,
		&rule{name: "RunStreamRequest", fields: map[protowire.Number]field{
			2: {kind: kMessage, sub: valuesRule, count: cValues, perParent: MaxBindings * 64, what: "input nodes"},
			3: {kind: kMessage, count: cStored, perParent: MaxStreamBindings, what: "stored bindings"},
			4: {kind: kMessage, count: cKeys, perParent: MaxStreamBindings, what: "key bindings"}}},
		limits(int64(cLimbs), MaxRequestLimbs, int64(cInstances), MaxRequestInstances, int64(cValues), MaxBindings*64,
			int64(cStored), MaxStreamBindings, int64(cKeys), MaxStreamBindings))
}

// checkRule panics (at init) on a rule naming a field past maxRuleField.
func checkRule(r *rule) {
	if r == nil {
		return
	}
	for num, f := range r.fields {
		if num < 1 || num > maxRuleField {
			panic(fmt.Sprintf("api: prescan rule %s names field %d", r.name, num))
		}
		checkRule(f.sub)
	}
}

type walker struct {
	p     *prescan
	count [nCounters]int64
}

var errMalformed = fmt.Errorf("%w: malformed wire bytes", ErrInvalid)

func (w *walker) add(c counter, n int64) error {
	if c == cNone {
		return nil
	}
	w.count[c] += n
	if l := w.p.limits[c]; l > 0 && w.count[c] > l {
		return fmt.Errorf("%w: %s: more than %d %s", ErrInvalid, w.p.name, l, counterNames[c])
	}
	return nil
}

// cursor reads a message's bytes as gRPC holds them, in pieces, without
// gathering them: segs[0][off:] is where it stands, n the bytes left in
// the (sub)message it reads.
type cursor struct {
	segs [][]byte
	off  int
	n    int
}

// peek returns the next bytes, up to len(buf) and the message's end: a
// slice of the current piece, or copied into buf across pieces.
func (c *cursor) peek(buf []byte) []byte {
	k := min(len(buf), c.n)
	for len(c.segs) > 0 && c.off == len(c.segs[0]) {
		c.segs, c.off = c.segs[1:], 0
	}
	if len(c.segs) == 0 || k == 0 {
		return nil
	}
	if s := c.segs[0][c.off:]; len(s) >= k {
		return s[:k]
	}
	out := buf[:0]
	for segs, off := c.segs, c.off; len(out) < k && len(segs) > 0; segs, off = segs[1:], 0 {
		s := segs[0][off:]
		out = append(out, s[:min(len(s), k-len(out))]...)
	}
	return out
}

// skip moves k bytes on (k ≤ c.n).
func (c *cursor) skip(k int) {
	c.n -= k
	for k > 0 {
		left := len(c.segs[0]) - c.off
		if k < left {
			c.off += k
			return
		}
		k -= left
		c.segs, c.off = c.segs[1:], 0
	}
}

// sub returns a cursor over the next k bytes and moves past them.
func (c *cursor) sub(k int) cursor {
	child := cursor{segs: c.segs, off: c.off, n: k}
	c.skip(k)
	return child
}

// varint reads a varint.
func (c *cursor) varint() (uint64, error) {
	var buf [binary.MaxVarintLen64]byte
	v, n := protowire.ConsumeVarint(c.peek(buf[:]))
	if n < 0 {
		return 0, protowire.ParseError(n)
	}
	c.skip(n)
	return v, nil
}

// tag reads a field's tag.
func (c *cursor) tag() (protowire.Number, protowire.Type, error) {
	var buf [binary.MaxVarintLen64]byte
	num, typ, n := protowire.ConsumeTag(c.peek(buf[:]))
	if n < 0 {
		return 0, 0, protowire.ParseError(n)
	}
	c.skip(n)
	return num, typ, nil
}

// bytes reads a length-delimited field's payload.
func (c *cursor) bytes() (cursor, error) {
	v, err := c.varint()
	if err != nil {
		return cursor{}, err
	}
	if v > uint64(c.n) {
		return cursor{}, io.ErrUnexpectedEOF
	}
	return c.sub(int(v)), nil
}

// maxGroupDepth bounds the nesting of groups in unknown fields (proto
// keeps them as bytes; a deeper one is refused as malformed).
const maxGroupDepth = 64

// skipValue moves past a field's value of type typ, as
// protowire.ConsumeFieldValue does.
func (c *cursor) skipValue(num protowire.Number, typ protowire.Type, depth int) error {
	switch typ {
	case protowire.VarintType:
		_, err := c.varint()
		return err
	case protowire.Fixed32Type, protowire.Fixed64Type:
		k := 4
		if typ == protowire.Fixed64Type {
			k = 8
		}
		if c.n < k {
			return io.ErrUnexpectedEOF
		}
		c.skip(k)
		return nil
	case protowire.BytesType:
		_, err := c.bytes()
		return err
	case protowire.StartGroupType:
		if depth > maxGroupDepth {
			return errors.New("groups nested too deep")
		}
		for {
			n, t, err := c.tag()
			if err != nil {
				return err
			}
			if t == protowire.EndGroupType {
				if n != num {
					return errors.New("mismatching end group")
				}
				return nil
			}
			if err := c.skipValue(n, t, depth+1); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("unexpected wire type %d", typ)
}

// message walks one message's bytes under r.
func (w *walker) message(c cursor, r *rule, depth int) error {
	if depth > maxDepth {
		return errMalformed
	}
	malformed := func(err error) error { return fmt.Errorf("%w: %s: %v", errMalformed, r.name, err) }
	var seen [maxRuleField + 1]int // per-parent counts by field number
	for c.n > 0 {
		num, typ, err := c.tag()
		if err != nil {
			return malformed(err)
		}
		f, known := r.fields[num]
		if known && f.kind == kVarint && typ == protowire.BytesType {
			v, err := c.bytes()
			if err != nil {
				return malformed(err)
			}
			k, err := countVarints(v)
			if err != nil {
				return malformed(err)
			}
			if err := w.add(f.count, k); err != nil {
				return err
			}
			continue
		}
		if !known || typ != wireType(f.kind) {
			// proto.Unmarshal keeps it as unknown bytes: no element.
			if err := c.skipValue(num, typ, 0); err != nil {
				return malformed(err)
			}
			continue
		}
		if f.perParent > 0 {
			seen[num]++
			if seen[num] > f.perParent {
				return fmt.Errorf("%w: %s: more than %d %s", ErrInvalid, w.p.name, f.perParent, f.what)
			}
		}
		if err := w.add(f.count, 1); err != nil {
			return err
		}
		if f.kind == kVarint {
			if _, err := c.varint(); err != nil {
				return malformed(err)
			}
			continue
		}
		v, err := c.bytes()
		if err != nil {
			return malformed(err)
		}
		switch f.kind {
		case kLimb:
			if v.n == 0 || v.n%8 != 0 || v.n/8 > MaxLimbCoeffs {
				return fmt.Errorf("%w: %s: limb of %d bytes (want 8·N bytes, 1 ≤ N ≤ %d)", ErrInvalid, w.p.name, v.n, MaxLimbCoeffs)
			}
		case kObjectLimb:
			if v.n > 8*MaxLimbCoeffs {
				return fmt.Errorf("%w: %s: limb of %d bytes (at most %d)", ErrInvalid, w.p.name, v.n, 8*MaxLimbCoeffs)
			}
		case kMessage:
			if f.sub != nil {
				if err := w.message(v, f.sub, depth+1); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func wireType(k fieldKind) protowire.Type {
	if k == kVarint {
		return protowire.VarintType
	}
	return protowire.BytesType
}

// countVarints counts the varints of a packed field.
func countVarints(c cursor) (int64, error) {
	var k int64
	for c.n > 0 {
		if _, err := c.varint(); err != nil {
			return 0, err
		}
		k++
	}
	return k, nil
}

// RequestLimit is the size limit of a request of m's type: what Prescan
// refuses beyond, checked on its own before the bytes are gathered.
func RequestLimit(m proto.Message) int {
	if p, ok := prescans[string(m.ProtoReflect().Descriptor().FullName())]; ok {
		return p.maxBytes
	}
	return DefaultPrescanBytes
}
