// Package authz decides what an authenticated caller may do with a
// device's objects.
//
// Objects belong to databases: the database of an object is the first
// component of its name ("acct/g3/pt/0" belongs to "acct"). A database
// has an access list: its owner (the identity whose write created it) and
// grants of the reader or owner role to other identities. Readers may
// query (bind the database's stored objects in a run, read its manifest
// and its delta);
// owners may also read objects, write and delete them, and grant. Names
// starting with "_" are the device's own (access lists live there) and no
// caller may name them.
//
// Two certificate roles (package certs) are not users: a device identity
// may read every object (how a cluster copies a shard device to device)
// but write none; an admin identity may list every object's metadata and
// read the device's counters, but not its contents.
package authz

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/objname"
)

// Access is what a request does to a database.
type Access uint8

// Accesses, from the least to the most a caller may do.
const (
	// List: see that an object exists and its shape.
	List Access = iota + 1
	// Query: read stored objects inside a run (PIR, search) and the
	// database's manifest and delta, never their bytes otherwise.
	Query
	// Read: the bytes of any object (Get).
	Read
	// Write: put and delete objects.
	Write
	// Manage: grant and revoke.
	Manage
	// Drop: delete objects (a Delete needs Write or Drop). An admin, a
	// cluster's coordinator, drops the shard replicas of old generations
	// and clears a broken replica before copying it again; it can destroy
	// data but neither read nor forge it (records are sealed on the client),
	// which an operator with the disk in hand can do anyway.
	Drop
)

func (a Access) String() string {
	switch a {
	case List:
		return "list"
	case Query:
		return "query"
	case Read:
		return "read"
	case Write:
		return "write"
	case Manage:
		return "manage"
	case Drop:
		return "drop"
	}
	return fmt.Sprintf("Access(%d)", uint8(a))
}

// Role is what an identity is to a database (the contract's type: a Grant
// carries it).
type Role = api.Role

// Roles a database grants.
const (
	None   = api.RoleNone
	Reader = api.RoleReader
	Owner  = api.RoleOwner
)

// ParseRole parses "reader", "owner" or "none".
func ParseRole(s string) (Role, error) {
	switch s {
	case "reader":
		return Reader, nil
	case "owner":
		return Owner, nil
	case "none":
		return None, nil
	}
	return None, fmt.Errorf("authz: unknown role %q (want reader or owner)", s)
}

// allows reports whether r permits a.
func allows(r Role, a Access) bool {
	switch r {
	case Owner:
		return true
	case Reader:
		return a == List || a == Query
	}
	return false
}

// ACL is a database's access list.
type ACL struct {
	Owner  string          `json:"owner"`
	Grants map[string]Role `json:"grants,omitempty"`
}

// RoleOf is name's role.
func (l *ACL) RoleOf(name string) Role {
	if l == nil {
		return None
	}
	if name == l.Owner {
		return Owner
	}
	return l.Grants[name]
}

// Marshal encodes an access list for storage.
func (l *ACL) Marshal() ([]byte, error) { return json.Marshal(l) }

// maxACLBytes bounds a stored access list (and so the grants of one
// database).
const maxACLBytes = 1 << 16

// UnmarshalACL decodes a stored access list.
func UnmarshalACL(b []byte) (*ACL, error) {
	if len(b) > maxACLBytes {
		return nil, fmt.Errorf("authz: access list of %d bytes", len(b))
	}
	var l ACL
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("authz: access list: %w", err)
	}
	if l.Owner == "" {
		return nil, errors.New("authz: access list without an owner")
	}
	for n, r := range l.Grants {
		if n == "" || (r != Reader && r != Owner) {
			return nil, fmt.Errorf("authz: access list grants %q the role %d", n, r)
		}
	}
	return &l, nil
}

// Errors (wrapped; test with errors.Is). A device maps ErrDenied to
// PermissionDenied and ErrReserved to InvalidArgument.
var (
	ErrDenied   = api.ErrPermissionDenied
	ErrReserved = errors.New("names starting with _ are the device's own")
	ErrNoName   = errors.New("empty object name")
)

// ReservedPrefix starts the device's own object names (objname.Reserved).
const ReservedPrefix = objname.Reserved

// DatabaseOf is the database an object name belongs to.
func DatabaseOf(object string) (string, error) {
	db, _, _ := strings.Cut(object, "/")
	switch {
	case db == "":
		return "", ErrNoName
	case strings.HasPrefix(db, ReservedPrefix):
		return "", fmt.Errorf("%w: %q", ErrReserved, object)
	}
	return db, nil
}

// CheckPrefix checks a prefix that names objects of one database, as a
// stored binding's or a copy's does: "<db>/" and more. Objects are named
// prefix+suffix, so a prefix without the "/" would reach other databases'
// objects ("acct" names "acct2/..."); it is refused, wrapping
// api.ErrInvalid.
func CheckPrefix(prefix string) error {
	if _, err := DatabaseOf(prefix); err != nil {
		return fmt.Errorf("%w: prefix %q: %w", api.ErrInvalid, prefix, err)
	}
	if !strings.Contains(prefix, "/") {
		return fmt.Errorf("%w: prefix %q names no database's objects (want <database>/...)", api.ErrInvalid, prefix)
	}
	return nil
}

// Backend keeps access lists: a device stores them as objects. Safe for
// concurrent use.
type Backend interface {
	// LoadACL returns db's access list, or nil when it has none.
	LoadACL(db string) (*ACL, error)
	// SaveACL replaces db's access list atomically.
	SaveACL(db string, l *ACL) error
	// Holds reports whether any object of db is stored.
	Holds(db string) (bool, error)
}

// Authorizer answers access questions from a Backend's access lists,
// cached. Safe for concurrent use.
type Authorizer struct {
	b Backend
	// change serializes changes of access lists (creation, grants); mu
	// guards the cache only, never held across a store write.
	change sync.Mutex
	mu     sync.Mutex
	cache  map[string]*ACL
}

// cached returns db's access list from the cache or the backend.
func (a *Authorizer) cached(db string) (*ACL, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.acl(db)
}

// Owner is who created database db ("" if it has no access list).
func (a *Authorizer) Owner(db string) string {
	l, err := a.cached(db)
	if err != nil || l == nil {
		return ""
	}
	return l.Owner
}

// New returns an Authorizer over b.
func New(b Backend) *Authorizer { return &Authorizer{b: b, cache: map[string]*ACL{}} }

func (a *Authorizer) acl(db string) (*ACL, error) {
	if l, ok := a.cache[db]; ok {
		return l, nil
	}
	l, err := a.b.LoadACL(db)
	if err != nil {
		return nil, err
	}
	if l != nil {
		a.cache[db] = l
	}
	return l, nil
}

// deviceMay is what a device identity may do anywhere: read, to copy
// shards between devices.
func deviceMay(acc Access) bool { return acc == List || acc == Query || acc == Read }

// adminMay is what an admin identity (a cluster's coordinator) may do
// anywhere: list objects, read a database's manifest (its shape,
// generation and sealing salt, no record: what reconciling a replica
// against it needs) and drop objects.
func adminMay(acc Access, object, db string) bool {
	return acc == List || acc == Drop || acc == Query && object == objname.Manifest(db)
}

// Authorize decides whether id may do acc to object. A write to a
// database without an access list creates it with id as owner: the
// database's creator owns it. Denials wrap ErrDenied and name neither the
// owner nor the grants.
func (a *Authorizer) Authorize(id certs.Identity, acc Access, object string) error {
	db, err := DatabaseOf(object)
	if err != nil {
		return err
	}
	switch id.Role {
	case certs.RoleDevice:
		if deviceMay(acc) {
			return nil
		}
		return fmt.Errorf("%w: device %s may not %s %q", ErrDenied, id.Name, acc, db)
	case certs.RoleAdmin:
		if adminMay(acc, object, db) {
			return nil
		}
		return fmt.Errorf("%w: admin %s may not %s %q", ErrDenied, id.Name, acc, db)
	case certs.RoleUser:
	default:
		return fmt.Errorf("%w: %s has no role", ErrDenied, id.Name)
	}
	l, err := a.cached(db)
	if err != nil {
		return err
	}
	if l == nil {
		// Creating a list waits for the store (no run may be going), so
		// it holds only the creators' lock: other databases' checks go on.
		a.change.Lock()
		defer a.change.Unlock()
		if l, err = a.cached(db); err != nil {
			return err
		}
	}
	if l == nil {
		// Objects without an access list (stored before access control,
		// or copied in without theirs) belong to nobody a device can
		// name: no user may read them or take them over by writing.
		held, err := a.b.Holds(db)
		if err != nil {
			return err
		}
		if held {
			return fmt.Errorf("%w: %q has no owner on this device", ErrDenied, db)
		}
		if acc != Write {
			// Nothing to read: the store answers NotFound, as it would for
			// the owner.
			return nil
		}
		l = &ACL{Owner: id.Name}
		if err := a.b.SaveACL(db, l); err != nil {
			return err
		}
		a.mu.Lock()
		a.cache[db] = l
		a.mu.Unlock()
		return nil
	}
	role := l.RoleOf(id.Name)
	if allows(role, acc) {
		return nil
	}
	// A member's own area: where a reader keeps what its queries need
	// (its evaluation keys) and finds what the owner left it (its grant).
	if role != None && strings.HasPrefix(object, objname.Member(db, id.Name)) && acc != Manage {
		return nil
	}
	return fmt.Errorf("%w: %s may not %s %q", ErrDenied, id.Name, acc, db)
}

// Listable reports whether id may see that object (listed, so stored)
// exists. It is Authorize(id, List, object) for an object known to be
// stored, which needs no look at the store: a database without an access
// list holds objects nobody may see.
func (a *Authorizer) Listable(id certs.Identity, object string) bool {
	db, err := DatabaseOf(object)
	if err != nil {
		return false
	}
	switch id.Role {
	case certs.RoleDevice, certs.RoleAdmin:
		return true
	case certs.RoleUser:
	default:
		return false
	}
	l, err := a.cached(db)
	return err == nil && l != nil && allows(l.RoleOf(id.Name), List)
}

// Grant gives to the role on db (None revokes); only an owner may. The
// creator's ownership cannot be revoked.
func (a *Authorizer) Grant(id certs.Identity, db, to string, r Role) error {
	if _, err := DatabaseOf(db); err != nil || strings.Contains(db, "/") {
		return fmt.Errorf("authz: %w: grant on %q: not a database name", api.ErrInvalid, db)
	}
	if err := a.Authorize(id, Manage, db); err != nil {
		return err
	}
	return a.GrantTrusted(db, to, r)
}

// GrantTrusted is Grant on behalf of whoever holds the store (an
// in-process caller): no identity is checked.
func (a *Authorizer) GrantTrusted(db, to string, r Role) error {
	if _, err := DatabaseOf(db); err != nil || strings.Contains(db, "/") {
		return fmt.Errorf("authz: %w: grant on %q: not a database name", api.ErrInvalid, db)
	}
	if to == "" || strings.Contains(to, "/") {
		return fmt.Errorf("authz: %w: grant to %q: not an identity", api.ErrInvalid, to)
	}
	if r != None && r != Reader && r != Owner {
		return fmt.Errorf("authz: %w: grant of role %d", api.ErrInvalid, r)
	}
	a.change.Lock()
	defer a.change.Unlock()
	l, err := a.cached(db)
	if err != nil {
		return err
	}
	if l == nil {
		return fmt.Errorf("%w: grant on %q: no such database", api.ErrNotFound, db)
	}
	if to == l.Owner {
		return fmt.Errorf("authz: %s created %q; its ownership stays", to, db)
	}
	next := &ACL{Owner: l.Owner, Grants: map[string]Role{}}
	for n, g := range l.Grants {
		next.Grants[n] = g
	}
	if r == None {
		delete(next.Grants, to)
	} else {
		next.Grants[to] = r
	}
	if err := a.b.SaveACL(db, next); err != nil {
		return err
	}
	a.mu.Lock()
	a.cache[db] = next
	a.mu.Unlock()
	return nil
}

// ACLOf returns db's access list for an owner to read.
func (a *Authorizer) ACLOf(id certs.Identity, db string) (*ACL, error) {
	if err := a.Authorize(id, Manage, db); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.acl(db)
}

// Forget drops a database's access list from the cache (after its last
// object and its list are deleted).
func (a *Authorizer) Forget(db string) {
	a.mu.Lock()
	delete(a.cache, db)
	a.mu.Unlock()
}
