package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/programs"
	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/tools/report"
)

func init() {
	register(command{name: "db", summary: "private databases of your own data (records sealed, queries encrypted): keys|create|load|get|nearest|info|drop", run: runDB})
}

const dbUsage = `usage: rosemary db keys|trust|create|load|get|lookup|put|delete|set|compact|nearest|info|drop|grant|revoke [flags]
  rosemary db keys    --keys DIR
  rosemary db trust   --keys DIR --owner IDENTITY --owner-key THEIR/owner.pub   (accept grants that owner signs)
  rosemary db create  (--store DIR | --device ADDR) --keys DIR --name NAME --kind pir --record-size B [--log-cols N]
  rosemary db create  (--store DIR | --device ADDR) --keys DIR --name NAME --kind vectors --dim D [--metric l2|ip] [--encrypt-vectors]
  rosemary db load    (--store DIR | --device ADDR) --keys DIR --name NAME [--format fixed|lines|csv] [--column C] [--header] FILE
                      (vectors: FILE.fvecs, .bvecs or .npy)
  rosemary db create  (--store DIR | --device ADDR) --keys DIR --name NAME --kind kv [--max-value B] [--slot B] [--kv-layout auto|cuckoo|heap] [--heap-rows B] [--delta-max B] [--compact-at B]
  rosemary db load    ... --name KV [--format csv|jsonl] [--header] FILE     (kv: key, value per row)
  rosemary db get     (--store DIR | --device ADDR) --keys DIR --name NAME --index I
  rosemary db lookup  (--store DIR | --device ADDR) --keys DIR --name KV --kv-key K
  rosemary db put     (--store DIR | --device ADDR) --keys DIR --name KV --kv-key K (--value V | --value-file F) [--no-compact]
  rosemary db delete  (--store DIR | --device ADDR) --keys DIR --name KV --kv-key K [--no-compact]
  rosemary db set     (--store DIR | --device ADDR) --keys DIR --name PIR --index I (--value V | --value-file F) [--no-compact]
  rosemary db append  (--store DIR | --device ADDR) --keys DIR --name PIR (--record R ... | [--format fixed|lines|csv] [--column C] [--header] FILE|-) [--no-compact]
  rosemary db compact (--store DIR | --device ADDR) --keys DIR --name NAME   (fold the delta into a new generation)
  rosemary db nearest (--store DIR | --device ADDR) --keys DIR --name NAME --query Q.fvecs|.bvecs|.npy [--k 10]
  rosemary db info    (--store DIR | --device ADDR) --keys DIR --name NAME
  rosemary db drop    (--store DIR | --device ADDR) --keys DIR --name NAME
  rosemary db grant   --device ADDR --keys DIR --name NAME --to IDENTITY [--role reader|owner] --member-key THEIR/member.pub
  rosemary db revoke  --device ADDR --keys DIR --name NAME --to IDENTITY
  on a cluster: --cluster ADDR (or --etcd) in place of --device, [--shards S --replicas R] at create; every command
              but set, append, compact of a pir database, grant and revoke (a cluster's pir databases are reloaded whole)
every command takes --json; --key is always the client certificate's key, --kv-key a keyword database's key`

// dbFlags are the flags every db command shares.
type dbFlags struct {
	fs      *flag.FlagSet
	store   *string
	device  *string
	cluster *string
	etcd    *string
	keys    *string
	name    *string
	json    *bool
	lweMode *string
	tls     *transportFlags
}

func newDBFlags(cmd string) *dbFlags {
	fs := flag.NewFlagSet("db "+cmd, flag.ContinueOnError)
	return &dbFlags{fs: fs,
		store:   fs.String("store", "", "store directory of an in-process device"),
		device:  fs.String("device", "", "address of a device daemon (rosemary device serve)"),
		cluster: fs.String("cluster", "", "etcd address(es) of a cluster (rosemary cluster up), comma-separated: databases sharded over its devices"),
		etcd:    fs.String("etcd", "", "the same as --cluster"),
		keys:    fs.String("keys", "", "key directory (made by `rosemary db keys`)"),
		name:    fs.String("name", "", "database name"),
		json:    fs.Bool("json", false, "print JSON"),
		lweMode: fs.String("lwe-mode", "packed", "LWE databases: packed (create: generations store the packer only; queries carry their packing keys, a 9.5 KB answer) or ring (create: generations store the hint diagonals only; queries use H·s on the device, Galois keys uploaded once). Queries follow what a generation stores; this chooses only where it stores both"),
		tls:     addTransportFlags(fs),
	}
}

// parseOpen parses args and opens the store the flags name.
func (f *dbFlags) parseOpen(ctx context.Context, args []string) (client.Store, error) {
	if err := f.fs.Parse(args); err != nil {
		return nil, err
	}
	return f.open(ctx)
}

// open loads the keys and opens the store the flags name: an in-process
// device over a store directory, a device daemon, or a cluster.
func (f *dbFlags) open(ctx context.Context) (client.Store, error) {
	if *f.keys == "" {
		return nil, errors.New("db: --keys is required")
	}
	if *f.name == "" {
		return nil, errors.New("db: --name is required")
	}
	keys, err := client.LoadKeys(*f.keys)
	if err != nil {
		return nil, err
	}
	mode, err := client.ParseLWEMode(*f.lweMode)
	if err != nil {
		return nil, fmt.Errorf("db: --lwe-mode: %w", err)
	}
	endpoints := cmp.Or(*f.cluster, *f.etcd)
	given := 0
	for _, s := range []string{*f.store, *f.device, endpoints} {
		if s != "" {
			given++
		}
	}
	switch {
	case given > 1:
		return nil, errors.New("db: give one of --store, --device and --cluster")
	case *f.store != "":
		return openStoreDir(*f.store, keys, mode)
	case *f.device != "":
		dial, err := f.tls.dialOptions()
		if err != nil {
			return nil, err
		}
		c, err := client.Open(ctx, *f.device, keys, dial...)
		if err != nil {
			return nil, err
		}
		c.SetLWEMode(mode)
		return client.NewStore(c.WithPrograms(programs.New())), nil
	case endpoints != "":
		return f.openCluster(ctx, endpoints, keys)
	}
	return nil, errors.New("db: --store DIR, --device ADDR or --cluster ADDR is required")
}

// openCluster opens the cluster whose etcd endpoints are given.
func (f *dbFlags) openCluster(ctx context.Context, endpoints string, keys *client.Keys) (client.Store, error) {
	dial, err := f.tls.dialOptions()
	if err != nil {
		return nil, err
	}
	ec, err := f.tls.etcd(endpoints)
	if err != nil {
		return nil, err
	}
	c, err := cluster.Open(ctx, ec, keys, dial...)
	if err != nil {
		return nil, err
	}
	c.Programs = programs.New()
	return cluster.NewStore(c), nil
}

// dirStore is the store of an in-process device, with the store directory
// closing it must also close.
type dirStore struct {
	client.Store
	dir *store.Store
}

// openStoreDir opens (or creates) the store directory dir and runs a
// device over it in this process.
func openStoreDir(dir string, keys *client.Keys, mode client.LWEMode) (*dirStore, error) {
	st, err := store.Open(dir, layout.Layout{})
	if err != nil {
		return nil, err
	}
	d, err := device.New(st, device.DefaultLimits())
	if err != nil {
		st.Close()
		return nil, err
	}
	c := client.New(d, keys).WithPrograms(programs.New())
	c.SetLWEMode(mode)
	return &dirStore{Store: client.NewStore(c), dir: st}, nil
}

// Close closes the client, then the in-process device's store.
func (s *dirStore) Close() error { return errors.Join(s.Store.Close(), s.dir.Close()) }

// sharer is the store as a Sharer, if it is one (one device's).
func sharer(st client.Store) (client.Sharer, bool) {
	if d, ok := st.(*dirStore); ok {
		st = d.Store
	}
	s, ok := st.(client.Sharer)
	return s, ok
}

func (f *dbFlags) print(v any, text string) error {
	if *f.json {
		return printJSON(v)
	}
	fmt.Println(text)
	return nil
}

func runDB(args []string) error {
	if len(args) == 0 {
		return errors.New(dbUsage)
	}
	ctx, stop := untilInterrupted()
	defer stop()
	cmd, args := args[0], args[1:]
	run, ok := dbCommands[cmd]
	if !ok {
		return errors.New(dbUsage)
	}
	return run(ctx, cmd, newDBFlags(cmd), args)
}

// dbCommands are the db subcommands: each one runs on a Store, one
// device's or a cluster's, but keys and trust, which touch only the key
// directory.
var dbCommands = map[string]func(ctx context.Context, cmd string, f *dbFlags, args []string) error{
	"keys":    dbKeys,
	"trust":   dbTrust,
	"create":  dbCreate,
	"load":    dbLoad,
	"get":     dbGetRecord,
	"lookup":  dbLookup,
	"put":     dbChange,
	"delete":  dbChange,
	"set":     dbChange,
	"append":  dbAppend,
	"compact": dbCompact,
	"nearest": dbNearest,
	"info":    dbInfo,
	"drop":    dbDrop,
	"grant":   dbGrant,
	"revoke":  dbGrant,
}

// describe is one line about a database, as one device or a cluster
// describes it.
func describe(d client.Description) string {
	switch in := d.(type) {
	case *client.Info:
		line := fmt.Sprintf("%s: %s database, %s, generation %d", in.Name, in.Kind, describePart(in.Header, in.Parts), in.Generation)
		if in.Delta != nil {
			line += fmt.Sprintf(", %d changes in the delta", in.Delta.Ops)
		}
		if m := in.Matrix(); m != nil && m.Rows > 0 {
			line += fmt.Sprintf(", %d × %d matrix", m.Rows, m.Cols)
		}
		what := "preset " + in.Preset
		if m := in.Matrix(); m != nil && m.Scheme == client.SchemeLWE {
			what = "scheme lwe, parameters " + m.LWEParams
		}
		return fmt.Sprintf("%s, %s stored, %s", line, report.Bytes(in.Bytes), what)
	case *cluster.Map:
		return fmt.Sprintf("%s: %s database on a cluster, %s, generation %d, %d shards × %d replicas", in.Name, in.Kind, describePart(in.Header, in.Parts), in.Generation, len(in.Shards), in.Replicas)
	}
	h := d.Head()
	return fmt.Sprintf("%s: %s database, %d records, generation %d", h.Name, h.Kind, h.Records, h.Generation)
}

// describePart says what a database holds, from its kind's part.
func describePart(h client.Header, p client.Parts) string {
	switch {
	case p.KV != nil:
		l := p.KV.Layout
		if hp := p.KV.Heap; hp != nil {
			return fmt.Sprintf("%d keys, values up to %d B in a heap of %d columns of %d B (%d B used), an index of %d buckets of %d slots",
				p.KV.Entries, hp.Heap.MaxValue, hp.Heap.Columns, hp.Heap.Payload, hp.Heap.Bytes, h.Records, hp.Index.Slots)
		}
		return fmt.Sprintf("%d keys, values up to %d B in slots of %d B, %d buckets of %d slots", p.KV.Entries, l.MaxValue, l.SlotData, h.Records, l.Slots)
	case p.Vectors != nil:
		return fmt.Sprintf("%d vectors of %d dimensions (%s)", h.Records, p.Vectors.Dim, p.Vectors.Metric)
	case p.PIR != nil:
		return fmt.Sprintf("%d records of %d B", h.Records, p.PIR.RecordSize)
	}
	return fmt.Sprintf("%d records", h.Records)
}

// flagSet reports whether the flag was given (an empty key is a key).
func flagSet(f *dbFlags, name string) bool {
	set := false
	f.fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}

// stringList is a flag given any number of times.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }
