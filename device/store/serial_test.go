package store

import (
	"bytes"
	"testing"
)

// The serial reads (one goroutine, for a reader sharing the cores) return
// exactly what the parallel ones do, for every shape.
func TestSerialReadsMatchParallel(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	for v := uint64(0); v < 72; v++ {
		name := "obj" + string(rune('a'+v%26)) + string(rune('a'+v/26))
		mustPut(t, s, name, v)
		sh := shapeFor(v)
		want := content(name, v, sh)
		o, err := s.Acquire(name)
		if err != nil {
			t.Fatal(err)
		}
		got := make([][]byte, sh.NumLimbs())
		for i := range got {
			got[i] = make([]byte, sh.LimbBytes())
		}
		if err := o.ReadAllIntoSerial(got); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%s: serial read of limb %d differs", name, i)
			}
		}
		for poly := 0; poly < sh.Polys; poly++ {
			for limb := 0; limb < sh.Limbs; limb++ {
				buf := make([]byte, sh.LimbBytes())
				if err := o.ScanLimbSerial(poly, limb, func(off int, b []byte) { copy(buf[off:], b) }); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(buf, want[poly*sh.Limbs+limb]) {
					t.Fatalf("%s: serial scan of limb (%d,%d) differs", name, poly, limb)
				}
			}
		}
		o.Release()
	}
}
