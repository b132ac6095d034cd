package transport

import (
	"bytes"
	"testing"
	"time"
)

// Frames sent through WithDelay arrive whole and in order, and Close right
// after sending still delivers every queued frame; an exchange between two
// delayed ends completes. (No assertion on time: the machine is shared.)
func TestDelayDeliversInOrder(t *testing.T) {
	c, s := Pipe(WithDelay(20 * time.Millisecond))
	big := bytes.Repeat([]byte{0xab}, 3*coalesce) // header and payload in two writes
	msgs := [][]byte{[]byte("one"), big, []byte("three")}
	errc := make(chan error, 1)
	go func() {
		for i, m := range msgs {
			if err := c.Send(byte(1+i), m); err != nil {
				errc <- err
				return
			}
		}
		got, err := c.Exchange(9, []byte("from client"))
		if err == nil && string(got) != "from server" {
			t.Errorf("client's exchange got %q", got)
		}
		errc <- err
	}()
	for i, m := range msgs {
		f, err := s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if f.Type != byte(1+i) || !bytes.Equal(f.Payload, m) {
			t.Fatalf("frame %d: type %d, %d bytes; want type %d, %d bytes", i, f.Type, len(f.Payload), 1+i, len(m))
		}
	}
	got, err := s.Exchange(9, []byte("from server"))
	if err != nil || string(got) != "from client" {
		t.Fatalf("server's exchange: %q, %v", got, err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	// Close flushes: a frame queued just before Close still arrives.
	if err := c.Send(7, []byte("last")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	f, err := s.Recv()
	if err != nil || f.Type != 7 || string(f.Payload) != "last" {
		t.Fatalf("frame sent before Close: %+v, %v", f, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s.Close()
}
