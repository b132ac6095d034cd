package api

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/object"
)

// Checks of the wire limits of the requests the device takes as they are
// (their messages are the contract's own): each fails with an error
// wrapping ErrInvalid. The device runs them on every call, in process or
// served, before a request sizes anything.

// CheckName checks an object, program or database name's length.
func CheckName(what, name string) error {
	if len(name) > MaxNameBytes {
		return fmt.Errorf("%w: %s of %d bytes exceeds %d", ErrInvalid, what, len(name), MaxNameBytes)
	}
	return nil
}

// CheckObjectName checks a name that must name something: 1 to
// MaxNameBytes bytes.
func CheckObjectName(what, name string) error {
	if name == "" || len(name) > MaxNameBytes {
		return fmt.Errorf("%w: %s of %d bytes (want 1..%d)", ErrInvalid, what, len(name), MaxNameBytes)
	}
	return nil
}

// CheckGrant checks a Grant: a database name, an identity of 1 to
// MaxIdentityBytes bytes, a known role.
func CheckGrant(m *devicepb.GrantRequest) error {
	if err := CheckName("database", m.GetDatabase()); err != nil {
		return err
	}
	if id := m.GetIdentity(); id == "" || len(id) > MaxIdentityBytes {
		return fmt.Errorf("%w: identity of %d bytes (1 to %d)", ErrInvalid, len(id), MaxIdentityBytes)
	}
	if r := m.GetRole(); r != RoleNone && r != RoleReader && r != RoleOwner {
		return fmt.Errorf("%w: role %d", ErrInvalid, r)
	}
	return nil
}

// CheckCopyFrom checks a CopyFrom's prefix and source address lengths.
func CheckCopyFrom(m *devicepb.CopyFromRequest) error {
	if err := CheckName("prefix", m.GetPrefix()); err != nil {
		return err
	}
	return CheckName("source", m.GetSource())
}

// ObjectShape is a listed object's kind and shape, checked: the reply
// comes from a device.
func ObjectShape(o *devicepb.ObjectInfo) (object.Kind, object.Shape, error) {
	if o.GetLogN() > 17 || o.GetWordBytes() > 255 || o.GetKind() > 255 || o.GetPolys() > 1<<16 || o.GetLimbs() > 1<<16 {
		return 0, object.Shape{}, fmt.Errorf("%w: object %q of %d × %d limbs of 2^%d %d-byte words", ErrInvalid, o.GetName(),
			o.GetPolys(), o.GetLimbs(), o.GetLogN(), o.GetWordBytes())
	}
	return object.Kind(o.GetKind()), object.Shape{Polys: int(o.GetPolys()), Limbs: int(o.GetLimbs()), LogN: uint8(o.GetLogN()),
		WordSize: uint8(o.GetWordBytes())}, nil
}

// ObjectInfo describes a stored object for a List reply.
func ObjectInfo(name string, kind object.Kind, shape object.Shape, gen object.Generation, bytes int64) *devicepb.ObjectInfo {
	return &devicepb.ObjectInfo{Name: name, Kind: uint32(kind), Polys: uint32(shape.Polys), Limbs: uint32(shape.Limbs),
		LogN: uint32(shape.LogN), WordBytes: uint32(shape.WordSize), Bytes: uint64(bytes), Generation: uint64(gen)}
}
