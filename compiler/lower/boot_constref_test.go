package lower

import (
	"strings"
	"testing"
)

func TestBootConstRoundTrip(t *testing.T) {
	for _, c := range []BootConst{
		{Kind: ConstScaleDown},
		{Kind: ConstPoly, Poly: 1, Step: 3, Coeff: 7, AddC0: true},
		{Kind: ConstDoubleAngle, Step: 2},
		{Kind: ConstMinusI},
	} {
		got, err := ParseBootConst(c.String())
		if err != nil || got != c {
			t.Fatalf("%s: parsed %+v, %v", c, got, err)
		}
	}
	for _, bad := range []string{"", "x", "bootconst/", "bootconst/nope/p0/s0/c0", "bootconst/poly/p0/s0", "bootconst/poly/q0/s0/c0",
		"bootconst/poly/p-1/s0/c0", "bootconst/poly/p0/s0/c0/+c1", "bootconst/poly/p00/s0/c0", "bootconst/poly/p0/s0/c99999999"} {
		if _, err := ParseBootConst(bad); err == nil || !strings.Contains(err.Error(), "boot constant") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
}

// FuzzParseBootConst: whatever it accepts prints back as the same name.
func FuzzParseBootConst(f *testing.F) {
	for _, s := range []string{"bootconst/poly/p0/s1/c2/+c0", "bootconst/-i/p0/s0/c0", "bootconst/trace/p0/s0/c0/", "bootconst/poly/p+1/s0/c0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseBootConst(s)
		if err == nil && c.String() != s {
			t.Fatalf("%q parsed to %+v, which prints %q", s, c, c.String())
		}
	})
}

func TestBootLinearTransformRoundTrip(t *testing.T) {
	b := BootLinearTransform{DFT: "stc", Matrix: 2, Slots: 512, Input: 27}
	if got, err := ParseBootLinearTransform(b.String()); err != nil || got != b {
		t.Fatalf("%s: parsed %+v, %v", b, got, err)
	}
	for _, bad := range []string{"", "bootlt/", "bootlt/xyz0/slots4/in1", "bootlt/cts0/slots3/in1", "bootlt/cts0/slots4/in0",
		"bootlt/cts/slots4/in1", "bootlt/cts00/slots4/in1", "bootlt/cts0/slots4"} {
		if _, err := ParseBootLinearTransform(bad); err == nil || !strings.Contains(err.Error(), "boot linear transform") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
}

// FuzzParseBootLinearTransform: whatever it accepts prints back the same.
func FuzzParseBootLinearTransform(f *testing.F) {
	for _, s := range []string{"bootlt/cts0/slots512/in9", "bootlt/stc12/slots2/in1", "bootlt/cts+1/slots4/in1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBootLinearTransform(s)
		if err == nil && b.String() != s {
			t.Fatalf("%q parsed to %+v, which prints %q", s, b, b.String())
		}
	})
}
