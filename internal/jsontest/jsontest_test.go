package jsontest

import (
	"reflect"
	"testing"
)

// A pointer to a struct comes back as a new pointer to an equal struct.
func TestRoundTripPointer(t *testing.T) {
	type report struct {
		Name   string
		Values []float64
	}
	in := &report{Name: "r", Values: []float64{1, 2.5}}
	out := RoundTrip(t, in)
	if out == in || !reflect.DeepEqual(out, in) {
		t.Fatalf("round trip gave %+v (same pointer %v), want a copy of %+v", out, out == in, in)
	}
}
