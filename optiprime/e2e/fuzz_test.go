package e2e

import (
	"bytes"
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/linear"
)

func FuzzDecodeHello(f *testing.F) {
	f.Add(hello{Hello: protocol.Hello(linear.OptiEncode, 13)}.encode())
	f.Add([]byte{})
	f.Add(make([]byte, helloLen))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := decodeHello(b)
		if err != nil {
			return
		}
		if !bytes.Equal(h.encode(), b) {
			t.Fatalf("hello %x decodes to %+v which encodes to %x", b, h, h.encode())
		}
	})
}
