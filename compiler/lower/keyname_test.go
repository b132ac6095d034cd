package lower

import "testing"

// The key names bind a body's key to a stored object: device, engine and
// compiler segment programs all read them, so their spelling is fixed.
func TestKeyNames(t *testing.T) {
	for _, c := range []struct {
		l    Program
		want string
	}{
		{Program{}, ""},
		{Program{Keys: []Object{{}}}, "rlk"},
		{Program{Keys: []Object{{}}, GaloisElement: 5}, "gal:5"},
		{Program{Keys: []Object{{}}, GaloisElement: 1<<15 - 1}, "gal:32767"},
	} {
		if got := c.l.KeyName(); got != c.want {
			t.Errorf("KeyName(keys %d, element %d) = %q, want %q", len(c.l.Keys), c.l.GaloisElement, got, c.want)
		}
	}
}
