package main

import (
	"cmp"
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
	"github.com/rosemary-fhe/rosemary/client/programs"
	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/authz"
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
  rosemary db create  (--store DIR | --device ADDR) --keys DIR --name NAME --kind pir --record-size B
  rosemary db create  (--store DIR | --device ADDR) --keys DIR --name NAME --kind vectors --dim D [--metric l2|ip] [--encrypt-vectors]
  rosemary db load    (--store DIR | --device ADDR) --keys DIR --name NAME [--format fixed|lines|csv] [--column C] [--header] FILE
                      (vectors: FILE.fvecs, .bvecs or .npy)
  rosemary db create  (--store DIR | --device ADDR) --keys DIR --name NAME --kind kv [--max-value B] [--slot B] [--delta-max B] [--compact-at B]
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
  on a cluster: --etcd ADDR (or --cluster) in place of --device, [--shards S --replicas R] at create;
              create (pir, kv, vectors), load, get, lookup, put, delete, compact, nearest, info
every command takes --json`

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
	tls     *transportFlags
}

func newDBFlags(cmd string) *dbFlags {
	fs := flag.NewFlagSet("db "+cmd, flag.ContinueOnError)
	return &dbFlags{fs: fs,
		store:   fs.String("store", "", "store directory of an in-process device"),
		device:  fs.String("device", "", "address of a device daemon (rosemary device serve)"),
		cluster: fs.String("cluster", "", "etcd address(es) of a cluster (rosemary cluster up), comma-separated: PIR databases sharded over its devices"),
		etcd:    fs.String("etcd", "", "the same as --cluster"),
		keys:    fs.String("keys", "", "key directory (made by `rosemary db keys`)"),
		name:    fs.String("name", "", "database name"),
		json:    fs.Bool("json", false, "print JSON"),
		tls:     addTransportFlags(fs),
	}
}

// parseOpen parses args and opens the device the flags name.
func (f *dbFlags) parseOpen(ctx context.Context, args []string) (*dbClient, error) {
	if err := f.fs.Parse(args); err != nil {
		return nil, err
	}
	return f.open(ctx)
}

// open loads the keys and opens the device the flags name.
func (f *dbFlags) open(ctx context.Context) (*dbClient, error) {
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
	switch {
	case *f.store != "" && *f.device != "":
		return nil, errors.New("db: give --store or --device, not both")
	case *f.store != "":
		return openStoreClient(*f.store, keys)
	case *f.device != "":
		dial, err := f.tls.dialOptions()
		if err != nil {
			return nil, err
		}
		c, err := client.Open(ctx, *f.device, keys, dial...)
		if err != nil {
			return nil, err
		}
		return &dbClient{Client: c.WithPrograms(programs.New())}, nil
	}
	return nil, errors.New("db: --store DIR or --device ADDR is required")
}

// dbClient is a client with what closing it must also close: the store of
// an in-process device.
type dbClient struct {
	*client.Client
	store *store.Store
}

// openStoreClient opens (or creates) the store directory dir and runs a
// device over it in this process.
func openStoreClient(dir string, keys *client.Keys) (*dbClient, error) {
	st, err := store.Open(dir, layout.Layout{})
	if err != nil {
		return nil, err
	}
	d, err := device.New(st, device.DefaultLimits())
	if err != nil {
		st.Close()
		return nil, err
	}
	return &dbClient{Client: client.New(d, keys).WithPrograms(programs.New()), store: st}, nil
}

// Close closes the client, then the in-process device's store.
func (c *dbClient) Close() error {
	err := c.Client.Close()
	if c.store != nil {
		err = errors.Join(err, c.store.Close())
	}
	return err
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
	f := newDBFlags(cmd)
	if cmd != "keys" && cmd != "trust" && (hasFlag(args, "cluster") || hasFlag(args, "etcd")) {
		return runDBCluster(ctx, cmd, f, args)
	}
	if ok, err := runDBUpdate(ctx, cmd, f, args); ok {
		return err
	}
	run, ok := dbCommands[cmd]
	if !ok {
		return errors.New(dbUsage)
	}
	return run(ctx, cmd, f, args)
}

// dbCommands are the db subcommands on one device (runDBUpdate has the
// updates, runDBCluster a cluster's).
var dbCommands = map[string]func(ctx context.Context, cmd string, f *dbFlags, args []string) error{
	"keys":    dbKeys,
	"trust":   dbTrust,
	"create":  dbCreate,
	"load":    dbLoad,
	"get":     dbGetRecord,
	"info":    dbInfo,
	"drop":    dbDrop,
	"grant":   dbGrant,
	"revoke":  dbGrant,
	"nearest": dbNearest,
}

// dbKeys makes a key directory (`rosemary db keys`).
func dbKeys(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	if *f.keys == "" {
		return errors.New("db keys: --keys DIR is required")
	}
	k, err := client.NewKeys(*f.keys)
	if err != nil {
		return err
	}
	pub := filepath.Join(k.Dir(), client.MemberPublicKeyFile)
	owner := filepath.Join(k.Dir(), client.OwnerPublicKeyFile)
	return f.print(map[string]string{"keys": k.Dir(), "key_set": k.ID(), "member_key": pub, "owner_key": owner,
		"owner_key_fingerprint": client.KeyFingerprint(k.OwnerPublicKey())},
		fmt.Sprintf("new keys in %s (key set %s); the secret key files are 0600 and never leave this machine;\n"+
			"an owner grants you a database with your public %s; your readers trust your grants with `rosemary db trust` on your %s (fingerprint %s)",
			k.Dir(), k.ID(), pub, owner, client.KeyFingerprint(k.OwnerPublicKey())))
}

// dbTrust records an owner's key whose grants the key set accepts (`rosemary db trust`).
func dbTrust(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	label := f.fs.String("owner", "", "who the key belongs to (one word: their identity)")
	ownerKey := f.fs.String("owner-key", "", "the owner's owner.pub, received from them by a channel the device does not control")
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	if *f.keys == "" || *label == "" || *ownerKey == "" {
		return errors.New("db trust: --keys DIR, --owner IDENTITY and --owner-key FILE are required")
	}
	k, err := client.LoadKeys(*f.keys)
	if err != nil {
		return err
	}
	pub, err := os.ReadFile(*ownerKey)
	if err != nil {
		return fmt.Errorf("db trust: %w", err)
	}
	if err := k.TrustOwner(*label, pub); err != nil {
		return err
	}
	fp := client.KeyFingerprint(pub)
	return f.print(map[string]string{"trusted": *label, "fingerprint": fp},
		fmt.Sprintf("grants signed by %s's key %s are accepted (check the fingerprint with them)", *label, fp))
}

// dbCreate creates a database of its kind (`rosemary db create`).
func dbCreate(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	kind := f.fs.String("kind", "pir", "pir (records read privately), kv (values read by key) or vectors")
	maxValue := f.fs.Int("max-value", client.DefaultMaxValue, "kv: the largest value (every lookup reads as much)")
	slot := f.fs.Int("slot", 0, "kv: value bytes per bucket slot (0: the maximum value, or the largest four fit in a record)")
	lweParams := f.fs.String("lwe-params", "", "pir, kv: LWE parameter set (default; test is small and insecure, refused without --insecure-params)")
	insecure := f.fs.Bool("insecure-params", false, "pir, kv: allow a parameter set marked insecure (tests only; recorded in the manifest)")
	deltaMax := f.fs.Int("delta-max", 0, fmt.Sprintf("pir, kv: bound on the delta of updates, bytes (0: %d)", client.DefaultDeltaMax))
	compactAt := f.fs.Int("compact-at", 0, "pir, kv: delta size at which an update compacts (0: half of --delta-max)")
	size := f.fs.Int("record-size", 0, "pir: bytes per record")
	dim := f.fs.Int("dim", 0, "vectors: dimensions")
	metric := f.fs.String("metric", "l2", "vectors: l2 (Euclidean distance) or ip (inner product)")
	encVec := f.fs.Bool("encrypt-vectors", false, "vectors: store them as CKKS ciphertexts under your key (scores computed ciphertext × ciphertext; only your key can query)")
	scheme := f.fs.String("scheme", "lwe", "pir: lwe (hint-free LWE PIR, the default) or bgv (a BGV query expanded on the device)")
	c, err := f.parseOpen(ctx, args)
	if err != nil {
		return err
	}
	defer c.Close()
	var in *client.Info
	switch client.Kind(*kind) {
	case client.KindPIR:
		if *size <= 0 {
			return errors.New("db create: --record-size is required for a pir database")
		}
		sc, err2 := client.ParsePIRScheme(*scheme)
		if err2 != nil {
			return err2
		}
		in, err = c.CreatePIR(ctx, *f.name, *size, client.PIROptions{Scheme: sc, LWEParams: *lweParams, InsecureParams: *insecure, DeltaMax: *deltaMax, CompactAt: *compactAt})
	case client.KindKV:
		in, err = c.CreateKV(ctx, *f.name, client.KVOptions{MaxValue: *maxValue, SlotData: *slot, LWEParams: *lweParams, InsecureParams: *insecure, DeltaMax: *deltaMax, CompactAt: *compactAt})
	case client.KindVectors:
		if *dim <= 0 {
			return errors.New("db create: --dim is required for a vectors database")
		}
		in, err = c.CreateVectors(ctx, *f.name, *dim, client.VectorOptions{Metric: client.Metric(*metric), EncryptVectors: *encVec})
	default:
		return fmt.Errorf("db create: --kind %q (pir, kv or vectors)", *kind)
	}
	if err != nil {
		return err
	}
	what := "preset " + in.Preset
	if in.Scheme == client.SchemeLWE {
		what = "scheme lwe, parameters " + in.LWEParams
	}
	return f.print(in, fmt.Sprintf("created %s database %q (%s)", in.Kind, in.Name, what))
}

// dbLoad replaces a database's contents from a file (`rosemary db load`).
func dbLoad(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	format := f.fs.String("format", "", loadFormatUsage)
	column := f.fs.Int("column", 0, "csv: column of the records (0-based)")
	header := f.fs.Bool("header", false, "csv: skip the first row")
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	if f.fs.NArg() != 1 {
		return errors.New("db load: one input FILE (or - for standard input) is required")
	}
	path := f.fs.Arg(0)
	fmtName := *format
	var vf dataset.VectorFormat
	if v, err := dataset.VectorFormatOf(path); err == nil {
		vf, fmtName = v, "fixed"
	}
	if fmtName == "" {
		fmtName = recordFormatOf(path)
	}
	var r io.Reader = os.Stdin
	var total int64
	if path != "-" {
		file, err := os.Open(path)
		if err != nil {
			return err
		}
		defer file.Close()
		if fi, err := file.Stat(); err == nil {
			total = fi.Size()
		}
		r = file
	}
	c, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	cur, err := c.Info(ctx, *f.name)
	if err != nil {
		return err
	}
	var rf dataset.RecordFormat
	var kf kv.Format
	if cur.Kind == client.KindKV {
		if *format == "" {
			fmtName = kvFormatOf(path)
		}
		if kf, err = kv.ParseFormat(fmtName); err != nil {
			return err
		}
	} else if rf, err = dataset.ParseRecordFormat(fmtName); err != nil {
		return err
	}
	bar := newProgressBar()
	in, err := c.Load(ctx, *f.name, r, client.LoadOptions{Records: rf, KV: kf, Column: *column, Header: *header, Vectors: vf, Progress: func(done int64) {
		if total > 0 {
			bar.show(fmt.Sprintf("loading %s: %s of %s", *f.name, report.Bytes(done), report.Bytes(total)), done, total)
		}
	}})
	bar.done()
	if err != nil {
		return err
	}
	if in.Kind == client.KindKV {
		return f.print(in, fmt.Sprintf("loaded %d keys into %q: %d buckets, generation %d, %s stored", in.Entries, in.Name, in.Records, in.Generation, report.Bytes(in.Bytes)))
	}
	return f.print(in, fmt.Sprintf("loaded %d %s into %q: generation %d, %s stored",
		in.Records, map[client.Kind]string{client.KindPIR: "records", client.KindVectors: "vectors"}[in.Kind], in.Name, in.Generation, report.Bytes(in.Bytes)))
}

// dbGetRecord reads one record privately (`rosemary db get`).
func dbGetRecord(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	index := f.fs.Int("index", -1, "record index")
	c, err := f.parseOpen(ctx, args)
	if err != nil {
		return err
	}
	defer c.Close()
	q, err := c.GetQuery(ctx, *f.name, *index)
	if err != nil {
		return err
	}
	out := map[string]any{"index": *index, "record": q.Record, "record_size": len(q.Record),
		"query_bytes": q.QueryBytes, "answer_bytes": q.AnswerBytes, "pulled_bytes": q.PulledBytes, "seconds": q.Seconds,
		"on_device": q.Device != nil, "provenance": "measured here"}
	return f.print(out, fmt.Sprintf("record %d: %q (%d B query up, %d B answer down, %.2f s)", *index, strings.TrimRight(string(q.Record), "\x00"),
		q.QueryBytes, q.AnswerBytes, q.Seconds))
}

// dbInfo describes a database (`rosemary db info`).
func dbInfo(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	c, err := f.parseOpen(ctx, args)
	if err != nil {
		return err
	}
	defer c.Close()
	in, err := c.Info(ctx, *f.name)
	if err != nil {
		return err
	}
	if in.Kind == client.KindKV && in.KV != nil {
		delta := 0
		if in.Delta != nil {
			delta = in.Delta.Ops
		}
		return f.print(in, fmt.Sprintf("%s: kv database, %d keys, values up to %d B in slots of %d B, %d buckets of %d slots, generation %d, %d changes in the delta, %s stored",
			in.Name, in.Entries, in.KV.MaxValue, in.KV.SlotData, in.KV.Buckets, in.KV.Slots, in.Generation, delta, report.Bytes(in.Bytes)))
	}
	return f.print(in, fmt.Sprintf("%s: %s database, %d records of %d B, generation %d, %d × %d plaintexts, %s stored, preset %s",
		in.Name, in.Kind, in.Records, in.RecordSize, in.Generation, in.Rows, in.Cols, report.Bytes(in.Bytes), in.Preset))
}

// dbDrop deletes a database (`rosemary db drop`).
func dbDrop(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	c, err := f.parseOpen(ctx, args)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Drop(ctx, *f.name); err != nil {
		return err
	}
	return f.print(map[string]string{"dropped": *f.name}, fmt.Sprintf("dropped %q", *f.name))
}

// dbGrant gives an identity a role on a database, or takes it away (revoke) (`rosemary db grant|revoke`).
func dbGrant(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	to := f.fs.String("to", "", "identity (certificate common name) to grant to or revoke from")
	roleName := f.fs.String("role", "reader", "grant: reader (may query) or owner (may do everything)")
	memberKey := f.fs.String("member-key", "", "grant: the grantee's public member key (member.pub of its key directory)")
	c, err := f.parseOpen(ctx, args)
	if err != nil {
		return err
	}
	defer c.Close()
	if *to == "" {
		return errors.New("db " + cmd + ": --to IDENTITY is required")
	}
	if cmd == "revoke" {
		if err := c.Revoke(ctx, *f.name, *to); err != nil {
			return err
		}
		return f.print(map[string]string{"revoked": *to, "name": *f.name}, fmt.Sprintf("revoked %s's access to %q", *to, *f.name))
	}
	role, err := authz.ParseRole(*roleName)
	if err != nil || role == authz.None {
		return fmt.Errorf("db grant: --role %q (want reader or owner)", *roleName)
	}
	if *memberKey == "" {
		return errors.New("db grant: --member-key FILE is required (the grantee's member.pub: it receives the database's key)")
	}
	pub, err := os.ReadFile(*memberKey)
	if err != nil {
		return err
	}
	if err := c.Grant(ctx, *f.name, *to, role, pub); err != nil {
		return err
	}
	return f.print(map[string]string{"granted": *to, "name": *f.name, "role": *roleName}, fmt.Sprintf("granted %s the %s role on %q", *to, *roleName, *f.name))
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
	c, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	results, err := nearestEach(vr, func(q []float32) (*client.Neighbors, error) { return c.Nearest(ctx, *f.name, q, *k) })
	if err != nil {
		return err
	}
	var lines []string
	for i, res := range results {
		lines = append(lines, fmt.Sprintf("query %d: ids %v, scores %.4g", i, res.IDs, res.Scores))
	}
	return f.print(map[string]any{"results": results, "provenance": "encrypted query, scores computed on the device, ranked here"},
		strings.Join(lines, "\n"))
}

// nearestEach answers every query vector that vr reads, in order, with
// nearest: the same loop for a single device and for a cluster.
func nearestEach(vr *dataset.VectorReader, nearest func(q []float32) (*client.Neighbors, error)) ([]*client.Neighbors, error) {
	var results []*client.Neighbors
	for {
		q, err := vr.Next()
		if err == io.EOF {
			return results, nil
		}
		if err != nil {
			return nil, err
		}
		res, err := nearest(q)
		if err != nil {
			return nil, fmt.Errorf("db nearest: query %d: %w", len(results), err)
		}
		results = append(results, res)
	}
}

// hasFlag reports whether args set --name (or -name).
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		a = strings.TrimLeft(a, "-")
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// runDBCluster runs a db command on a cluster (PIR databases).
// openCluster opens the cluster the parsed flags name, with their keys.
func (f *dbFlags) openCluster(ctx context.Context) (*cluster.Client, error) {
	if *f.keys == "" || *f.name == "" {
		return nil, errors.New("db: --keys and --name are required")
	}
	keys, err := client.LoadKeys(*f.keys)
	if err != nil {
		return nil, err
	}
	dial, err := f.tls.dialOptions()
	if err != nil {
		return nil, err
	}
	endpoints := *f.cluster
	if endpoints == "" {
		endpoints = *f.etcd
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
	return c, nil
}

func runDBCluster(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	shards := f.fs.Int("shards", 4, "create: shards")
	replicas := f.fs.Int("replicas", 2, "create: replicas of every shard")
	size := f.fs.Int("record-size", 0, "create: bytes per record")
	kind := f.fs.String("kind", "pir", "create: pir or vectors")
	dim := f.fs.Int("dim", 0, "create: vector dimensions")
	metric := f.fs.String("metric", "l2", "create: l2 or ip")
	encVec := f.fs.Bool("encrypt-vectors", false, "create: store vectors as CKKS ciphertexts under your key")
	index := f.fs.Int("index", -1, "get: record index")
	format := f.fs.String("format", "", loadFormatUsage)
	query := f.fs.String("query", "", "nearest: query vectors file")
	k := f.fs.Int("k", 10, "nearest: neighbours per query")
	kvf := addClusterKVFlags(f, cmd)
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	c, err := f.openCluster(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if ok, err := runDBClusterKV(ctx, cmd, f, c, kvf, *kind, *shards, *replicas, *format); ok {
		return err
	}
	switch cmd {
	case "create":
		var m *cluster.Map
		switch *kind {
		case "vectors":
			if *dim <= 0 {
				return errors.New("db create: --dim is required")
			}
			m, err = c.CreateVectors(ctx, *f.name, *dim, *shards, *replicas, client.VectorOptions{Metric: client.Metric(*metric), EncryptVectors: *encVec})
		case "pir":
			if *size <= 0 {
				return errors.New("db create: --record-size is required")
			}
			m, err = c.CreatePIR(ctx, *f.name, *size, *shards, *replicas)
		default:
			return fmt.Errorf("db create: --kind %q (pir, kv or vectors)", *kind)
		}
		if err != nil {
			return err
		}
		return f.print(m, fmt.Sprintf("created %q: %d shards × %d replicas of %d-byte records", m.Name, len(m.Shards), m.Replicas, m.RecordSize))
	case "load":
		if f.fs.NArg() != 1 {
			return errors.New("db load: one input FILE is required")
		}
		rf, err := dataset.ParseRecordFormat(cmp.Or(*format, recordFormatOf(f.fs.Arg(0))))
		if err != nil {
			return err
		}
		file, err := os.Open(f.fs.Arg(0))
		if err != nil {
			return err
		}
		defer file.Close()
		var m *cluster.Map
		if vf, verr := dataset.VectorFormatOf(f.fs.Arg(0)); verr == nil {
			m, err = c.LoadVectors(ctx, *f.name, file, vf)
		} else {
			m, err = c.Load(ctx, *f.name, file, rf)
		}
		if err != nil {
			return err
		}
		return f.print(m, fmt.Sprintf("loaded %d records into %q: generation %d over %d shards", m.Records, m.Name, m.Generation, len(m.Shards)))
	case "get":
		a, err := c.Get(ctx, *f.name, *index)
		if err != nil {
			return err
		}
		return f.print(map[string]any{"index": *index, "record": a.Record, "generation": a.Generation, "device_bytes": a.DeviceBytes,
			"retries": a.Retries, "provenance": "measured here"}, fmt.Sprintf("record %d: %q (generation %d)", *index, strings.TrimRight(string(a.Record), "\x00"), a.Generation))
	case "nearest":
		vr, closer, err := dataset.OpenVectors(*query)
		if err != nil {
			return err
		}
		defer closer.Close()
		results, err := nearestEach(vr, func(q []float32) (*client.Neighbors, error) { return c.Nearest(ctx, *f.name, q, *k) })
		if err != nil {
			return err
		}
		if len(results) == 0 {
			return errors.New("db nearest: no query vectors in " + *query)
		}
		return f.print(map[string]any{"results": results}, fmt.Sprintf("%d queries answered; first: %v", len(results), results[0].IDs))
	case "info":
		m, err := c.Info(ctx, *f.name)
		if err != nil {
			return err
		}
		return f.print(m, fmt.Sprintf("%s: %d records of %d B, generation %d, %d shards × %d replicas", m.Name, m.Records, m.RecordSize, m.Generation, len(m.Shards), m.Replicas))
	}
	return fmt.Errorf("db %s: not available on a cluster yet (create, load, get, lookup, put, delete, compact, nearest, info are)", cmd)
}
