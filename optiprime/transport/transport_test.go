package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

func TestFrameRoundTrip(t *testing.T) {
	var stream []byte
	payloads := [][]byte{nil, {1}, bytes.Repeat([]byte{0xab}, 70000)}
	for i, p := range payloads {
		var err error
		stream, err = AppendFrame(stream, byte(i+1), p, DefaultMaxPayload)
		if err != nil {
			t.Fatal(err)
		}
	}
	want := HeaderSize*3 + 1 + 70000
	if len(stream) != want {
		t.Fatalf("stream is %d bytes, want %d", len(stream), want)
	}
	rest := stream
	r := bytes.NewReader(stream)
	for i, p := range payloads {
		var f Frame
		var err error
		f, rest, err = DecodeFrame(rest, DefaultMaxPayload)
		if err != nil {
			t.Fatal(err)
		}
		g, err := ReadFrame(r, DefaultMaxPayload)
		if err != nil {
			t.Fatal(err)
		}
		if f.Type != byte(i+1) || !bytes.Equal(f.Payload, p) || g.Type != f.Type || !bytes.Equal(g.Payload, p) {
			t.Fatalf("frame %d decoded wrong", i)
		}
	}
	if len(rest) != 0 {
		t.Fatalf("%d bytes left", len(rest))
	}
	if _, err := ReadFrame(r, DefaultMaxPayload); err != io.EOF {
		t.Fatalf("clean end: got %v, want io.EOF", err)
	}
}

func TestFrameHeaderLayout(t *testing.T) {
	b, err := AppendFrame(nil, 7, []byte("hi"), 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{'R', 'M', 'P', 'C', 1, 7, 0, 0, 0, 2, 'h', 'i'}
	if !bytes.Equal(b, want) {
		t.Fatalf("got % x, want % x", b, want)
	}
}

func TestMalformedFrames(t *testing.T) {
	good, _ := AppendFrame(nil, 3, []byte("payload"), 100)
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	cases := []struct {
		name string
		b    []byte
		max  uint32
		want error
	}{
		{"magic", mut(func(b []byte) []byte { b[0] = 'X'; return b }), 100, ErrBadMagic},
		{"version", mut(func(b []byte) []byte { b[4] = 2; return b }), 100, ErrBadVersion},
		{"type0", mut(func(b []byte) []byte { b[5] = 0; return b }), 100, ErrBadType},
		{"oversized", good, 6, ErrTooLarge},
		{"huge length", mut(func(b []byte) []byte { b[6] = 0xff; return b }), DefaultMaxPayload, ErrTooLarge},
		{"short header", good[:5], 100, ErrTruncated},
		{"short payload", good[:len(good)-1], 100, ErrTruncated},
	}
	for _, c := range cases {
		_, _, err := DecodeFrame(c.b, c.max)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: DecodeFrame error %v, want %v", c.name, err, c.want)
		}
		var fe *FrameError
		if !errors.As(err, &fe) {
			t.Errorf("%s: error %T is not a *FrameError", c.name, err)
		}
		_, err = ReadFrame(bytes.NewReader(c.b), c.max)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: ReadFrame error %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := AppendFrame(nil, 1, make([]byte, 11), 10); !errors.Is(err, ErrTooLarge) {
		t.Errorf("AppendFrame oversized: %v", err)
	}
	if _, err := AppendFrame(nil, 0, nil, 10); !errors.Is(err, ErrBadType) {
		t.Errorf("AppendFrame type 0: %v", err)
	}
}

// A peer declaring a huge frame and then closing must not make the reader
// allocate the declared size first; it gets a truncation error.
func TestReadFrameDeclaredButMissing(t *testing.T) {
	h := []byte{'R', 'M', 'P', 'C', 1, 1, 0x0f, 0, 0, 0} // 240 MiB declared
	_, err := ReadFrame(bytes.NewReader(append(h, 1, 2, 3)), DefaultMaxPayload)
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("got %v, want ErrTruncated", err)
	}
}

func TestConnCountersAndFlights(t *testing.T) {
	c, s := Pipe()
	defer c.Close()
	defer s.Close()
	// client: send, send, recv, exchange ; server mirrors.
	var wg sync.WaitGroup
	wg.Add(1)
	var serr error
	go func() {
		defer wg.Done()
		for i := 0; i < 2; i++ {
			if _, err := s.RecvType(1); err != nil {
				serr = err
				return
			}
		}
		if err := s.Send(2, make([]byte, 100)); err != nil {
			serr = err
			return
		}
		if _, err := s.Exchange(3, make([]byte, 7)); err != nil {
			serr = err
		}
	}()
	if err := c.Send(1, make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	if err := c.Send(1, make([]byte, 20)); err != nil {
		t.Fatal(err)
	}
	if p, err := c.RecvType(2); err != nil || len(p) != 100 {
		t.Fatalf("recv: %v len %d", err, len(p))
	}
	if p, err := c.Exchange(3, make([]byte, 5)); err != nil || len(p) != 7 {
		t.Fatalf("exchange: %v len %d", err, len(p))
	}
	wg.Wait()
	if serr != nil {
		t.Fatal(serr)
	}
	want := Stats{BytesC2S: 10 + 20 + 5 + 3*HeaderSize, BytesS2C: 100 + 7 + 2*HeaderSize, Frames: 5, Flights: 3}
	if got := c.Stats(); got != want {
		t.Errorf("client stats %+v, want %+v", got, want)
	}
	if got := s.Stats(); got != want {
		t.Errorf("server stats %+v, want %+v", got, want)
	}
	if r := want.Rounds(); r != 2 {
		t.Errorf("rounds %d, want 2", r)
	}
	js, err := json.Marshal(c.Stats())
	if err != nil {
		t.Fatal(err)
	}
	if w := `{"bytes_c2s":65,"bytes_s2c":127,"frames":5,"flights":3,"rounds":2}`; string(js) != w {
		t.Errorf("JSON %s, want %s", js, w)
	}
}

func TestConnErrors(t *testing.T) {
	c, s := Pipe(WithMaxPayload(16))
	if err := c.Send(1, make([]byte, 17)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversized send: %v", err)
	}
	if err := c.Send(0, nil); !errors.Is(err, ErrBadType) {
		t.Errorf("type 0 send: %v", err)
	}
	if err := c.Send(5, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecvType(6); err == nil {
		t.Error("RecvType accepted a frame of the wrong type")
	}
	// A peer with a larger limit sends a frame this end refuses.
	big, small := Pipe()
	small.maxPayload = 8
	if err := big.Send(1, make([]byte, 9)); err != nil {
		t.Fatal(err)
	}
	if _, err := small.Recv(); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversized recv: %v", err)
	}
	c.Close()
	if _, err := s.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("recv after peer close: %v", err)
	}
	if err := s.Send(1, nil); err == nil {
		t.Error("send after peer close succeeded")
	}
}

func TestTCPLoopback(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback: %v", err)
	}
	defer l.Close()
	done := make(chan error, 1)
	go func() {
		s, err := Accept(l)
		if err != nil {
			done <- err
			return
		}
		defer s.Close()
		p, err := s.RecvType(9)
		if err != nil {
			done <- err
			return
		}
		for i := range p {
			p[i]++
		}
		done <- s.Send(9, p)
	}()
	c, err := Dial(context.Background(), l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg := bytes.Repeat([]byte{1, 2, 3}, 1<<18) // 768 KiB, several TCP segments
	if err := c.Send(9, msg); err != nil {
		t.Fatal(err)
	}
	got, err := c.RecvType(9)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != msg[i]+1 {
			t.Fatalf("byte %d: got %d want %d", i, got[i], msg[i]+1)
		}
	}
	// A deadline in the past makes the next read fail instead of hanging.
	if err := c.SetDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Recv(); err == nil {
		t.Error("read after the deadline succeeded")
	}
	if p, _ := Pipe(); p.SetDeadline(time.Now()) == nil {
		t.Error("pipe claims deadline support")
	}
	if st := c.Stats(); st.BytesC2S != uint64(len(msg)+HeaderSize) || st.BytesS2C != st.BytesC2S || st.Flights != 2 {
		t.Errorf("stats %+v", st)
	}
}
