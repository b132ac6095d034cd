package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/kv"
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
	RecordSize    int    `json:"record_size,omitempty"`
	// Scheme is a PIR database's scheme on every shard ("" is the
	// client library's default, the LWE scheme).
	Scheme client.PIRScheme `json:"scheme,omitempty"`
	// LWEParams names the LWE parameter set of every shard ("": the
	// default).
	LWEParams string `json:"lwe_params,omitempty"`
	// InsecureParams: LWEParams names a set marked insecure, allowed at
	// creation (tests only).
	InsecureParams bool `json:"insecure_params,omitempty"`
	// KV is a keyword database's bucket layout (kv.go: bucket b is record
	// b, in shard b mod S), HashSeed its table's seed (hex), Entries its
	// keys, DeltaMax and CompactAt its delta's bounds (kvdelta.go).
	KV        *kv.Layout    `json:"kv,omitempty"`
	HashSeed  client.Hex    `json:"hash_seed,omitempty"`
	Entries   int           `json:"entries,omitempty"`
	DeltaMax  int           `json:"delta_max,omitempty"`
	CompactAt int           `json:"compact_at,omitempty"`
	Dim       int           `json:"dim,omitempty"`
	Metric    client.Metric `json:"metric,omitempty"`
	// EncryptVectors: every shard stores its vectors as CKKS ciphertexts
	// (client.VectorOptions.EncryptVectors).
	EncryptVectors bool    `json:"encrypt_vectors,omitempty"`
	Shards         []Shard `json:"shards"`
	Replicas       int     `json:"replication"`
	// Token is the fencing token of the load that wrote this generation:
	// the etcd revision of its claim (claim.go). Its shard databases carry
	// it in their names, so no two loads ever write the same database.
	// PreviousToken is the previous generation's, kept for queries in
	// flight. 0: a generation written before loads were fenced.
	Token         int64 `json:"token,omitempty"`
	PreviousToken int64 `json:"previous_token,omitempty"`
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
