package authz

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/guard"
	"github.com/rosemary-fhe/rosemary/device/objname"
)

// Every RPC's access rule, in one table. Every call needs an
// authenticated identity first; the rule says what else: which
// identities may call it at all, and the access the caller must hold on
// each object (or prefix) its request names. Guarded applies the table
// (Guarded.admit); TestEveryRPCHasARule checks it names every method of
// the service, so a new RPC cannot go in without one. What a method does
// as it rewrites the request it passes on is its own, beside the table:
// job ids translated to the device's (only the caller's own: Send, Recv,
// Release), program names placed in the caller's namespace (ProgSet,
// SetStream, Send, RunStream), a List reply filtered to what the caller
// may see, and a Grant only by the database's owner (Authorizer.Grant).

// need is one object (or prefix of a database's objects) a request names
// and the access it needs there (0: only the prefix's form is checked).
type need struct {
	access Access
	object string
	prefix bool
}

// rule is what one RPC asks of its caller beyond an identity.
type rule struct {
	// needs are the objects the request acts on (nil: none).
	needs func(req proto.Message) []need
	// roles, if set, are the only certificate roles that may call (the
	// plaintext identity of a device without TLS always may).
	roles []certs.Role
}

var rules = map[string]rule{
	"Config":    {},
	"Stats":     {},
	"ProgSet":   {},
	"SetStream": {},
	"Put":       {needs: func(m proto.Message) []need { return []need{{Write, m.(*devicepb.PutRequest).GetName(), false}} }},
	"Delete":    {needs: func(m proto.Message) []need { return []need{{Drop, m.(*devicepb.DeleteRequest).GetName(), false}} }},
	"Get":       {needs: getNeeds},
	"List":      {},
	"Grant":     {},
	"CopyFrom": {roles: []certs.Role{certs.RoleDevice, certs.RoleAdmin},
		needs: func(m proto.Message) []need { return []need{{0, m.(*devicepb.CopyFromRequest).GetPrefix(), true}} }},
	"Send":      {needs: sendNeeds},
	"Recv":      {},
	"Release":   {},
	"RunStream": {needs: runStreamNeeds},
	"QueryLWE":  {needs: queryLWENeeds},
}

// getNeeds: a database's manifest and delta are read by its readers (a
// query reads them whole first: objname.Manifest, objname.Delta); any
// other object's bytes by its owners. An access list (objname.ACL) is a
// device's to copy, not an object of a database: Guarded.Get admits only
// device identities to it, outside this table.
func getNeeds(m proto.Message) []need {
	name := m.(*devicepb.GetRequest).GetName()
	acc := Read
	if db, err := DatabaseOf(name); err == nil && (name == objname.Manifest(db) || hasPrefix(name, objname.Delta(db))) {
		acc = Query
	}
	return []need{{acc, name, false}}
}

// sendNeeds: every stored operand of a job is queried.
func sendNeeds(m proto.Message) []need {
	req := m.(*devicepb.SendRequest)
	var out []need
	for _, b := range append(append([]*devicepb.Binding(nil), req.GetInputs()...), req.GetKey()) {
		if s := b.GetStored(); s != nil {
			out = append(out, need{Query, s.GetName(), false})
		}
	}
	return out
}

// runStreamNeeds: every stored prefix a run reads and every key object it
// binds is queried.
func runStreamNeeds(m proto.Message) []need {
	req := m.(*devicepb.RunStreamRequest)
	var out []need
	for _, b := range req.GetStored() {
		out = append(out, need{Query, b.GetPrefix(), true})
	}
	for _, k := range req.GetKeys() {
		out = append(out, need{Query, k.GetObject(), false})
	}
	return out
}

// queryLWENeeds: the generation's objects and the caller's keys (in its
// member area, or the owner's) are queried.
func queryLWENeeds(m proto.Message) []need {
	req := m.(*devicepb.LWEQueryRequest)
	needs := []need{{Query, req.GetGeneration() + "/", true}}
	// A packed-mode query reads no Galois keys (its keys come with it); a
	// request that names some is checked for them all the same.
	if len(req.GetPackingKeys()) == 0 || req.GetKeys() != "" {
		needs = append(needs, need{Query, req.GetKeys(), true})
	}
	return needs
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// admit applies method's rule to a request of id: its roles, then every
// need.
func (g *Guarded) admit(id certs.Identity, method string, req proto.Message) error {
	r, ok := rules[method]
	if !ok {
		return fmt.Errorf("%w: %s has no access rule", ErrDenied, method)
	}
	if len(r.roles) > 0 && !roleIn(id, r.roles) {
		return fmt.Errorf("%w: %s may not call %s", ErrDenied, id.Name, method)
	}
	if r.needs == nil {
		return nil
	}
	for _, n := range r.needs(req) {
		if n.prefix {
			if err := CheckPrefix(n.object); err != nil {
				return fmt.Errorf("%s: %w", method, err)
			}
		}
		if n.access == 0 {
			continue
		}
		if err := g.a.Authorize(id, n.access, n.object); err != nil {
			return err
		}
	}
	return nil
}

// roleIn reports whether id holds one of roles (the plaintext identity,
// on a device without TLS, holds every role).
func roleIn(id certs.Identity, roles []certs.Role) bool {
	for _, r := range roles {
		if id.Role == r {
			return true
		}
	}
	return id == guard.Plaintext
}

// call authenticates a call of method and applies its rule.
func (g *Guarded) call(ctx context.Context, method string, req proto.Message) (certs.Identity, error) {
	id, err := caller(ctx)
	if err != nil {
		return id, err
	}
	return id, g.admit(id, method, req)
}
