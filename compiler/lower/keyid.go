package lower

import (
	"fmt"
	"strconv"
	"strings"
)

// KeyID names an evaluation key: the relinearization key, or the Galois
// key of one element. Its text form ("rlk", "gal:<element>") is what
// programs, bindings and JSON carry; ObjectName is where the key is
// stored on a device.
type KeyID struct {
	Relin  bool
	Galois uint64 // the Galois element, when not Relin
}

// RelinKey is the relinearization key.
func RelinKey() KeyID { return KeyID{Relin: true} }

// GaloisKey is the Galois key of element.
func GaloisKey(element uint64) KeyID { return KeyID{Galois: element} }

// String is the key's text form: "rlk" or "gal:<element>".
func (k KeyID) String() string {
	if k.Relin {
		return "rlk"
	}
	return "gal:" + strconv.FormatUint(k.Galois, 10)
}

// ObjectName is the name of the key's object under prefix:
// prefix/rlk or prefix/gal-<element> (the names existing stores hold).
func (k KeyID) ObjectName(prefix string) string {
	if k.Relin {
		return prefix + "/rlk"
	}
	return prefix + "/gal-" + strconv.FormatUint(k.Galois, 10)
}

// ParseKeyID reads a key's text form (String).
func ParseKeyID(s string) (KeyID, error) {
	if s == "rlk" {
		return RelinKey(), nil
	}
	if g, ok := strings.CutPrefix(s, "gal:"); ok {
		if e, err := strconv.ParseUint(g, 10, 64); err == nil && e != 0 {
			return GaloisKey(e), nil
		}
	}
	return KeyID{}, fmt.Errorf("lower: %q is no key (want rlk or gal:<element>)", s)
}
