package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/client/kv"
)

// runDBUpdate runs the db commands of keyword databases and of updates
// without a reload: lookup, put, delete, set, append, compact. ok is
// false for another command.
func runDBUpdate(ctx context.Context, cmd string, f *dbFlags, args []string) (ok bool, err error) {
	switch cmd {
	case "lookup", "put", "delete", "set", "append", "compact":
	default:
		return false, nil
	}
	key := new(string)
	if cmd == "lookup" || cmd == "put" || cmd == "delete" {
		key = f.fs.String("kv-key", "", "the keyword database's key to look up, put or delete")
	}
	value := f.fs.String("value", "", "put, set: the value (or --value-file)")
	valueFile := f.fs.String("value-file", "", "put, set: read the value from this file")
	index := f.fs.Int("index", -1, "set: record index of a pir database")
	noCompact := f.fs.Bool("no-compact", false, "put, delete, set, append: do not compact when the update leaves the delta at the database's compaction size")
	var records stringList
	f.fs.Var(&records, "record", "append: a record (repeat for more; or give FILE, - for standard input)")
	format := f.fs.String("format", "", "append FILE: fixed (records back to back), lines (one per line) or csv (one column); default by extension: .csv csv, .txt lines, else fixed")
	column := f.fs.Int("column", 0, "append, csv: column of the records (0-based)")
	header := f.fs.Bool("header", false, "append, csv: skip the first row")
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
	needKey := func() error { return needKVKey(f, cmd) }
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
	case "append":
		a, err := appendRecords(ctx, c.Client, *f.name, records, f.fs.Args(), *format, *column, *header)
		if err != nil {
			return true, err
		}
		text := fmt.Sprintf("appended %d records to %q: indices %d..%d, delta of %d changes, %d B", a.Records-a.First, *f.name, a.First, a.Records-1, a.DeltaOps, a.DeltaBytes)
		if a.CompactDue && !*noCompact {
			in, err := c.Compact(ctx, *f.name)
			if err != nil {
				return true, fmt.Errorf("db append: the records are in; compaction (due) failed: %w", err)
			}
			text += fmt.Sprintf("; compacted into generation %d", in.Generation)
		}
		return true, f.print(a, text)
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
// needKVKey says a keyword command needs its --kv-key.
func needKVKey(f *dbFlags, cmd string) error {
	if !flagSet(f, "kv-key") {
		return fmt.Errorf("db %s: --kv-key is required", cmd)
	}
	return nil
}

func flagSet(f *dbFlags, name string) bool {
	set := false
	f.fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}

// appendRecords appends the --record values, or the records of the one
// input FILE (- for standard input) in a format db load takes.
func appendRecords(ctx context.Context, c *client.Client, name string, records []string, args []string, format string, column int, header bool) (*client.Appended, error) {
	switch {
	case len(records) > 0 && len(args) > 0:
		return nil, errors.New("db append: give --record or an input FILE, not both")
	case len(records) > 0:
		recs := make([][]byte, len(records))
		for i, r := range records {
			recs[i] = []byte(r)
		}
		return c.Append(ctx, name, recs...)
	case len(args) != 1:
		return nil, errors.New("db append: --record, or one input FILE (or - for standard input), is required")
	}
	path := args[0]
	if format == "" {
		format = recordFormatOf(path)
	}
	rf, err := dataset.ParseRecordFormat(format)
	if err != nil {
		return nil, err
	}
	var r io.Reader = os.Stdin
	if path != "-" {
		file, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer file.Close()
		r = file
	}
	return c.AppendFrom(ctx, name, r, client.LoadOptions{Records: rf, Column: column, Header: header})
}

// recordFormatOf is the record format a PIR input's extension names:
// .csv csv, .txt lines, else fixed.
// loadFormatUsage is --format's meaning on every db load, one device or a
// cluster.
const loadFormatUsage = "pir input: fixed (records back to back), lines (one per line) or csv (one column); default by extension: .csv csv, .txt lines, else fixed; " +
	"kv input: csv (key, value) or jsonl ({\"key\": …, \"value\": …} per line), default by extension: .jsonl jsonl, else csv"

// kvFormatOf is a keyword load's input format by its file's extension.
func kvFormatOf(path string) string {
	if strings.ToLower(filepath.Ext(path)) == ".jsonl" {
		return string(kv.JSONL)
	}
	return string(kv.CSV)
}

func recordFormatOf(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return "csv"
	case ".txt":
		return "lines"
	}
	return "fixed"
}

// stringList is a flag given any number of times.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }
