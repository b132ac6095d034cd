// Package jsontest is test support only: it checks that a value survives
// encoding/json, as the programs, plans and reports that the tools write
// as JSON must. It imports no Rosemary package, so that any package's tests
// may use it; production code must not.
package jsontest

import (
	"encoding/json"
	"testing"
)

// RoundTrip encodes v as JSON and decodes the result into a fresh value of
// the same type, failing t if either step errs; the caller compares what
// came back with what it needs.
func RoundTrip[T any](t testing.TB, v T) T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back T
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back
}
