package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/kv"
)

// A cluster keyword database's delta — the puts and deletes made since its
// current generation — lives in etcd, sealed, under the owner's own prefix
// KVDeltaKey(owner, name): a head listing segments, and the segments.
//
// Why etcd, not segment objects on the replicas of a designated shard: an
// update must be atomic with the map (a load or compaction replaces the
// generation the delta belongs to). In etcd one transaction compares the
// map's and the head's revisions and writes the segment and the head, and
// etcd's own replication keeps it; on devices every replica of the shard
// would have to take every segment, with failover, repair, reconcile and
// sweep taught to keep them equal. A lookup reads the map, the head and
// every segment in one transaction — one consistent snapshot, the same
// requests whatever the key — so etcd, like the devices, cannot tell a
// delta hit from a miss. Only the owner may read or write the prefix
// (AddUser); the segments are sealed under the owner's data key, bound to
// their database and segment id, so etcd's operators read nothing.
//
// etcd bounds a request (--max-request-bytes, 1.5 MiB by default) and a
// segment may hold the whole delta, so the delta is bounded by MaxKVDelta
// (1 MiB). Segments merge as a device's do (client/delta.go, a binary
// counter): an update writes O(log n) operations on average, not the
// whole delta, which matters doubly here since etcd keeps every revision
// until its history is compacted.

// kvPrefix begins every keyword delta.
const kvPrefix = "/rosemary/kv/"

// KVDeltaKey is the prefix of the delta of owner's keyword database name:
// under the owner's prefix, which only the owner and admins may touch.
func KVDeltaKey(owner, name string) string { return kvPrefix + owner + "/" + name + "/" }

// Delta bounds of a cluster keyword database (encoded operations).
const (
	// MaxKVDelta: a segment (up to the whole delta, sealed) and its head
	// fit one etcd request.
	MaxKVDelta = 1 << 20
	// maxKVUpdateTries bounds the compare-and-swap retries of an update.
	maxKVUpdateTries = 32
)

// kvHead lists a delta's segments, oldest first; Token is the fencing
// token of the generation it belongs to (a head of another generation is
// an empty delta: a load or compaction replaced it).
type kvHead struct {
	Token    int64       `json:"token"`
	Ops      int         `json:"ops"`
	Bytes    int         `json:"bytes"` // the operations encoded as one list
	Segments []kvSegment `json:"segments"`
}

type kvSegment struct {
	ID  string `json:"id"`
	Ops int    `json:"ops"`
}

func headKey(owner, name string) string    { return KVDeltaKey(owner, name) + "head" }
func segKey(owner, name, id string) string { return KVDeltaKey(owner, name) + "seg/" + id }

// kvLabel names a keyword database among the owner's for its keys: its
// tag hasher's, and (with a segment id) a segment's seal.
func kvLabel(m *Map) string { return "cluster/" + m.Owner + "/" + m.Name }

// kvSnapshot is a keyword database's map and delta read in one
// transaction.
type kvSnapshot struct {
	m       *Map
	mapRev  int64
	head    kvHead // of m's generation (zero: an empty delta)
	headRev int64  // 0: no head
	segs    []string
	ops     [][]kv.Op // per segment of head, opened
}

// all is every operation of the delta, in order.
func (s *kvSnapshot) all() []kv.Op {
	var out []kv.Op
	for _, o := range s.ops {
		out = append(out, o...)
	}
	return out
}

// readKV reads keyword database name's map and delta in one transaction
// and opens the delta's segments.
func (c *Client) readKV(ctx context.Context, name string) (*kvSnapshot, error) {
	owner, bare := c.ref(name)
	resp, err := c.etcd.Txn(ctx).Then(clientv3.OpGet(MapKey(owner, bare)), clientv3.OpGet(KVDeltaKey(owner, bare), clientv3.WithPrefix())).Commit()
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %w", ErrEtcd, name, Denied(err))
	}
	m, rev, err := decodeMap(resp.Responses[0].GetResponseRange().GetKvs(), owner, bare)
	if err != nil {
		return nil, err
	}
	if m.Kind != client.KindKV || m.KV == nil {
		return nil, fmt.Errorf("%w: %s is a %s database, not a kv one", client.ErrKind, name, m.Kind)
	}
	s := &kvSnapshot{m: m, mapRev: rev}
	blobs := map[string][]byte{}
	for _, e := range resp.Responses[1].GetResponseRange().GetKvs() {
		k := string(e.Key)
		if k == headKey(owner, bare) {
			if err := json.Unmarshal(e.Value, &s.head); err != nil {
				return nil, fmt.Errorf("cluster: delta head of %s: %w", name, err)
			}
			s.headRev = e.ModRevision
		} else if id, ok := strings.CutPrefix(k, segKey(owner, bare, "")); ok {
			blobs[id] = e.Value
			s.segs = append(s.segs, k)
		}
	}
	if s.head.Token != m.Token {
		s.head = kvHead{}
	}
	for _, sg := range s.head.Segments {
		b, ok := blobs[sg.ID]
		if !ok {
			return nil, fmt.Errorf("cluster: %s: the delta lists segment %s, etcd holds none", name, sg.ID)
		}
		ops, err := c.keys.OpenOps(kvLabel(m)+"/"+sg.ID, b)
		if err != nil {
			return nil, fmt.Errorf("cluster: %s: delta segment %s: %w", name, sg.ID, err)
		}
		if len(ops) != sg.Ops {
			return nil, fmt.Errorf("cluster: %s: delta segment %s of %d operations, the head lists %d", name, sg.ID, len(ops), sg.Ops)
		}
		s.ops = append(s.ops, ops)
	}
	return s, nil
}

// deltaMax is a map's delta bound; compactAt the size at which
// compaction is due.
func (m *Map) deltaMax() int {
	limit, _ := kv.DeltaBounds(m.DeltaMax, m.CompactAt, MaxKVDelta, MaxKVDelta)
	return limit
}

func (m *Map) compactAt() int {
	_, due := kv.DeltaBounds(m.DeltaMax, m.CompactAt, MaxKVDelta, MaxKVDelta)
	return due
}

// newSegment seals ops as a new segment of m's delta: its id and the put.
func (c *Client) newSegment(m *Map, ops []kv.Op) (kvSegment, clientv3.Op, error) {
	var raw [12]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return kvSegment{}, clientv3.Op{}, err
	}
	sg := kvSegment{ID: hex.EncodeToString(raw[:]), Ops: len(ops)}
	sealed, err := c.keys.SealOps(kvLabel(m)+"/"+sg.ID, ops)
	if err != nil {
		return kvSegment{}, clientv3.Op{}, err
	}
	return sg, clientv3.OpPut(segKey(m.Owner, m.Name, sg.ID), string(sealed)), nil
}

// writeDelta is the transaction's writes that make head, with new (its
// newest segment), m's delta: the head, the segment, and the removal of
// every other segment etcd holds that head does not list (lookups read
// head and segments in one snapshot, so none is read after it goes).
func writeDelta(m *Map, head kvHead, put clientv3.Op, held []string) []clientv3.Op {
	b, _ := json.Marshal(head) // a struct of strings and ints
	ops := []clientv3.Op{put, clientv3.OpPut(headKey(m.Owner, m.Name), string(b))}
	listed := map[string]bool{}
	for _, sg := range head.Segments {
		listed[segKey(m.Owner, m.Name, sg.ID)] = true
	}
	for _, k := range held {
		if !listed[k] {
			ops = append(ops, clientv3.OpDelete(k))
		}
	}
	return ops
}

// kvUpdate appends op to keyword database name's delta: read the map and
// the delta, seal op merged with the newest segments as a new segment,
// and write it with the head in one transaction if neither the map nor
// the head changed meanwhile (else again, on what changed them).
func (c *Client) kvUpdate(ctx context.Context, name string, op kv.Op) (*client.Update, error) {
	opBytes := len(kv.EncodeOps(nil, []kv.Op{op})) - len(kv.EncodeOps(nil, nil))
	for range maxKVUpdateTries {
		s, err := c.readKV(ctx, name)
		if err != nil {
			return nil, err
		}
		m := s.m
		if m.Owner != c.owner || m.Name != name {
			return nil, fmt.Errorf("%w: update %s: only its owner %s updates it, by its own name", ErrDenied, name, m.Owner)
		}
		if op.Kind == kv.OpPut {
			err = m.KV.Layout.Check(kv.Pair{Key: op.Key, Value: op.Value})
		} else if len(op.Key) > kv.MaxKey {
			err = fmt.Errorf("%w: %d bytes (at most %d)", client.ErrKeyTooLarge, len(op.Key), kv.MaxKey)
		}
		if err != nil {
			return nil, fmt.Errorf("cluster: update %s: %w", name, err)
		}
		nops, size := s.head.Ops+1, max(s.head.Bytes, len(kv.EncodeOps(nil, nil)))+opBytes
		if size > m.deltaMax() {
			return nil, fmt.Errorf("cluster: update %s: %w: %d bytes with this update, at most %d", name, client.ErrDeltaFull, size, m.deltaMax())
		}
		// Carry: the newest segments holding no more operations than the
		// merged one so far join it.
		segs := s.head.Segments
		keep, merged := len(segs), 1
		for keep > 0 && segs[keep-1].Ops <= merged {
			keep--
			merged += segs[keep].Ops
		}
		var ops []kv.Op
		for _, o := range s.ops[keep:] {
			ops = append(ops, o...)
		}
		sg, put, err := c.newSegment(m, append(ops, op))
		if err != nil {
			return nil, err
		}
		head := kvHead{Token: m.Token, Ops: nops, Bytes: size, Segments: append(segs[:keep:keep], sg)}
		hk := headKey(m.Owner, m.Name)
		resp, err := c.etcd.Txn(ctx).If(
			clientv3.Compare(clientv3.ModRevision(MapKey(m.Owner, m.Name)), "=", s.mapRev),
			clientv3.Compare(clientv3.ModRevision(hk), "=", s.headRev),
		).Then(writeDelta(m, head, put, s.segs)...).Commit()
		if err != nil {
			return nil, fmt.Errorf("%w: update %s: %w", ErrEtcd, name, Denied(err))
		}
		if resp.Succeeded {
			return &client.Update{DeltaOps: nops, DeltaBytes: size, CompactDue: size >= m.compactAt()}, nil
		}
	}
	return nil, fmt.Errorf("cluster: update %s: %w (%d tries)", name, client.ErrUpdateConflict, maxKVUpdateTries)
}

// Put sets key to value in keyword database name, visible to the next
// lookup.
func (c *Client) Put(ctx context.Context, name string, key, value []byte) (*client.Update, error) {
	return c.kvUpdate(ctx, name, kv.Op{Kind: kv.OpPut, Key: key, Value: value})
}

// Delete removes key from keyword database name (an absent key too: etcd
// and the devices learn nothing either way).
func (c *Client) Delete(ctx context.Context, name string, key []byte) (*client.Update, error) {
	return c.kvUpdate(ctx, name, kv.Op{Kind: kv.OpDelete, Key: key})
}
