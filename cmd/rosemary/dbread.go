package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
)

// The db commands that read: get, lookup, nearest, info.

// dbGetRecord reads one record privately (`rosemary db get`).
func dbGetRecord(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	index := f.fs.Int("index", -1, "record index")
	st, err := f.parseOpen(ctx, args)
	if err != nil {
		return err
	}
	defer st.Close()
	r, err := st.PIR(*f.name).Get(ctx, *index)
	if err != nil {
		return err
	}
	how := "payloads"
	if r.Measured {
		how = "on the connection"
	}
	return f.print(r, fmt.Sprintf("record %d: %q (%d B query up, %d B answer down, %s; %.2f s)", *index, strings.TrimRight(string(r.Data), "\x00"),
		r.QueryBytes, r.AnswerBytes, how, r.Seconds))
}

// dbLookup reads a keyword database's value privately (`rosemary db
// lookup`); without --json an absent key is an error (client.ErrNotFound).
func dbLookup(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	key := f.fs.String("kv-key", "", "the keyword database's key to look up")
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	if !flagSet(f, "kv-key") {
		return errors.New("db lookup: --kv-key is required")
	}
	st, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	rs, err := st.KV(*f.name).LookupMany(ctx, [][]byte{[]byte(*key)})
	if err != nil {
		return err
	}
	r := rs[0]
	if !*f.json && !r.Found {
		return fmt.Errorf("%w: %q in %s", client.ErrNotFound, *key, *f.name)
	}
	out := map[string]any{"key": *key, "found": r.Found, "value": r.Value, "queries": r.Queries, "query_bytes": r.QueryBytes,
		"answer_bytes": r.AnswerBytes, "seconds": r.Seconds}
	return f.print(out, fmt.Sprintf("%s: %q (%d queries, %d B up, %d B down, %d B manifest, %d B delta, %.3f s)", *key, r.Value,
		r.Queries, r.QueryBytes, r.AnswerBytes, r.ManifestBytes, r.DeltaBytes, r.Seconds))
}

// dbNearest finds each query vector's nearest stored vectors (`rosemary db nearest`).
func dbNearest(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	query := f.fs.String("query", "", "query vectors: a .fvecs, .bvecs or .npy file (one result per vector)")
	k := f.fs.Int("k", 10, "neighbours per query")
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	if *query == "" {
		return errors.New("db nearest: --query FILE is required")
	}
	vr, closer, err := dataset.OpenVectors(*query)
	if err != nil {
		return err
	}
	defer closer.Close()
	st, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	db := st.Vectors(*f.name)
	var results []*client.Neighbors
	for {
		q, err := vr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		res, err := db.Nearest(ctx, q, *k)
		if err != nil {
			return fmt.Errorf("db nearest: query %d: %w", len(results), err)
		}
		results = append(results, res)
	}
	if len(results) == 0 {
		return errors.New("db nearest: no query vectors in " + *query)
	}
	var lines []string
	for i, res := range results {
		lines = append(lines, fmt.Sprintf("query %d: ids %v, scores %.4g", i, res.IDs, res.Scores))
	}
	return f.print(map[string]any{"results": results, "provenance": "encrypted query, scores computed on the device, ranked here"},
		strings.Join(lines, "\n"))
}

// dbInfo describes a database (`rosemary db info`).
func dbInfo(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	st, err := f.parseOpen(ctx, args)
	if err != nil {
		return err
	}
	defer st.Close()
	d, err := st.Info(ctx, *f.name)
	if err != nil {
		return err
	}
	return f.print(d, describe(d))
}
