package store

import "testing"

// HoldsHead answers from the index: a name's first segment exactly
// ("acct" is not "acct2"), kept through puts, replacements, deletes and a
// reopen.
func TestHoldsHead(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	mustPut(t, s, "acct/a", 1)
	mustPut(t, s, "acct/a", 2) // a replacement is not another object
	mustPut(t, s, "acct2/b", 3)
	mustPut(t, s, "solo", 4)
	want := func(s *Store, head string, held bool) {
		t.Helper()
		if got, err := s.HoldsHead(head); err != nil || got != held {
			t.Fatalf("HoldsHead(%q) = %v, %v; want %v", head, got, err, held)
		}
	}
	want(s, "acct", true)
	want(s, "acct2", true)
	want(s, "acc", false)
	want(s, "solo", true)
	if err := s.Delete("acct/a"); err != nil {
		t.Fatal(err)
	}
	want(s, "acct", false)
	want(s, "acct2", true)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, dir)
	defer s.Close()
	want(s, "acct", false)
	want(s, "acct2", true)
	want(s, "solo", true)
}
