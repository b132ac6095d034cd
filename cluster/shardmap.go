package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/rosemary-fhe/rosemary/client"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Shard is one part of a database and the devices holding it.
type Shard struct {
	ID       int      `json:"id"`
	Records  int      `json:"records"`
	Replicas []string `json:"replicas"` // device ids
}

// Map is a database's shard map, as etcd holds it (≤ 1 KiB per shard).
type Map struct {
	client.Header        // Kind: pir, vectors or kv; Records: a kv database's buckets
	Owner         string `json:"owner"` // its creator's identity: the map lives at MapKey(Owner, Name)
	// Parts: the part of the database's kind, as in its shards'
	// manifests (a PIR part names no seed or matrix: each shard has its
	// own).
	client.Parts
	// InsecureParams: the LWE parameter set is one marked insecure, allowed
	// at creation (tests only).
	InsecureParams bool `json:"insecure_params,omitempty"`
	// DeltaMax and CompactAt: a keyword database's delta bounds (kvdelta.go).
	DeltaMax  int     `json:"delta_max,omitempty"`
	CompactAt int     `json:"compact_at,omitempty"`
	Shards    []Shard `json:"shards"`
	Replicas  int     `json:"replication"`
	// Token is the fencing token of the load that wrote this generation:
	// the etcd revision of its claim (claim.go). Its shard databases carry
	// it in their names, so no two loads ever write the same database.
	// PreviousToken is the previous generation's, kept for queries in
	// flight. 0: a generation written before loads were fenced.
	Token         int64 `json:"token,omitempty"`
	PreviousToken int64 `json:"previous_token,omitempty"`
}

// UnmarshalJSON reads a map, as written now or before the kind-specific
// parts (flat fields), and refuses one whose part does not match its kind.
func (m *Map) UnmarshalJSON(b []byte) error {
	type plain Map // Map without this method
	*m = Map{}     // a map is read whole, never merged into another
	if err := json.Unmarshal(b, (*plain)(m)); err != nil {
		return err
	}
	return client.DecodeParts(b, m.Kind, &m.Parts)
}

// ShardName is the per-device database that holds shard s of the map's
// generation: "<name>.g<generation>.t<token>.s<shard>".
func (m *Map) ShardName(s int) string { return shardName(m.Name, m.Generation, m.Token, s) }

func shardName(name string, g uint64, token int64, s int) string {
	if token == 0 {
		return fmt.Sprintf("%s.g%d.s%d", name, g, s)
	}
	return fmt.Sprintf("%s.g%d.t%d.s%d", name, g, token, s)
}

// Locate is the shard and local index of record i of a map.
func (m *Map) Locate(i int) (shard, local int) { return i % len(m.Shards), i / len(m.Shards) }

// Errors of the shard map.
var (
	ErrNoDatabase = errors.New("cluster: no such database")
	ErrExists     = errors.New("cluster: database exists")
	ErrConflict   = errors.New("cluster: the shard map changed meanwhile")
	// ErrNoReplica: a shard none of whose replicas is live or answers.
	ErrNoReplica = errors.New("cluster: no live replica")
)

// readMap reads the map of owner's database name (linearizably) and its
// revision.
func readMap(ctx context.Context, cli *clientv3.Client, owner, name string) (*Map, int64, error) {
	resp, err := cli.Get(ctx, MapKey(owner, name))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: read %s: %w", ErrEtcd, name, Denied(err))
	}
	return decodeMap(resp.Kvs, owner, name)
}

// decodeMap decodes the map of owner's database name from what a read of
// its key returned (none: no such database), and its revision.
func decodeMap(kvs []*mvccpb.KeyValue, owner, name string) (*Map, int64, error) {
	if len(kvs) == 0 {
		return nil, 0, fmt.Errorf("%w %q", ErrNoDatabase, name)
	}
	var m Map
	if err := json.Unmarshal(kvs[0].Value, &m); err != nil {
		return nil, 0, fmt.Errorf("cluster: map of %s: %w", name, err)
	}
	m.Owner = owner // where it is, whatever it says
	return &m, kvs[0].ModRevision, nil
}

// writeMap replaces a map in one transaction if it is still at revision
// rev (0: if it does not exist).
func writeMap(ctx context.Context, cli *clientv3.Client, m *Map, rev int64) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	key := MapKey(m.Owner, m.Name)
	cmp := clientv3.Compare(clientv3.ModRevision(key), "=", rev)
	resp, err := cli.Txn(ctx).If(cmp).Then(clientv3.OpPut(key, string(b))).Commit()
	if err != nil {
		return fmt.Errorf("%w: publish %s: %w", ErrEtcd, m.Name, Denied(err))
	}
	if !resp.Succeeded {
		if rev == 0 {
			return fmt.Errorf("%w: %q", ErrExists, m.Name)
		}
		return fmt.Errorf("%w: %s", ErrConflict, m.Name)
	}
	return nil
}

// pir is the map's PIR part (a PIR database's, a keyword database's
// buckets'), or an empty one for vectors.
func (m *Map) pir() *client.PIRPart {
	if p := m.Matrix(); p != nil {
		return p
	}
	return &client.PIRPart{}
}
