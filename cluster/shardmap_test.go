package cluster_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/cluster"
)

// A shard map in etcd written before the kind-specific parts (flat fields)
// reads into the part of its kind, and is written back with the part as
// one object; a map whose part is not of its kind is refused.
func TestShardMapParts(t *testing.T) {
	old := `{"name":"users","kind":"kv","records":6,"generation":2,"owner":"alice","record_size":2048,"scheme":"lwe",` +
		`"lwe_params":"lwe2048","kv":{"slots":4,"slot_data":480,"max_value":256,"buckets":6},"hash_seed":"0102","entries":20,` +
		`"delta_max":100,"shards":[{"id":0,"records":3,"replicas":["d0"]},{"id":1,"records":3,"replicas":["d1"]}],"replication":1,"token":7}`
	var m cluster.Map
	if err := json.Unmarshal([]byte(old), &m); err != nil {
		t.Fatal(err)
	}
	k := m.KV
	if k == nil || m.PIR != nil || m.Vectors != nil || k.RecordSize != 2048 || k.Scheme != client.SchemeLWE || k.LWEParams != "lwe2048" ||
		k.Layout.MaxValue != 256 || k.Layout.Buckets != 6 || !bytes.Equal(k.HashSeed, []byte{1, 2}) || k.Entries != 20 ||
		m.DeltaMax != 100 || m.Owner != "alice" || len(m.Shards) != 2 || m.Token != 7 || m.Records != 6 {
		t.Fatalf("read %+v, part %+v", m, k)
	}
	b, err := json.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	var again cluster.Map
	if err := json.Unmarshal(b, &again); err != nil {
		t.Fatal(err)
	}
	if b2, _ := json.Marshal(&again); !bytes.Equal(b, b2) || bytes.Contains(b, []byte(`"kv":`)) || !bytes.Contains(b, []byte(`"keyword":{`)) {
		t.Fatalf("written %s, read back as %s", b, b2)
	}
	vec := `{"name":"v","kind":"vectors","records":2,"generation":1,"owner":"alice","dim":8,"metric":"l2","encrypt_vectors":true,"shards":[],"replication":1}`
	if err := json.Unmarshal([]byte(vec), &m); err != nil || m.Vectors == nil || m.Vectors.Dim != 8 || !m.Vectors.Encrypted || m.KV != nil {
		t.Fatalf("vectors map: %v %+v", err, m)
	}
	var bad cluster.Map
	if err := json.Unmarshal([]byte(`{"name":"v","kind":"vectors","pir":{"record_size":8}}`), &bad); !errors.Is(err, client.ErrParts) {
		t.Fatalf("a vectors map with a PIR part: %v", err)
	}
}
