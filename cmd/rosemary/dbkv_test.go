package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/client"
)

// rosemaryDB runs `rosemary db ARGS` in this process against the
// in-process device of a store directory and returns what it printed.
func rosemaryDB(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	saved := os.Stdout
	os.Stdout = out
	runErr := runDB(args)
	os.Stdout = saved
	b, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b), runErr
}

// dbJSON runs a db command with --json and decodes what it printed.
func dbJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	// --json before the other flags: a load's FILE ends them.
	out, err := rosemaryDB(t, append([]string{args[0], "--json"}, args[1:]...)...)
	if err != nil {
		t.Fatalf("db %s: %v", strings.Join(args, " "), err)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("db %s printed %q: %v", strings.Join(args, " "), out, err)
	}
}

// lookupJSON is what `db lookup --json` prints.
type lookupJSON struct {
	Key   string `json:"key"`
	Found bool   `json:"found"`
	Value []byte `json:"value"`
}

// The keyword database commands end to end, as a user types them: create
// --kind kv, load CSV (with a header) and JSONL, lookup --json of present
// and absent keys byte for byte, put, delete, compact; set on a PIR
// database; and a bad load named by its line.
func TestDBKeywordCommands(t *testing.T) {
	dir, db := dbStore(t)

	var in client.Info
	dbJSON(t, &in, db("create", "--name", "phones", "--kind", "kv", "--lwe-params", "test", "--insecure-params", "--max-value", "40", "--slot", "16")...)
	if in.Kind != client.KindKV || in.KV == nil || in.KV.Layout.MaxValue != 40 {
		t.Fatalf("create: %+v", in)
	}
	csv := filepath.Join(dir, "phones.csv")
	write(t, csv, "key,value\n+1-555-0100,Alice Example\n+1-555-0101,Bob\n+1-555-0102,\"quoted, with comma\"\n")
	dbJSON(t, &in, db("load", "--name", "phones", "--format", "csv", "--header", csv)...)
	if in.KV.Entries != 3 || in.Generation != 1 {
		t.Fatalf("load csv: %d entries, generation %d", in.KV.Entries, in.Generation)
	}
	lookup := func(name, key string, found bool, value string) {
		t.Helper()
		var r lookupJSON
		dbJSON(t, &r, db("lookup", "--name", name, "--kv-key", key)...)
		if r.Key != key || r.Found != found || string(r.Value) != value {
			t.Fatalf("lookup %q in %s: %+v, want found %v, %q", key, name, r, found, value)
		}
	}
	lookup("phones", "+1-555-0100", true, "Alice Example")
	lookup("phones", "+1-555-0102", true, "quoted, with comma")
	lookup("phones", "+1-555-0199", false, "")
	// Without --json an absent key is an error the caller can test.
	if _, err := rosemaryDB(t, db("lookup", "--name", "phones", "--kv-key", "+1-555-0199")...); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("lookup of an absent key without --json: %v, want ErrNotFound", err)
	}

	var u client.Update
	dbJSON(t, &u, db("put", "--name", "phones", "--kv-key", "+1-555-0199", "--value", "Carol")...)
	if u.DeltaOps != 1 {
		t.Fatalf("put: %+v", u)
	}
	dbJSON(t, &u, db("delete", "--name", "phones", "--kv-key", "+1-555-0101")...)
	if u.DeltaOps != 2 {
		t.Fatalf("delete: %+v", u)
	}
	lookup("phones", "+1-555-0199", true, "Carol")
	lookup("phones", "+1-555-0101", false, "")
	dbJSON(t, &in, db("compact", "--name", "phones")...)
	if in.Generation != 2 || in.Delta != nil || in.KV.Entries != 3 {
		t.Fatalf("compact: generation %d, delta %+v, %d entries", in.Generation, in.Delta, in.KV.Entries)
	}
	lookup("phones", "+1-555-0199", true, "Carol")
	lookup("phones", "+1-555-0101", false, "")
	lookup("phones", "+1-555-0100", true, "Alice Example")

	// JSONL, and a load that fails naming its line publishes nothing.
	jl := filepath.Join(dir, "more.jsonl")
	write(t, jl, "{\"key\": \"k1\", \"value\": \"v1\"}\n{\"key\": \"k2\", \"value\": \"\"}\n")
	dbJSON(t, &in, db("create", "--name", "more", "--kind", "kv", "--lwe-params", "test", "--insecure-params", "--max-value", "40", "--slot", "16")...)
	dbJSON(t, &in, db("load", "--name", "more", "--format", "jsonl", jl)...)
	if in.KV.Entries != 2 {
		t.Fatalf("load jsonl: %d entries", in.KV.Entries)
	}
	lookup("more", "k1", true, "v1")
	lookup("more", "k2", true, "")
	bad := filepath.Join(dir, "bad.jsonl")
	write(t, bad, "{\"key\": \"k3\", \"value\": \"v\"}\n{\"key\": \"k3\", \"value\": \"again\"}\n")
	if _, err := rosemaryDB(t, db("load", "--name", "more", "--format", "jsonl", bad)...); !errors.Is(err, client.ErrDuplicateKey) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("load with a duplicate key: %v, want ErrDuplicateKey naming line 2", err)
	}
	lookup("more", "k1", true, "v1")
	lookup("more", "k3", false, "")

	// set on a PIR database, visible to get, kept by compact.
	dbJSON(t, &in, db("create", "--name", "recs", "--kind", "pir", "--record-size", "8", "--lwe-params", "test", "--insecure-params")...)
	recs := filepath.Join(dir, "recs.bin")
	write(t, recs, "record-0record-1record-2record-3")
	dbJSON(t, &in, db("load", "--name", "recs", "--format", "fixed", recs)...)
	dbJSON(t, &u, db("set", "--name", "recs", "--index", "2", "--value", "changed")...)
	if u.DeltaOps != 1 {
		t.Fatalf("set: %+v", u)
	}
	get := func(i, want string) { t.Helper(); dbGet(t, db("get", "--name", "recs", "--index", i), want) }
	get("2", "changed\x00")
	get("3", "record-3")
	dbJSON(t, &in, db("compact", "--name", "recs")...)
	if in.Generation != 2 || in.Delta != nil {
		t.Fatalf("compact recs: %+v", in)
	}
	get("2", "changed\x00")
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// db append, as a user types it: --record values, a file of lines and
// standard input, each appended at the next indices and read back by
// get byte for byte; compact keeps them; a record longer than the
// database's is refused, naming the cause, and appends nothing.
func TestDBAppendCommand(t *testing.T) {
	dir, db := dbStore(t)
	var in client.Info
	dbJSON(t, &in, db("create", "--name", "recs", "--kind", "pir", "--record-size", "8", "--lwe-params", "test", "--insecure-params", "--lwe-mode", "packed")...)
	if !in.Matrix().Packed {
		t.Fatal("create --lwe-mode packed: the manifest does not store the packer")
	}
	recs := filepath.Join(dir, "recs.bin")
	write(t, recs, "record-0record-1record-2")
	dbJSON(t, &in, db("load", "--name", "recs", "--format", "fixed", recs)...)

	var a client.Appended
	dbJSON(t, &a, db("append", "--name", "recs", "--record", "app-3", "--record", "app-4")...)
	if a.First != 3 || a.Records != 5 || a.DeltaOps != 2 {
		t.Fatalf("append --record: %+v", a)
	}
	lines := filepath.Join(dir, "more.txt")
	write(t, lines, "line-5\nline-6\n")
	dbJSON(t, &a, db("append", "--name", "recs", lines)...)
	if a.First != 5 || a.Records != 7 {
		t.Fatalf("append FILE: %+v", a)
	}
	stdin := filepath.Join(dir, "stdin.bin")
	write(t, stdin, "stdin--7")
	f, err := os.Open(stdin)
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdin
	os.Stdin = f
	dbJSON(t, &a, db("append", "--name", "recs", "--format", "fixed", "-")...)
	os.Stdin = saved
	f.Close()
	if a.First != 7 || a.Records != 8 {
		t.Fatalf("append -: %+v", a)
	}
	get := func(i, want string) { t.Helper(); dbGet(t, db("get", "--name", "recs", "--index", i), want) }
	check := func() {
		t.Helper()
		get("1", "record-1")
		get("3", "app-3\x00\x00\x00")
		get("4", "app-4\x00\x00\x00")
		get("6", "line-6\x00\x00")
		get("7", "stdin--7")
	}
	check()
	if _, err := rosemaryDB(t, db("append", "--name", "recs", "--record", "far too long")...); !errors.Is(err, client.ErrRecordTooLarge) {
		t.Fatalf("append of a record too long: %v, want ErrRecordTooLarge", err)
	}
	if _, err := rosemaryDB(t, db("get", "--name", "recs", "--index", "8")...); !errors.Is(err, client.ErrIndexOutOfRange) {
		t.Fatalf("get past the appended records: %v", err)
	}
	dbJSON(t, &in, db("compact", "--name", "recs")...)
	if in.Generation != 2 || in.Delta != nil || in.Records != 8 {
		t.Fatalf("compact: generation %d, delta %+v, %d records", in.Generation, in.Delta, in.Records)
	}
	check()
}

// dbGet runs a db get with --json and checks the record byte for byte.
func dbGet(t *testing.T, args []string, want string) {
	t.Helper()
	var r struct {
		Record []byte `json:"record"`
	}
	dbJSON(t, &r, args...)
	if !bytes.Equal(r.Record, []byte(want)) {
		t.Fatalf("%s: %q, want %q", strings.Join(args, " "), r.Record, want)
	}
}

// dbStore makes a key set and a store directory in a fresh directory; db
// builds a db command's arguments on them.
func dbStore(t *testing.T) (dir string, db func(cmd string, args ...string) []string) {
	t.Helper()
	dir = t.TempDir()
	keys, st := filepath.Join(dir, "keys"), filepath.Join(dir, "store")
	if _, err := rosemaryDB(t, "keys", "--keys", keys); err != nil {
		t.Fatal(err)
	}
	at := []string{"--store", st, "--keys", keys}
	return dir, func(cmd string, args ...string) []string { return append(append([]string{cmd}, at...), args...) }
}

// `db get --lwe-mode packed` reads the loaded records and an appended one
// in the packed mode; ring and packed gets of one database agree; an
// unknown mode is refused.
func TestDBGetPackedMode(t *testing.T) {
	dir, db := dbStore(t)
	var in client.Info
	dbJSON(t, &in, db("create", "--name", "recs", "--kind", "pir", "--record-size", "8", "--lwe-params", "test", "--insecure-params")...)
	recs := filepath.Join(dir, "recs.bin")
	write(t, recs, "record-0record-1record-2")
	dbJSON(t, &in, db("load", "--name", "recs", "--format", "fixed", recs)...)
	var a client.Appended
	dbJSON(t, &a, db("append", "--name", "recs", "--record", "app-3")...)
	for i, want := range []string{"record-0", "record-1", "record-2", "app-3\x00\x00\x00"} {
		dbGet(t, db("get", "--name", "recs", "--lwe-mode", "packed", "--index", strconv.Itoa(i)), want)
		dbGet(t, db("get", "--name", "recs", "--index", strconv.Itoa(i)), want)
	}
	if _, err := rosemaryDB(t, db("get", "--name", "recs", "--lwe-mode", "fast", "--index", "0")...); err == nil {
		t.Fatal("an unknown --lwe-mode was accepted")
	}
}
