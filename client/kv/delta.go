package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// OpKind is what a delta operation does.
type OpKind byte

// Delta operations.
const (
	OpPut    OpKind = 1 // key := value
	OpDelete OpKind = 2 // key removed
	OpSet    OpKind = 3 // record Index := Value (an index PIR database)
)

// Op is one change made since the table was built.
type Op struct {
	Kind  OpKind
	Key   []byte
	Index int64
	Value []byte
}

// MaxKey bounds a key's length.
const MaxKey = 1024

// ErrDelta reports a delta that does not decode.
var ErrDelta = errors.New("kv: malformed delta")

// EncodeOps appends ops to dst: a count, then per op its kind, key,
// index and value (lengths 4 bytes big-endian).
func EncodeOps(dst []byte, ops []Op) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(ops)))
	for _, o := range ops {
		dst = append(dst, byte(o.Kind))
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(o.Key)))
		dst = append(dst, o.Key...)
		dst = binary.BigEndian.AppendUint64(dst, uint64(o.Index))
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(o.Value)))
		dst = append(dst, o.Value...)
	}
	return dst
}

// DecodeOps reads what EncodeOps wrote; every length is checked against
// what is left, so no input allocates more than its own size.
func DecodeOps(b []byte) ([]Op, error) {
	take := func(n int) ([]byte, error) {
		if n < 0 || n > len(b) {
			return nil, fmt.Errorf("%w: %d bytes wanted, %d left", ErrDelta, n, len(b))
		}
		out := b[:n]
		b = b[n:]
		return out, nil
	}
	u32 := func() (int, error) {
		x, err := take(4)
		if err != nil {
			return 0, err
		}
		return int(binary.BigEndian.Uint32(x)), nil
	}
	n, err := u32()
	if err != nil {
		return nil, err
	}
	if n > len(b)/17 {
		return nil, fmt.Errorf("%w: %d operations in %d bytes", ErrDelta, n, len(b))
	}
	ops := make([]Op, n)
	for i := range ops {
		k, err := take(1)
		if err != nil {
			return nil, err
		}
		o := Op{Kind: OpKind(k[0])}
		if o.Kind < OpPut || o.Kind > OpSet {
			return nil, fmt.Errorf("%w: operation kind %d", ErrDelta, k[0])
		}
		kl, err := u32()
		if err != nil {
			return nil, err
		}
		if o.Key, err = take(kl); err != nil {
			return nil, err
		}
		ix, err := take(8)
		if err != nil {
			return nil, err
		}
		o.Index = int64(binary.BigEndian.Uint64(ix))
		vl, err := u32()
		if err != nil {
			return nil, err
		}
		if o.Value, err = take(vl); err != nil {
			return nil, err
		}
		ops[i] = o
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the operations", ErrDelta, len(b))
	}
	return ops, nil
}

// LastKey returns the latest operation on key in ops (nil: none).
func LastKey(ops []Op, key []byte) *Op {
	for i := len(ops) - 1; i >= 0; i-- {
		if (ops[i].Kind == OpPut || ops[i].Kind == OpDelete) && string(ops[i].Key) == string(key) {
			return &ops[i]
		}
	}
	return nil
}

// LastIndex returns the latest set of record index in ops (nil: none).
func LastIndex(ops []Op, index int64) *Op {
	for i := len(ops) - 1; i >= 0; i-- {
		if ops[i].Kind == OpSet && ops[i].Index == index {
			return &ops[i]
		}
	}
	return nil
}

// DeltaBounds resolves a database's delta options, the same rule on one
// device and on a cluster: the bound is bound if > 0, else def, and at
// most ceiling; compaction is due at compactAt if > 0 (at most the bound),
// else at half the bound.
func DeltaBounds(bound, compactAt, def, ceiling int) (limit, due int) {
	limit = def
	if bound > 0 {
		limit = min(bound, ceiling)
	}
	due = limit / 2
	if compactAt > 0 {
		due = min(compactAt, limit)
	}
	return limit, due
}
