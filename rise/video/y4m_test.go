package video

import (
	"bytes"
	"io"
	"testing"
)

func TestY4MRoundTrip(t *testing.T) {
	frames := []Frame{SyntheticFrame(16, 8, 0), SyntheticFrame(16, 8, 1)}
	var buf bytes.Buffer
	if err := WriteY4M(&buf, frames); err != nil {
		t.Fatal(err)
	}
	r, err := NewY4MReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i := range frames {
		f, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(f.Pix, frames[i].Pix) {
			t.Fatalf("frame %d differs", i)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("want EOF, got %v", err)
	}
	// A 4:2:0 stream: the chroma planes are skipped.
	var s bytes.Buffer
	s.WriteString("YUV4MPEG2 W4 H2 F25:1 C420jpeg\nFRAME\n")
	s.Write([]byte{1, 2, 3, 4, 5, 6, 7, 8, 128, 128, 128, 128})
	s.WriteString("FRAME\n")
	s.Write([]byte{9, 9, 9, 9, 9, 9, 9, 9, 128, 128, 128, 128})
	r, err = NewY4MReader(&s)
	if err != nil {
		t.Fatal(err)
	}
	f0, _ := r.Next()
	f1, err := r.Next()
	if err != nil || f0.Pix[7] != 8 || f1.Pix[0] != 9 {
		t.Fatalf("4:2:0 parse: %v %v %v", f0.Pix, f1.Pix, err)
	}
}

func FuzzY4M(f *testing.F) {
	f.Add([]byte("YUV4MPEG2 W4 H2 F25:1 C420jpeg\nFRAME\n\x01\x02\x03\x04\x05\x06\x07\x08\x80\x80\x80\x80"))
	f.Add([]byte("YUV4MPEG2 W2 H2 Cmono\nFRAME\nabcd"))
	f.Add([]byte("YUV4MPEG2 W99999999 H2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := NewY4MReader(bytes.NewReader(b))
		if err != nil {
			return
		}
		for i := 0; i < 4; i++ {
			fr, err := r.Next()
			if err != nil {
				return
			}
			if len(fr.Pix) != r.W*r.H {
				t.Fatalf("frame of %d bytes for %dx%d", len(fr.Pix), r.W, r.H)
			}
		}
	})
}
