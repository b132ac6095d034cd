package transport

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecodeFrame checks that the slice decoder and the stream decoder agree
// on every input, never panic, and that whatever decodes re-encodes to the
// same bytes.
func FuzzDecodeFrame(f *testing.F) {
	good, _ := AppendFrame(nil, 1, []byte("hello"), 1024)
	f.Add(good)
	f.Add(good[:4])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		const max = 1024
		fr, rest, err := DecodeFrame(b, max)
		sr, serr := ReadFrame(bytes.NewReader(b), max)
		if err != nil {
			var fe *FrameError
			if !errors.As(err, &fe) {
				t.Fatalf("DecodeFrame error %v is not a *FrameError", err)
			}
			if serr == nil {
				t.Fatalf("ReadFrame accepted what DecodeFrame rejected: %v", err)
			}
			if len(b) > 0 && !errors.Is(serr, fe.Err) {
				t.Fatalf("decoders disagree: %v vs %v", err, serr)
			}
			return
		}
		if serr != nil {
			t.Fatalf("ReadFrame rejected what DecodeFrame accepted: %v", serr)
		}
		if fr.Type != sr.Type || !bytes.Equal(fr.Payload, sr.Payload) {
			t.Fatal("decoders returned different frames")
		}
		enc, err := AppendFrame(nil, fr.Type, fr.Payload, max)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, b[:len(b)-len(rest)]) {
			t.Fatal("re-encoding differs from input")
		}
	})
}

func FuzzParseIndexed(f *testing.F) {
	f.Add(AppendIndexed(nil, 0, 3, []byte("key")))
	f.Add([]byte{0, 0, 0, 5, 0, 0, 0, 2})
	f.Add([]byte{0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		i, n, p, err := ParseIndexed(b, 1<<12)
		if err != nil {
			return
		}
		if i >= n || n > 1<<12 || !bytes.Equal(AppendIndexed(nil, i, n, p), b) {
			t.Fatalf("%x: item %d of %d", b, i, n)
		}
	})
}
