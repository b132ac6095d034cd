package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/rosemary-fhe/rosemary/client"
)

// runDBUpdate runs the db commands of keyword databases and of updates
// without a reload: lookup, put, delete, set, compact. ok is false for
// another command.
func runDBUpdate(ctx context.Context, cmd string, f *dbFlags, args []string) (ok bool, err error) {
	switch cmd {
	case "lookup", "put", "delete", "set", "compact":
	default:
		return false, nil
	}
	key := new(string)
	if certKeyFlag(cmd) == "cert-key" {
		key = f.fs.String("key", "", "the key (the certificate's key is --cert-key here)")
	}
	value := f.fs.String("value", "", "put, set: the value (or --value-file)")
	valueFile := f.fs.String("value-file", "", "put, set: read the value from this file")
	index := f.fs.Int("index", -1, "set: record index of a pir database")
	noCompact := f.fs.Bool("no-compact", false, "put, delete, set: do not compact when the update leaves the delta at the database's compaction size")
	c, err := f.parseOpen(ctx, args)
	if err != nil {
		return true, err
	}
	defer c.Close()
	val := []byte(*value)
	if *valueFile != "" {
		if val, err = os.ReadFile(*valueFile); err != nil {
			return true, err
		}
	}
	needKey := func() error {
		if !flagSet(f, "key") {
			return fmt.Errorf("db %s: --key is required", cmd)
		}
		return nil
	}
	var u *client.Update
	switch cmd {
	case "lookup":
		if err := needKey(); err != nil {
			return true, err
		}
		r, err := c.LookupMany(ctx, *f.name, [][]byte{[]byte(*key)})
		if err != nil {
			return true, err
		}
		out := map[string]any{"key": *key, "found": r[0].Found, "value": r[0].Value}
		if !*f.json && !r[0].Found {
			return true, fmt.Errorf("%w: %q in %s", client.ErrNotFound, *key, *f.name)
		}
		return true, f.print(out, fmt.Sprintf("%s: %q (%d queries, %d B up, %d B down, %d B manifest, %d B delta)", *key, r[0].Value,
			r[0].Queries, r[0].QueryBytes, r[0].AnswerBytes, r[0].ManifestBytes, r[0].DeltaBytes))
	case "put":
		if err := needKey(); err != nil {
			return true, err
		}
		u, err = c.Put(ctx, *f.name, []byte(*key), val)
	case "delete":
		if err := needKey(); err != nil {
			return true, err
		}
		u, err = c.Delete(ctx, *f.name, []byte(*key))
	case "set":
		if *index < 0 {
			return true, errors.New("db set: --index is required")
		}
		u, err = c.Set(ctx, *f.name, *index, val)
	case "compact":
		in, err := c.Compact(ctx, *f.name)
		if err != nil {
			return true, err
		}
		return true, f.print(in, fmt.Sprintf("compacted %q: generation %d, %d records", in.Name, in.Generation, in.Records))
	}
	if err != nil {
		return true, err
	}
	text := fmt.Sprintf("%s %q: delta of %d changes, %d B", cmd, *f.name, u.DeltaOps, u.DeltaBytes)
	if u.CompactDue && !*noCompact {
		in, err := c.Compact(ctx, *f.name)
		if err != nil {
			return true, fmt.Errorf("db %s: the update is in; compaction (due) failed: %w", cmd, err)
		}
		text += fmt.Sprintf("; compacted into generation %d", in.Generation)
	}
	return true, f.print(u, text)
}

// flagSet reports whether the flag was given (an empty key is a key).
func flagSet(f *dbFlags, name string) bool {
	set := false
	f.fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}
