package authz

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/objname"
)

// memBackend keeps access lists (encoded, as a device stores them) and a
// set of databases that hold objects.
type memBackend struct {
	mu    sync.Mutex
	acls  map[string][]byte
	held  map[string]bool
	saves int
}

func newMem() *memBackend { return &memBackend{acls: map[string][]byte{}, held: map[string]bool{}} }

func (m *memBackend) LoadACL(db string) (*ACL, error) {
	m.mu.Lock()
	b, ok := m.acls[db]
	m.mu.Unlock()
	if !ok {
		return nil, nil
	}
	return UnmarshalACL(b)
}

func (m *memBackend) SaveACL(db string, l *ACL) error {
	b, err := l.Marshal()
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.acls[db], m.saves = b, m.saves+1
	m.mu.Unlock()
	return nil
}

func (m *memBackend) Holds(db string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.held[db], nil
}

var (
	alice   = certs.Identity{Name: "alice", Role: certs.RoleUser}
	bob     = certs.Identity{Name: "bob", Role: certs.RoleUser}
	dev     = certs.Identity{Name: "dev0", Role: certs.RoleDevice}
	admin   = certs.Identity{Name: "ops", Role: certs.RoleAdmin}
	server  = certs.Identity{Name: "etcd", Role: certs.RoleServer}
	noRole  = certs.Identity{Name: "carol"}
	allAcc  = []Access{List, Query, Read, Write, Manage, Drop}
	objName = "acct/g1/pt/0"
)

func TestCreatorOwnsAndOthersAreRefused(t *testing.T) {
	m := newMem()
	a := New(m)
	if err := a.Authorize(alice, Write, objName); err != nil {
		t.Fatal(err)
	}
	for _, acc := range allAcc {
		if err := a.Authorize(alice, acc, "acct/head"); err != nil {
			t.Errorf("owner %s: %v", acc, err)
		}
		if err := a.Authorize(bob, acc, "acct/head"); !errors.Is(err, ErrDenied) {
			t.Errorf("bob %s on alice's database: %v, want ErrDenied", acc, err)
		} else if strings.Contains(err.Error(), "alice") {
			t.Errorf("the denial names the owner: %v", err)
		}
		if err := a.Authorize(noRole, acc, "acct/head"); !errors.Is(err, ErrDenied) {
			t.Errorf("an identity without a role %s: %v", acc, err)
		}
	}
	// The list survives a restart: a new Authorizer over the same backend.
	if err := New(m).Authorize(bob, Write, objName); !errors.Is(err, ErrDenied) {
		t.Fatalf("after a restart bob may write: %v", err)
	}
}

func TestReaderQueriesOnly(t *testing.T) {
	a := New(newMem())
	if err := a.Authorize(alice, Write, objName); err != nil {
		t.Fatal(err)
	}
	if err := a.Grant(bob, "acct", "bob", Owner); !errors.Is(err, ErrDenied) {
		t.Fatalf("bob granted himself ownership: %v", err)
	}
	if err := a.Grant(alice, "acct", "bob", Reader); err != nil {
		t.Fatal(err)
	}
	want := map[Access]bool{List: true, Query: true, Read: false, Write: false, Manage: false}
	for acc, ok := range want {
		if err := a.Authorize(bob, acc, objName); (err == nil) != ok {
			t.Errorf("reader %s: %v", acc, err)
		}
	}
	if err := a.Grant(alice, "acct", "bob", None); err != nil {
		t.Fatal(err)
	}
	if err := a.Authorize(bob, Query, objName); !errors.Is(err, ErrDenied) {
		t.Fatalf("revoked reader queries: %v", err)
	}
	if err := a.Grant(alice, "acct", "alice", None); err == nil {
		t.Fatal("the creator revoked her own ownership")
	}
	if err := a.Grant(alice, "acct/x", "bob", Reader); err == nil {
		t.Fatal("a grant on an object name, not a database")
	}
}

func TestDeviceAndAdminRoles(t *testing.T) {
	a := New(newMem())
	if err := a.Authorize(alice, Write, objName); err != nil {
		t.Fatal(err)
	}
	for _, acc := range allAcc {
		if err := a.Authorize(dev, acc, objName); (err == nil) != deviceMay(acc) {
			t.Errorf("device %s: %v", acc, err)
		}
		if err := a.Authorize(admin, acc, objName); (err == nil) != (acc == List || acc == Drop) {
			t.Errorf("admin %s: %v", acc, err)
		}
		// The manifest, which reconciling a replica reads: queried, not
		// read otherwise.
		db, _ := DatabaseOf(objName)
		if err := a.Authorize(admin, acc, objname.Manifest(db)); (err == nil) != (acc == List || acc == Drop || acc == Query) {
			t.Errorf("admin %s of the manifest: %v", acc, err)
		}
		// etcd's server certificate is no key to a device.
		if err := a.Authorize(server, acc, objName); !errors.Is(err, ErrDenied) {
			t.Errorf("server %s: %v, want ErrDenied", acc, err)
		}
	}
	if a.Listable(server, objName) {
		t.Error("a server identity lists objects")
	}
	// Neither creates a database by writing.
	if err := a.Authorize(dev, Write, "fresh/x"); !errors.Is(err, ErrDenied) {
		t.Errorf("a device created a database: %v", err)
	}
}

func TestReservedAndUnownedNames(t *testing.T) {
	m := newMem()
	a := New(m)
	for _, n := range []string{"_acl/acct", "_x", ""} {
		if err := a.Authorize(alice, Write, n); err == nil {
			t.Errorf("write to %q allowed", n)
		}
	}
	m.held["legacy"] = true
	if err := a.Authorize(bob, Write, "legacy/head"); !errors.Is(err, ErrDenied) {
		t.Fatalf("a database stored before access control was taken over: %v", err)
	}
	if m.saves != 0 {
		t.Fatalf("%d access lists saved by refused requests", m.saves)
	}
}

func TestUnmarshalACLRefusesMalformed(t *testing.T) {
	for _, in := range []string{``, `{}`, `{"owner":""}`, `{"owner":"a","grants":{"b":7}}`, `{"owner":"a","grants":{"":1}}`, `[`} {
		if _, err := UnmarshalACL([]byte(in)); err == nil {
			t.Errorf("UnmarshalACL(%q) accepted", in)
		}
	}
	l, err := UnmarshalACL([]byte(`{"owner":"a","grants":{"b":1,"c":2}}`))
	if err != nil || l.RoleOf("a") != Owner || l.RoleOf("b") != Reader || l.RoleOf("c") != Owner || l.RoleOf("d") != None {
		t.Fatalf("%+v %v", l, err)
	}
}

func FuzzUnmarshalACL(f *testing.F) {
	f.Add([]byte(`{"owner":"a","grants":{"b":1}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := UnmarshalACL(b)
		if err != nil {
			return
		}
		if l.Owner == "" || l.RoleOf(l.Owner) != Owner {
			t.Fatalf("accepted %+v", l)
		}
	})
}

// Two users creating the same database at once: one owns it, the other is
// refused, and the list on the backend names the one the cache does.
func TestConcurrentCreatorsOneOwner(t *testing.T) {
	for round := 0; round < 50; round++ {
		m := newMem()
		a := New(m)
		errs := make(chan error, 2)
		for _, id := range []certs.Identity{alice, bob} {
			go func() { errs <- a.Authorize(id, Write, "fresh/x") }()
		}
		var ok int
		for i := 0; i < 2; i++ {
			if err := <-errs; err == nil {
				ok++
			} else if !errors.Is(err, ErrDenied) {
				t.Fatal(err)
			}
		}
		stored, err := New(m).cached("fresh")
		if err != nil || ok != 1 || stored == nil {
			t.Fatalf("round %d: %d creators succeeded, stored %+v, %v", round, ok, stored, err)
		}
		if got, _ := a.cached("fresh"); got.Owner != stored.Owner {
			t.Fatalf("cache says %s, backend %s", got.Owner, stored.Owner)
		}
	}
}

// Listable answers as Authorize(List) does for stored objects, without
// looking at the store.
func TestListableAgreesWithAuthorize(t *testing.T) {
	m := newMem()
	a := New(m)
	if err := a.Authorize(alice, Write, objName); err != nil {
		t.Fatal(err)
	}
	if err := a.Grant(alice, "acct", "bob", Reader); err != nil {
		t.Fatal(err)
	}
	m.held["acct"], m.held["legacy"] = true, true
	carol := certs.Identity{Name: "carol", Role: certs.RoleUser}
	for _, id := range []certs.Identity{alice, bob, carol, dev, admin, noRole} {
		for _, o := range []string{objName, "legacy/x", "_acl/acct"} {
			want := a.Authorize(id, List, o) == nil
			if got := a.Listable(id, o); got != want {
				t.Errorf("Listable(%v, %s) = %v, Authorize says %v", id, o, got, want)
			}
		}
	}
}

// A prefix names one database's objects only with its "/": objects are
// prefix+suffix, so "acct" would reach "acct2/...".
func TestCheckPrefix(t *testing.T) {
	for _, p := range []string{"acct", "acct2", "", "/x", "_acl/acct"} {
		if err := CheckPrefix(p); !errors.Is(err, api.ErrInvalid) {
			t.Errorf("CheckPrefix(%q) = %v, want ErrInvalid", p, err)
		}
	}
	for _, p := range []string{"acct/", "acct/pt/", "acct/members/bob/k"} {
		if err := CheckPrefix(p); err != nil {
			t.Errorf("CheckPrefix(%q) = %v", p, err)
		}
	}
}
