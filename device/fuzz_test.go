package device

import (
	"bytes"
	"testing"
)

// decoders returns a fresh message of every type.
func decoders() []message {
	return []message{&ConfigRequest{}, &ConfigResponse{}, &ProgSetRequest{}, &ProgSetResponse{}, &PutRequest{}, &PutResponse{},
		&GetRequest{}, &GetResponse{}, &DeleteRequest{}, &DeleteResponse{}, &SendRequest{}, &SendResponse{},
		&RecvRequest{}, &RecvResponse{}, &ReleaseRequest{}, &ReleaseResponse{}, &StatsRequest{}, &StatsResponse{}}
}

func seeds() []message {
	l := [][]uint64{{1, 2, 3, 4}, {5, 6, 7, 8}}
	return []message{
		&PutRequest{Name: "db/0", Kind: 2, Polys: 1, Limbs: 2, Data: l},
		&SendRequest{Program: "p", Inputs: []Binding{{Space: 2, ID: 1, Polys: 1, Limbs: 2, Source: SourceInline, Inline: l},
			{Space: 2, ID: 2, Polys: 1, Limbs: 2, Source: SourceStored, Name: "db/0", Poly: 0}},
			HasKey: true, Key: Binding{Space: 3, ID: 1, Polys: 2, Limbs: 3, Source: SourceResident, Job: 7},
			Output: Binding{Space: 2, ID: 3, Polys: 2, Limbs: 2}},
		&RecvResponse{Polys: 1, Data: l, MicroOps: 9},
		&ReleaseRequest{Jobs: []uint64{1, 2}},
		&ProgSetRequest{Name: "p", Program: []byte("RSMP....")},
		&StatsResponse{StoreBytesRead: 1},
		&GetRequest{Name: "x"},
	}
}

// Every message round-trips, and decoding a message re-encodes to the
// same bytes.
func TestWireRoundTrip(t *testing.T) {
	for _, m := range seeds() {
		b, err := marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range decoders() {
			if d.msgType() != m.msgType() {
				if unmarshal(b, d) == nil {
					t.Fatalf("message type %d decoded as type %d", m.msgType(), d.msgType())
				}
				continue
			}
			if err := unmarshal(b, d); err != nil {
				t.Fatalf("type %d: %v", m.msgType(), err)
			}
			b2, err := marshal(d)
			if err != nil || !bytes.Equal(b, b2) {
				t.Fatalf("type %d does not round-trip: %v", m.msgType(), err)
			}
			for cut := 0; cut < len(b); cut++ {
				if unmarshal(b[:cut], d) == nil {
					t.Fatalf("type %d: truncated to %d of %d bytes decoded", m.msgType(), cut, len(b))
				}
			}
		}
	}
}

// FuzzDecode feeds arbitrary bytes to every decoder: no panic, and
// whatever decodes re-encodes to the same bytes.
func FuzzDecode(f *testing.F) {
	for _, m := range seeds() {
		b, err := marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, d := range decoders() {
			if err := unmarshal(data, d); err != nil {
				continue
			}
			b, err := marshal(d)
			if err != nil {
				t.Fatalf("type %d decoded but does not encode: %v", d.msgType(), err)
			}
			if !bytes.Equal(b, data) {
				t.Fatalf("type %d: decode/encode changed the bytes", d.msgType())
			}
		}
	})
}
