package wire

import (
	"bytes"
	"errors"
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

var (
	infer = Session{Name: "infer", Version: 1, AbortType: 0x4f}
	e2e   = Session{Name: "e2e", Version: 1, AbortType: 0x5f}
)

func TestHelloBytes(t *testing.T) {
	h := infer.Hello(linear.OptiEncode, 13)
	got := h.Append([]byte{0xee})
	want := []byte{0xee, 1, byte(linear.OptiEncode), 13}
	if !bytes.Equal(got, want) {
		t.Fatalf("hello bytes %x, want %x", got, want)
	}
	back, extra, err := infer.ParseHello(got[1:], 0)
	if err != nil || back != h || len(extra) != 0 {
		t.Fatalf("parse: %+v, %x, %v; want %+v", back, extra, err, h)
	}
}

func TestParseHelloExtra(t *testing.T) {
	b := append(e2e.Hello(linear.Cheetah, 12).Append(nil), 7, 8)
	h, extra, err := e2e.ParseHello(b, 2)
	if err != nil {
		t.Fatal(err)
	}
	if h.Protocol != linear.Cheetah || h.LogN != 12 || !bytes.Equal(extra, []byte{7, 8}) {
		t.Fatalf("got %+v and %x", h, extra)
	}
}

// The errors are abort reasons the peer reads, so their text is checked.
func TestParseHelloErrors(t *testing.T) {
	for _, tc := range []struct {
		s     Session
		b     []byte
		extra int
		want  string
	}{
		{infer, []byte{1, 0}, 0, "infer: hello has 2 bytes, want 3"},
		{e2e, []byte{1, 0, 13}, 32, "e2e: hello has 3 bytes, want 35"},
		{infer, []byte{9, 0, 13}, 0, "infer: protocol version 9, want 1"},
		{e2e, []byte{1, 7, 13}, 0, "e2e: unknown linear protocol 7"},
		{infer, []byte{1, 0, 40}, 0, "infer: log N = 40 outside [12, 15]"},
		{infer, []byte{1, 0, 11}, 0, "infer: log N = 11 outside [12, 15]"},
	} {
		_, _, err := tc.s.ParseHello(tc.b, tc.extra)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%x: error %v, want %q", tc.b, err, tc.want)
		}
	}
}

func TestAbortReachesRecv(t *testing.T) {
	cc, sc := transport.Pipe()
	defer cc.Close()
	infer.Abort(sc, errors.New("no thanks"))
	f, err := cc.Recv()
	if err != nil || f.Type != infer.AbortType || string(f.Payload) != "no thanks" {
		t.Fatalf("abort frame %#x %q, %v", f.Type, f.Payload, err)
	}

	cc, sc = transport.Pipe()
	defer cc.Close()
	infer.Abort(sc, errors.New("no thanks"))
	_, err = infer.Recv(cc, 0x41)
	if err == nil || err.Error() != `transport: peer aborted: "no thanks"` {
		t.Fatalf("recv after abort: %v", err)
	}
}

func TestRecvWantsType(t *testing.T) {
	cc, sc := transport.Pipe()
	defer cc.Close()
	defer sc.Close()
	if err := sc.Send(0x42, []byte{1, 2}); err != nil {
		t.Fatal(err)
	}
	if err := sc.Send(0x43, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := e2e.Recv(cc, 0x42); err != nil || !bytes.Equal(b, []byte{1, 2}) {
		t.Fatalf("recv: %x, %v", b, err)
	}
	if _, err := e2e.Recv(cc, 0x42); err == nil || err.Error() != "transport: frame type 0x43, want 0x42" {
		t.Fatalf("wrong type: %v", err)
	}
}
