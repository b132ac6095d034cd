package cluster

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/client"
)

func TestShardToken(t *testing.T) {
	for _, c := range []struct {
		object string
		token  int64
		db     string
		ok     bool
	}{
		{"db.g3.t120.s7/head", 120, "db.g3.t120.s7", true},
		{"db.g3.t120.s7/g1/r0", 120, "db.g3.t120.s7", true},
		{"db.g12.s0/head", 0, "db.g12.s0", true}, // written before fencing
		{"db.g3.t120.s7", 120, "db.g3.t120.s7", true},
		{"db.gx.s0/head", 0, "", false},
		{"db.g3.t.s1/head", 0, "", false},
		{"db.g3.u5.s1/head", 0, "", false},
		{"db.g3.t5.s1.x/head", 0, "", false},
		{"db.g3/head", 0, "", false},
		{"db.g3.t-5.s1/head", 0, "", false},
		{"db.g3.t+5.s1/head", 0, "", false},
		{"other.g3.t5.s1/head", 0, "", false},
	} {
		token, db, ok := shardToken("db", c.object)
		if ok != c.ok || (ok && (token != c.token || db != c.db)) {
			t.Errorf("shardToken(db, %q) = %d, %q, %v; want %d, %q, %v", c.object, token, db, ok, c.token, c.db, c.ok)
		}
	}
	m := &Map{Header: client.Header{Name: "db", Generation: 3}, Token: 120}
	if got := m.ShardName(7); got != "db.g3.t120.s7" {
		t.Fatalf("ShardName %q", got)
	}
	if token, db, ok := shardToken("db", m.ShardName(7)+"/head"); !ok || token != 120 || db != m.ShardName(7) {
		t.Fatalf("ShardName does not parse back: %d %q %v", token, db, ok)
	}
}
