package authz

import (
	"errors"
	"testing"

	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"google.golang.org/protobuf/proto"
)

// The rule table names every method of the service, and nothing else: a
// new RPC cannot be served without an access rule.
func TestEveryRPCHasARule(t *testing.T) {
	served := map[string]bool{}
	for _, m := range devicepb.Device_ServiceDesc.Methods {
		served[m.MethodName] = true
		if _, ok := rules[m.MethodName]; !ok {
			t.Errorf("RPC %s has no access rule", m.MethodName)
		}
	}
	for _, s := range devicepb.Device_ServiceDesc.Streams {
		t.Errorf("streaming RPC %s: the table covers unary calls only", s.StreamName)
	}
	for name := range rules {
		if !served[name] {
			t.Errorf("rule for %s, which the service does not have", name)
		}
	}
}

// What the table's needs name for each request that carries objects: the
// objects and accesses, exactly.
func TestRuleNeeds(t *testing.T) {
	for _, tc := range []struct {
		method string
		req    any
		want   []need
	}{
		{"Put", &devicepb.PutRequest{Name: "db/x"}, []need{{Write, "db/x", false}}},
		{"Delete", &devicepb.DeleteRequest{Name: "db/x"}, []need{{Drop, "db/x", false}}},
		{"Get", &devicepb.GetRequest{Name: "db/x"}, []need{{Read, "db/x", false}}},
		{"Get", &devicepb.GetRequest{Name: "db/head"}, []need{{Query, "db/head", false}}},
		{"CopyFrom", &devicepb.CopyFromRequest{Prefix: "db/"}, []need{{0, "db/", true}}},
		{"Send", &devicepb.SendRequest{Inputs: []*devicepb.Binding{
			{Source: &devicepb.Binding_Stored{Stored: &devicepb.Stored{Name: "db/pt/0"}}},
			{Source: &devicepb.Binding_ResidentJob{ResidentJob: 3}}},
			Key: &devicepb.Binding{Source: &devicepb.Binding_Stored{Stored: &devicepb.Stored{Name: "db/keys/k"}}}},
			[]need{{Query, "db/pt/0", false}, {Query, "db/keys/k", false}}},
		{"RunStream", &devicepb.RunStreamRequest{Stored: []*devicepb.StoredBinding{{Prefix: "db/g1/"}}, Keys: []*devicepb.KeyBinding{{Object: "db/keys/rlk"}}},
			[]need{{Query, "db/g1/", true}, {Query, "db/keys/rlk", false}}},
		{"QueryLWE", &devicepb.LWEQueryRequest{Generation: "db/g1.ab", Keys: "db/members/me/keys/"},
			[]need{{Query, "db/g1.ab/", true}, {Query, "db/members/me/keys/", true}}},
	} {
		got := rules[tc.method].needs(tc.req.(proto.Message))
		if len(got) != len(tc.want) {
			t.Fatalf("%s %v: needs %v, want %v", tc.method, tc.req, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("%s %v: needs %v, want %v", tc.method, tc.req, got, tc.want)
			}
		}
	}
}

// A method outside the table, and a role the rule does not admit, are
// refused.
func TestAdmitRefuses(t *testing.T) {
	g := Guard(nil, New(nil))
	if err := g.admit(certs.Identity{Name: "alice", Role: certs.RoleUser}, "Unknown", &devicepb.StatsRequest{}); !errors.Is(err, ErrDenied) {
		t.Fatalf("unknown method: %v", err)
	}
	if err := g.admit(certs.Identity{Name: "alice", Role: certs.RoleUser}, "CopyFrom", &devicepb.CopyFromRequest{Prefix: "db/"}); !errors.Is(err, ErrDenied) {
		t.Fatalf("a user's CopyFrom: %v", err)
	}
	if err := g.admit(certs.Identity{Name: "d1", Role: certs.RoleDevice}, "CopyFrom", &devicepb.CopyFromRequest{Prefix: "db/"}); err != nil {
		t.Fatalf("a device's CopyFrom: %v", err)
	}
	if err := g.admit(certs.Identity{Name: "d1", Role: certs.RoleDevice}, "CopyFrom", &devicepb.CopyFromRequest{Prefix: "db"}); err == nil {
		t.Fatal("a CopyFrom of a prefix that is no database's was admitted")
	}
}
