package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/kv"
	"github.com/rosemary-fhe/rosemary/cluster"
)

// clusterKVFlags are the flags of keyword databases on a cluster.
type clusterKVFlags struct {
	key, value, valueFile, lweParams *string
	maxValue, slot, deltaMax         *int
	compactAt                        *int
	header, noCompact, insecure      *bool
}

func addClusterKVFlags(f *dbFlags, cmd string) *clusterKVFlags {
	k := &clusterKVFlags{key: new(string),
		value:     f.fs.String("value", "", "put: the value (or --value-file)"),
		valueFile: f.fs.String("value-file", "", "put: read the value from this file"),
		lweParams: f.fs.String("lwe-params", "", "create kv: LWE parameter set (default; test is small and insecure, refused without --insecure-params)"),
		insecure:  f.fs.Bool("insecure-params", false, "create kv: allow a parameter set marked insecure (tests only)"),
		maxValue:  f.fs.Int("max-value", client.DefaultMaxValue, "create kv: the largest value (every lookup reads as much)"),
		slot:      f.fs.Int("slot", 0, "create kv: value bytes per bucket slot (0: chosen)"),
		deltaMax:  f.fs.Int("delta-max", 0, fmt.Sprintf("create kv: bound on the delta of updates, bytes (0: %d, the most: one etcd request)", cluster.MaxKVDelta)),
		compactAt: f.fs.Int("compact-at", 0, "create kv: delta size at which an update compacts (0: half of --delta-max)"),
		header:    f.fs.Bool("header", false, "load kv csv: skip the first row"),
		noCompact: f.fs.Bool("no-compact", false, "put, delete: do not compact when the update leaves the delta at the compaction size"),
	}
	if cmd == "lookup" || cmd == "put" || cmd == "delete" {
		k.key = f.fs.String("kv-key", "", "the keyword database's key to look up, put or delete")
	}
	return k
}

// runDBClusterKV runs the db commands of a cluster's keyword databases;
// ok is false for another command (or a load of another kind).
func runDBClusterKV(ctx context.Context, cmd string, f *dbFlags, c *cluster.Client, k *clusterKVFlags, kind string, shards, replicas int, format string) (ok bool, err error) {
	switch cmd {
	case "create":
		if kind != "kv" {
			return false, nil
		}
		m, err := c.CreateKV(ctx, *f.name, shards, replicas, client.KVOptions{MaxValue: *k.maxValue, SlotData: *k.slot, LWEParams: *k.lweParams, InsecureParams: *k.insecure,
			DeltaMax: *k.deltaMax, CompactAt: *k.compactAt})
		if err != nil {
			return true, err
		}
		return true, f.print(m, fmt.Sprintf("created kv %q: %d shards × %d replicas, values up to %d B", m.Name, len(m.Shards), m.Replicas, m.KV.MaxValue))
	case "load":
		m, err := c.Info(ctx, *f.name)
		if err != nil || m.Kind != client.KindKV {
			return false, nil
		}
		if f.fs.NArg() != 1 {
			return true, errors.New("db load: one input FILE is required")
		}
		if format == "" {
			format = kvFormatOf(f.fs.Arg(0))
		}
		kf, err := kv.ParseFormat(format)
		if err != nil {
			return true, err
		}
		file, err := os.Open(f.fs.Arg(0))
		if err != nil {
			return true, err
		}
		defer file.Close()
		if m, err = c.LoadKV(ctx, *f.name, file, kf, *k.header); err != nil {
			return true, err
		}
		return true, f.print(m, fmt.Sprintf("loaded %d keys into %q: generation %d, %d buckets over %d shards", m.Entries, m.Name, m.Generation, m.Records, len(m.Shards)))
	case "lookup":
		if !flagSet(f, "kv-key") {
			return true, errors.New("db lookup: --kv-key is required")
		}
		r, err := c.LookupMany(ctx, *f.name, [][]byte{[]byte(*k.key)})
		if err != nil {
			return true, err
		}
		if !*f.json && !r[0].Found {
			return true, fmt.Errorf("%w: %q in %s", client.ErrNotFound, *k.key, *f.name)
		}
		return true, f.print(map[string]any{"key": *k.key, "found": r[0].Found, "value": r[0].Value, "seconds": r[0].Seconds},
			fmt.Sprintf("%s: %q (%d queries per shard, %.3f s)", *k.key, r[0].Value, r[0].Queries, r[0].Seconds))
	case "put", "delete":
		if !flagSet(f, "kv-key") {
			return true, fmt.Errorf("db %s: --kv-key is required", cmd)
		}
		var u *client.Update
		if cmd == "put" {
			val := []byte(*k.value)
			if *k.valueFile != "" {
				if val, err = os.ReadFile(*k.valueFile); err != nil {
					return true, err
				}
			}
			u, err = c.Put(ctx, *f.name, []byte(*k.key), val)
		} else {
			u, err = c.Delete(ctx, *f.name, []byte(*k.key))
		}
		if err != nil {
			return true, err
		}
		text := fmt.Sprintf("%s %q: delta of %d changes, %d B", cmd, *f.name, u.DeltaOps, u.DeltaBytes)
		if u.CompactDue && !*k.noCompact {
			m, err := c.Compact(ctx, *f.name)
			if err != nil {
				return true, fmt.Errorf("db %s: the update is in; compaction (due) failed: %w", cmd, err)
			}
			text += fmt.Sprintf("; compacted into generation %d", m.Generation)
		}
		return true, f.print(u, text)
	case "compact":
		m, err := c.Compact(ctx, *f.name)
		if err != nil {
			return true, err
		}
		return true, f.print(m, fmt.Sprintf("compacted %q: generation %d, %d keys", m.Name, m.Generation, m.Entries))
	}
	return false, nil
}
