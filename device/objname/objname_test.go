package objname

import (
	"errors"
	"testing"
)

// The names are a stored format: these are the exact strings devices hold
// today, so a change here is a migration, not a refactor.
func TestNamesAreTheStoredOnes(t *testing.T) {
	for got, want := range map[string]string{
		Manifest("acct"):                          "acct/head",
		Fence("acct"):                             "acct/head.fence",
		Member("acct", "bob"):                     "acct/members/bob/",
		Grant("acct", "bob", "00ff"):              "acct/members/bob/grant.00ff",
		Keys("acct", "bob", "k1"):                 "acct/members/bob/keys/k1",
		LWEKeys("acct/members/bob/keys/k1", "ab"): "acct/members/bob/keys/k1/lwe-ab/",
		Delta("acct"):                             "acct/delta/",
		Generation("acct", 3, "beef"):             "acct/g3.beef",
		Generation("acct", 3, ""):                 "acct/g3",
		LWETiles("acct/g3.beef"):                  "acct/g3.beef/lwe/t",
		LWEDiagonals("acct/g3.beef"):              "acct/g3.beef/lwe/d",
		LWEPacker("acct/g3.beef"):                 "acct/g3.beef/lwe/p",
		Stored("acct/g3.beef/lwe/t", 12):          "acct/g3.beef/lwe/t000012",
		ACL("acct"):                               "_acl/acct",
	} {
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}

func TestGenerationOf(t *testing.T) {
	for object, want := range map[string]int64{
		"acct/g3.beef/lwe/t000001": 3,
		"acct/g12/pt/0":            12,
		"acct/g/x":                 -1,
		"acct/gx.1/x":              -1,
		"acct2/g3.beef/x":          -1, // another database
		"acct/head":                -1,
	} {
		g, ok := GenerationOf("acct", object)
		if (want < 0) == ok || ok && int64(g) != want {
			t.Errorf("GenerationOf(acct, %q) = %d, %v; want %d", object, g, ok, want)
		}
	}
}

// A database is named by the part before the first '/', which must be
// there: "acct" names no object of "acct2".
func TestDatabase(t *testing.T) {
	if db, err := Database("acct/members/bob/grant.1"); err != nil || db != "acct" {
		t.Fatalf("Database = %q, %v", db, err)
	}
	for _, bad := range []string{"", "acct", "/x", "_acl/acct"} {
		if _, err := Database(bad); !errors.Is(err, ErrNoDatabase) && !errors.Is(err, ErrReserved) {
			t.Errorf("Database(%q) = %v, want a named error", bad, err)
		}
	}
}
