package device

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strings"

	"github.com/rosemary-fhe/rosemary/device/authz"
	"github.com/rosemary-fhe/rosemary/device/store"
)

// The device keeps each database's access list (package authz) in its
// store, as a blob object under a reserved name no caller can use: a
// 4-byte length and the list's JSON, in one Put, so a list is replaced
// atomically and survives restarts.

var _ authz.Backend = (*Device)(nil)

// LoadACL implements authz.Backend.
func (d *Device) LoadACL(db string) (*authz.ACL, error) {
	_, raw, err := d.st.Get(authz.ACLObject(db))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("device: access list of %q: %w", db, err)
	}
	if len(raw) != 1 || len(raw[0]) < 4 {
		return nil, fmt.Errorf("device: access list of %q: %w: not a blob", db, store.ErrCorrupt)
	}
	n := binary.LittleEndian.Uint32(raw[0])
	if int64(n) > int64(len(raw[0])-4) {
		return nil, fmt.Errorf("device: access list of %q: %w: %d bytes in a %d-byte object", db, store.ErrCorrupt, n, len(raw[0]))
	}
	return authz.UnmarshalACL(raw[0][4 : 4+n])
}

// SaveACL implements authz.Backend.
func (d *Device) SaveACL(db string, l *authz.ACL) error {
	b, err := l.Marshal()
	if err != nil {
		return err
	}
	logN := max(4, bits.Len(uint(len(b)+4-1)))
	limb := make([]byte, 1<<logN)
	binary.LittleEndian.PutUint32(limb, uint32(len(b)))
	copy(limb[4:], b)
	shape := store.Shape{Polys: 1, Limbs: 1, LogN: uint8(logN), WordSize: 1}
	return d.write(func() error {
		_, err := d.st.Put(authz.ACLObject(db), store.KindBlob, shape, [][]byte{limb})
		return err
	})
}

// Holds implements authz.Backend.
func (d *Device) Holds(db string) (bool, error) {
	all, err := d.st.List()
	if err != nil {
		return false, err
	}
	for _, in := range all {
		if strings.HasPrefix(in.Name, db+"/") || in.Name == db {
			return true, nil
		}
	}
	return false, nil
}
