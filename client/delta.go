package client

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/rosemary-fhe/rosemary/client/internal/seal"
	"github.com/rosemary-fhe/rosemary/client/kv"
	"github.com/rosemary-fhe/rosemary/device/api"
)

// A database's delta holds the changes made since its current generation
// was written — puts and deletes of a keyword database, record sets of a
// PIR database — so that an update costs one write of the manifest, not a
// reload. It lives in the manifest itself, sealed: every query reads the
// manifest first, so every query reads the whole delta, whether or not it
// answers the query, and the device cannot tell a delta hit from a hit in
// the main generation (nor present from absent keys). A bounded delta read
// whole costs less than a PIR query of it would: one LWE query uploads an
// encrypted secret of 256 KiB before its vector. An update and the
// generation it applies to are one manifest, replaced by compare-and-swap,
// so a query never sees a mixed state; Compact folds the delta into a new
// generation.

// Delta is the sealed delta a manifest carries.
type Delta struct {
	Ops    int    `json:"ops"`
	Salt   string `json:"salt"`   // hex: a fresh salt per rewrite (seal.Salt)
	Sealed []byte `json:"sealed"` // kv.EncodeOps, sealed as record 0
}

// Delta bounds.
const (
	// DefaultDeltaMax is a delta's default bound (encoded bytes).
	// Every query reads the manifest, and a blob read costs 8 bytes a
	// byte on the wire (one 64-bit word per byte): 64 KiB of delta add
	// about 0.7 MiB to a lookup.
	DefaultDeltaMax = 64 << 10
	// MaxDeltaMax bounds the bound: the manifest carries the delta
	// (base64 in its JSON), and a blob object holds at most 128 KiB.
	MaxDeltaMax = 64 << 10
)

// Errors of updates.
var (
	// ErrDeltaFull: the delta is at its bound; compact the database.
	ErrDeltaFull = errors.New("client: the database's delta is full (compact it)")
	// ErrNotFound: the key is not in the keyword database (only the
	// client learns this).
	ErrNotFound = errors.New("client: key not found")
	// Input errors of keyword databases (each names its line).
	ErrMalformed     = kv.ErrMalformed
	ErrDuplicateKey  = kv.ErrDuplicateKey
	ErrValueTooLarge = kv.ErrValueTooLarge
	ErrKeyTooLarge   = kv.ErrKeyTooLarge
)

// deltaSealer seals the delta of generation in under salt: the database's
// key, the name "<name>/delta" (no database name holds a '/').
func (c *Client) deltaSealer(ctx context.Context, in *Info, salt seal.Salt) (*seal.Sealer, error) {
	key, err := c.databaseKey(ctx, in.Name)
	if err != nil {
		return nil, err
	}
	return seal.NewSealer(key, in.Name+"/delta", in.Generation, salt)
}

// deltaOps opens the delta of manifest in (none: nil).
func (c *Client) deltaOps(ctx context.Context, in *Info) ([]kv.Op, error) {
	if in.Delta == nil {
		return nil, nil
	}
	var salt seal.Salt
	raw, err := hex.DecodeString(in.Delta.Salt)
	if err != nil || len(raw) != len(salt) {
		return nil, fmt.Errorf("client: %s: manifest holds no valid delta salt", in.Name)
	}
	copy(salt[:], raw)
	sl, err := c.deltaSealer(ctx, in, salt)
	if err != nil {
		return nil, err
	}
	b, err := sl.Open(nil, 0, in.Delta.Sealed)
	if err != nil {
		return nil, fmt.Errorf("client: %s: delta: %w", in.Name, err)
	}
	ops, err := kv.DecodeOps(b)
	if err != nil {
		return nil, fmt.Errorf("client: %s: %w", in.Name, err)
	}
	return ops, nil
}

// setDelta seals ops as the delta of manifest in (no ops: no delta).
func (c *Client) setDelta(ctx context.Context, in *Info, ops []kv.Op) error {
	if len(ops) == 0 {
		in.Delta = nil
		return nil
	}
	salt, err := seal.NewSalt()
	if err != nil {
		return err
	}
	sl, err := c.deltaSealer(ctx, in, salt)
	if err != nil {
		return err
	}
	in.Delta = &Delta{Ops: len(ops), Salt: hex.EncodeToString(salt[:]), Sealed: sl.Seal(nil, 0, kv.EncodeOps(nil, ops))}
	return nil
}

// deltaMax is a manifest's delta bound.
func (in *Info) deltaMax() int {
	if in.DeltaMax > 0 {
		return min(in.DeltaMax, MaxDeltaMax)
	}
	return DefaultDeltaMax
}

// compactAt is the delta size at which compaction is due.
func (in *Info) compactAt() int {
	if in.CompactAt > 0 {
		return min(in.CompactAt, in.deltaMax())
	}
	return in.deltaMax() / 2
}

// Update is what an update left: the delta's size, and whether compaction
// is due (the delta has reached the database's CompactAt).
type Update struct {
	DeltaOps   int  `json:"delta_ops"`
	DeltaBytes int  `json:"delta_bytes"`
	CompactDue bool `json:"compact_due"`
}

// maxUpdateTries bounds the compare-and-swap retries of one update.
const maxUpdateTries = 32

// update appends op to database name's delta: read the manifest, reseal
// the delta with op, replace the manifest if nothing replaced it meanwhile
// (else again). check validates op against the manifest.
func (c *Client) update(ctx context.Context, name string, op kv.Op, check func(*Info) error) (*Update, error) {
	for range maxUpdateTries {
		in, headGen, err := c.readHead(ctx, name)
		if err != nil {
			return nil, err
		}
		if err := check(in); err != nil {
			return nil, err
		}
		ops, err := c.deltaOps(ctx, in)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
		size := len(kv.EncodeOps(nil, ops))
		if size > in.deltaMax() {
			return nil, fmt.Errorf("client: update %s: %w: %d bytes with this update, at most %d", name, ErrDeltaFull, size, in.deltaMax())
		}
		next := *in
		if err := c.setDelta(ctx, &next, ops); err != nil {
			return nil, err
		}
		err = c.writeInfo(ctx, &next, headGen)
		if errors.Is(err, api.ErrStale) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &Update{DeltaOps: len(ops), DeltaBytes: size, CompactDue: size >= in.compactAt()}, nil
	}
	return nil, fmt.Errorf("client: update %s: the manifest kept changing (%d tries)", name, maxUpdateTries)
}

// Put sets key to value in keyword database name, visible to the next
// lookup. The value is at most the database's maximum.
func (c *Client) Put(ctx context.Context, name string, key, value []byte) (*Update, error) {
	return c.update(ctx, name, kv.Op{Kind: kv.OpPut, Key: key, Value: value}, func(in *Info) error {
		if err := kvOnly(in, "Put"); err != nil {
			return err
		}
		return in.KV.Check(kv.Pair{Key: key, Value: value, Line: 0})
	})
}

// Delete removes key from keyword database name (absent keys too: the
// device learns nothing either way).
func (c *Client) Delete(ctx context.Context, name string, key []byte) (*Update, error) {
	return c.update(ctx, name, kv.Op{Kind: kv.OpDelete, Key: key}, func(in *Info) error {
		if err := kvOnly(in, "Delete"); err != nil {
			return err
		}
		if len(key) > kv.MaxKey {
			return fmt.Errorf("%w: %d bytes (at most %d)", ErrKeyTooLarge, len(key), kv.MaxKey)
		}
		return nil
	})
}

// Set replaces record index of PIR database name (shorter records are
// zero-padded), visible to the next Get.
func (c *Client) Set(ctx context.Context, name string, index int, record []byte) (*Update, error) {
	return c.update(ctx, name, kv.Op{Kind: kv.OpSet, Index: int64(index), Value: record}, func(in *Info) error {
		if in.Kind != KindPIR {
			return fmt.Errorf("%w: %q is a %s database, Set writes PIR databases", ErrKind, name, in.Kind)
		}
		if index < 0 || index >= in.Records {
			return fmt.Errorf("client: set %s: %w: index %d of %d records", name, ErrIndexOutOfRange, index, in.Records)
		}
		if len(record) > in.RecordSize {
			return fmt.Errorf("client: set %s[%d]: a record of %d bytes, the database's are %d", name, index, len(record), in.RecordSize)
		}
		return nil
	})
}

// kvOnly refuses a database that is not a keyword database.
func kvOnly(in *Info, op string) error {
	if in.Kind != KindKV || in.KV == nil {
		return fmt.Errorf("%w: %q is a %s database, %s is for kv databases", ErrKind, in.Name, in.Kind, op)
	}
	return nil
}
