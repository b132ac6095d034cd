package device

import (
	"errors"
	"fmt"

	"github.com/rosemary-fhe/rosemary/device/authz"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/device/store"
)

// The device keeps each database's access list (package authz) in its
// store, as a blob object (the list's JSON) under a reserved name no caller
// can use: one Put replaces a list atomically, and it survives restarts.

var _ authz.Backend = (*Device)(nil)

// LoadACL implements authz.Backend.
func (d *Device) LoadACL(db string) (*authz.ACL, error) {
	_, raw, err := d.st.Get(objname.ACL(db))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("device: access list of %q: %w", db, err)
	}
	if len(raw) != 1 {
		return nil, fmt.Errorf("device: access list of %q: %w: not a blob", db, store.ErrCorrupt)
	}
	b, err := object.DecodeBlob(raw[0])
	if err != nil {
		return nil, fmt.Errorf("device: access list of %q: %w: %w", db, store.ErrCorrupt, err)
	}
	return authz.UnmarshalACL(b)
}

// SaveACL implements authz.Backend.
func (d *Device) SaveACL(db string, l *authz.ACL) error {
	b, err := l.Marshal()
	if err != nil {
		return err
	}
	limb := object.EncodeBlob(b)
	return d.write(func() error {
		_, err := d.st.Put(objname.ACL(db), store.KindBlob, object.BlobShape(len(limb)), [][]byte{limb})
		return err
	})
}

// clearGrants leaves database db's access list with its owner alone: a
// dropped database (its manifest deleted) keeps no readers or co-owners
// for a database created again under its name.
func (d *Device) clearGrants(db string) error {
	l, err := d.LoadACL(db)
	if err != nil || l == nil || len(l.Grants) == 0 {
		return err
	}
	if err := d.SaveACL(db, &authz.ACL{Owner: l.Owner}); err != nil {
		return err
	}
	d.access.Forget(db)
	return nil
}

// Holds implements authz.Backend: one lookup in the store's index of
// databases (an unknown database name once scanned every object).
func (d *Device) Holds(db string) (bool, error) { return d.st.HoldsHead(db) }

// Own makes identity the owner of database db, written straight into the
// store (by a benchmark or a harness holding it) rather than through a
// served device, which would have recorded its creator.
func (d *Device) Own(db, identity string) error {
	if err := d.SaveACL(db, &authz.ACL{Owner: identity}); err != nil {
		return err
	}
	d.access.Forget(db)
	return nil
}
