package lower

import "testing"

func TestKeyIDTextAndObjectName(t *testing.T) {
	for _, tc := range []struct {
		k          KeyID
		text, name string
	}{
		{RelinKey(), "rlk", "db/keys/rlk"},
		{GaloisKey(5), "gal:5", "db/keys/gal-5"},
		{GaloisKey(16383), "gal:16383", "db/keys/gal-16383"},
	} {
		if got := tc.k.String(); got != tc.text {
			t.Errorf("%+v.String() = %q, want %q", tc.k, got, tc.text)
		}
		if got := tc.k.ObjectName("db/keys"); got != tc.name {
			t.Errorf("%+v.ObjectName = %q, want %q", tc.k, got, tc.name)
		}
		back, err := ParseKeyID(tc.text)
		if err != nil || back != tc.k {
			t.Errorf("ParseKeyID(%q) = %+v, %v; want %+v", tc.text, back, err, tc.k)
		}
	}
	for _, bad := range []string{"", "rlk2", "gal:", "gal:x", "gal:0", "gk/5"} {
		if _, err := ParseKeyID(bad); err == nil {
			t.Errorf("ParseKeyID(%q) accepted", bad)
		}
	}
}
