package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/client/kv"
	"github.com/rosemary-fhe/rosemary/tools/report"
)

// The db commands that write: create, load, drop, and the updates between
// loads (put, delete, set, append, compact).

// createFlags are db create's flags, by kind.
type createFlags struct {
	kind, lweParams, metric, scheme, kvLayout      *string
	heapRows, logCols                              *int
	lweMode                                        *string // db's --lwe-mode: what generations store
	maxValue, slot, deltaMax, compactAt, size, dim *int
	shards, replicas                               *int
	insecure, encVec                               *bool
}

func addCreateFlags(f *dbFlags) *createFlags {
	fs := f.fs
	return &createFlags{
		lweMode:   f.lweMode,
		kind:      fs.String("kind", "pir", "pir (records read privately), kv (values read by key) or vectors"),
		maxValue:  fs.Int("max-value", client.DefaultMaxValue, "kv: the largest value (every lookup reads as much)"),
		slot:      fs.Int("slot", 0, "kv: value bytes per bucket slot (0: the maximum value, or the largest four fit in a record)"),
		kvLayout:  fs.String("kv-layout", "auto", "kv: auto (heap for values longer than a slot, on a device that answers packed queries; else cuckoo), cuckoo (values in chunks in the buckets: 2·⌈max-value/slot⌉ queries a lookup) or heap (an index of pointers and a heap of whole columns, queried packed: 2 + ⌈max-value/column⌉ + 1 queries)"),
		logCols:   fs.Int("log-cols", 0, "pir (lwe): lay generations out below 2^N columns (0: 18 for a packed-only database, 19 otherwise; at 1 GiB 18 is 4096 rows and 0.94 MB up, 17 is 8192 rows: half that query, twice the packing and its storage)"),
		heapRows:  fs.Int("heap-rows", 0, "kv --kv-layout heap: stored bytes of a heap column, a power of two (0: chosen at each load, the LWE dimension N = 2048, or 2N where --max-value spans 16 columns of N or more and the values outweigh a pack of packer, 32 MiB)"),
		lweParams: fs.String("lwe-params", "", "pir, kv: LWE parameter set (default; test is small and insecure, refused without --insecure-params)"),
		insecure:  fs.Bool("insecure-params", false, "pir, kv: allow a parameter set marked insecure (tests only; recorded in the manifest)"),
		deltaMax:  fs.Int("delta-max", 0, fmt.Sprintf("pir (one device), kv: bound on the delta of updates, bytes (0: the store's default, %d on a device)", client.DefaultDeltaMax)),
		compactAt: fs.Int("compact-at", 0, "pir (one device), kv: delta size at which an update compacts (0: half of --delta-max)"),
		size:      fs.Int("record-size", 0, "pir: bytes per record"),
		dim:       fs.Int("dim", 0, "vectors: dimensions"),
		metric:    fs.String("metric", "l2", "vectors: l2 (Euclidean distance) or ip (inner product)"),
		encVec:    fs.Bool("encrypt-vectors", false, "vectors: store them as CKKS ciphertexts under your key (scores computed ciphertext × ciphertext; only your key can query)"),
		scheme:    fs.String("scheme", "lwe", "pir: lwe (hint-free LWE PIR, the default) or bgv (a BGV query expanded on the device)"),
		shards:    fs.Int("shards", 0, "cluster: shards (0: 4)"),
		replicas:  fs.Int("replicas", 0, "cluster: replicas of every shard (0: 2)"),
	}
}

// spec is the Spec the flags describe.
func (c *createFlags) spec() (client.Spec, error) {
	s := client.Spec{Shards: *c.shards, Replicas: *c.replicas}
	switch client.Kind(*c.kind) {
	case client.KindPIR:
		if *c.size <= 0 {
			return s, errors.New("db create: --record-size is required for a pir database")
		}
		sc, err := client.ParsePIRScheme(*c.scheme)
		if err != nil {
			return s, err
		}
		mode, err := client.ParseLWEMode(*c.lweMode)
		if err != nil {
			return s, fmt.Errorf("db create: --lwe-mode: %w", err)
		}
		s.PIR = &client.PIRSpec{RecordSize: *c.size, PIROptions: client.PIROptions{Scheme: sc, LWEParams: *c.lweParams, InsecureParams: *c.insecure,
			DeltaMax: *c.deltaMax, CompactAt: *c.compactAt, LWEMode: mode, LogCols: *c.logCols}}
	case client.KindKV:
		mode, err := client.ParseLWEMode(*c.lweMode)
		if err != nil {
			return s, fmt.Errorf("db create: --lwe-mode: %w", err)
		}
		s.KV = &client.KVOptions{MaxValue: *c.maxValue, SlotData: *c.slot, LWEParams: *c.lweParams, InsecureParams: *c.insecure,
			DeltaMax: *c.deltaMax, CompactAt: *c.compactAt, LWEMode: mode, Layout: client.KVLayoutKind(*c.kvLayout), HeapRows: *c.heapRows}
	case client.KindVectors:
		if *c.dim <= 0 {
			return s, errors.New("db create: --dim is required for a vectors database")
		}
		s.Vectors = &client.VectorSpec{Dim: *c.dim, VectorOptions: client.VectorOptions{Metric: client.Metric(*c.metric), EncryptVectors: *c.encVec}}
	default:
		return s, fmt.Errorf("db create: --kind %q (pir, kv or vectors)", *c.kind)
	}
	return s, nil
}

// dbCreate creates a database of its kind (`rosemary db create`).
func dbCreate(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	cf := addCreateFlags(f)
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	spec, err := cf.spec()
	if err != nil {
		return err
	}
	st, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	d, err := st.Create(ctx, *f.name, spec)
	if err != nil {
		return err
	}
	return f.print(d, "created "+describe(d))
}

// loadFormatUsage is --format's meaning on every db load.
const loadFormatUsage = "pir input: fixed (records back to back), lines (one per line) or csv (one column); default by extension: .csv csv, .txt lines, else fixed; " +
	"kv input: csv (key, value) or jsonl ({\"key\": …, \"value\": …} per line), default by extension: .jsonl jsonl, else csv; " +
	"vectors: by extension (.fvecs, .bvecs, .npy)"

// openInput opens the one input FILE a command names (- for standard
// input) and returns its size (0 if unknown).
func openInput(f *dbFlags, cmd string) (io.Reader, int64, func(), error) {
	if f.fs.NArg() != 1 {
		return nil, 0, nil, fmt.Errorf("db %s: one input FILE (or - for standard input) is required", cmd)
	}
	if path := f.fs.Arg(0); path != "-" {
		file, err := os.Open(path)
		if err != nil {
			return nil, 0, nil, err
		}
		var size int64
		if fi, err := file.Stat(); err == nil {
			size = fi.Size()
		}
		return file, size, func() { file.Close() }, nil
	}
	return os.Stdin, 0, func() {}, nil
}

// loadOptions are the options of a load of a kind database from path,
// its format given (or "": by the path's extension).
func loadOptions(kind client.Kind, path, format string, column int, header bool) (client.LoadOptions, error) {
	opt := client.LoadOptions{Column: column, Header: header}
	var err error
	switch kind {
	case client.KindKV:
		opt.KV, err = kv.ParseFormat(cmp.Or(format, kvFormatOf(path)))
	case client.KindVectors:
		opt.Vectors, err = dataset.VectorFormatOf(path)
	default:
		opt.Records, err = dataset.ParseRecordFormat(cmp.Or(format, recordFormatOf(path)))
	}
	return opt, err
}

// dbLoad replaces a database's contents from a file (`rosemary db load`).
func dbLoad(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	format := f.fs.String("format", "", loadFormatUsage)
	column := f.fs.Int("column", 0, "csv: column of the records (0-based)")
	header := f.fs.Bool("header", false, "csv: skip the first row")
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	r, total, done, err := openInput(f, cmd)
	if err != nil {
		return err
	}
	defer done()
	st, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	cur, err := st.Info(ctx, *f.name)
	if err != nil {
		return err
	}
	kind := cur.Head().Kind
	opt, err := loadOptions(kind, f.fs.Arg(0), *format, *column, *header)
	if err != nil {
		return err
	}
	bar := newProgressBar()
	opt.Progress = func(n int64) {
		if total > 0 {
			bar.show(fmt.Sprintf("loading %s: %s of %s", *f.name, report.Bytes(n), report.Bytes(total)), n, total)
		}
	}
	var d client.Description
	switch kind {
	case client.KindKV:
		d, err = st.KV(*f.name).Load(ctx, r, opt)
	case client.KindVectors:
		d, err = st.Vectors(*f.name).Load(ctx, r, opt)
	default:
		d, err = st.PIR(*f.name).Load(ctx, r, opt)
	}
	bar.done()
	if err != nil {
		return err
	}
	return f.print(d, "loaded "+describe(d))
}

// dbDrop deletes a database (`rosemary db drop`).
func dbDrop(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	st, err := f.parseOpen(ctx, args)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Drop(ctx, *f.name); err != nil {
		return err
	}
	return f.print(map[string]string{"dropped": *f.name}, fmt.Sprintf("dropped %q", *f.name))
}

// dbChange is put and delete on a keyword database and set on a PIR one
// (`rosemary db put|delete|set`); an update that leaves the delta due
// for compaction compacts unless --no-compact.
func dbChange(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	key := new(string)
	if cmd != "set" {
		key = f.fs.String("kv-key", "", "the keyword database's key to put or delete")
	}
	value := f.fs.String("value", "", "put, set: the value (or --value-file)")
	valueFile := f.fs.String("value-file", "", "put, set: read the value from this file")
	index := f.fs.Int("index", -1, "set: record index of a pir database")
	noCompact := f.fs.Bool("no-compact", false, "do not compact when the update leaves the delta at the database's compaction size")
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	if cmd != "set" && !flagSet(f, "kv-key") {
		return fmt.Errorf("db %s: --kv-key is required", cmd)
	}
	if cmd == "set" && *index < 0 {
		return errors.New("db set: --index is required")
	}
	val := []byte(*value)
	if *valueFile != "" {
		var err error
		if val, err = os.ReadFile(*valueFile); err != nil {
			return err
		}
	}
	st, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	var u *client.Update
	var compact func(context.Context) (client.Description, error)
	switch cmd {
	case "put":
		db := st.KV(*f.name)
		compact = db.Compact
		u, err = db.Put(ctx, []byte(*key), val)
	case "delete":
		db := st.KV(*f.name)
		compact = db.Compact
		u, err = db.Delete(ctx, []byte(*key))
	case "set":
		up, ok := st.PIR(*f.name).(client.PIRUpdater)
		if !ok {
			return errors.New("db set: a cluster's pir databases are reloaded whole (give --device or --store)")
		}
		compact = up.Compact
		u, err = up.Set(ctx, *index, val)
	}
	if err != nil {
		return err
	}
	text, err := compactIfDue(ctx, cmd, u, *noCompact, compact)
	if err != nil {
		return err
	}
	return f.print(u, fmt.Sprintf("%s %q: delta of %d changes, %d B%s", cmd, *f.name, u.DeltaOps, u.DeltaBytes, text))
}

// compactIfDue compacts after an update that left compaction due (unless
// told not to) and says so.
func compactIfDue(ctx context.Context, cmd string, u *client.Update, no bool, compact func(context.Context) (client.Description, error)) (string, error) {
	if !u.CompactDue || no {
		return "", nil
	}
	d, err := compact(ctx)
	if err != nil {
		return "", fmt.Errorf("db %s: the update is in; compaction (due) failed: %w", cmd, err)
	}
	return fmt.Sprintf("; compacted into generation %d", d.Head().Generation), nil
}

// dbAppend appends records to a PIR database (`rosemary db append`): the
// --record values, or the records of one input FILE (- for standard
// input) in a format db load takes.
func dbAppend(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	var records stringList
	f.fs.Var(&records, "record", "a record (repeat for more; or give FILE, - for standard input)")
	format := f.fs.String("format", "", "FILE: fixed (records back to back), lines (one per line) or csv (one column); default by extension: .csv csv, .txt lines, else fixed")
	column := f.fs.Int("column", 0, "csv: column of the records (0-based)")
	header := f.fs.Bool("header", false, "csv: skip the first row")
	noCompact := f.fs.Bool("no-compact", false, "do not compact when the append leaves the delta at the database's compaction size")
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	if len(records) > 0 && f.fs.NArg() > 0 {
		return errors.New("db append: give --record or an input FILE, not both")
	}
	st, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	up, ok := st.PIR(*f.name).(client.PIRUpdater)
	if !ok {
		return errors.New("db append: a cluster's pir databases are reloaded whole (give --device or --store)")
	}
	var a *client.Appended
	if len(records) > 0 {
		recs := make([][]byte, len(records))
		for i, r := range records {
			recs[i] = []byte(r)
		}
		a, err = up.Append(ctx, recs...)
	} else {
		r, _, done, oerr := openInput(f, cmd)
		if oerr != nil {
			return fmt.Errorf("%w (or --record)", oerr)
		}
		defer done()
		opt, oerr := loadOptions(client.KindPIR, f.fs.Arg(0), *format, *column, *header)
		if oerr != nil {
			return oerr
		}
		a, err = up.AppendFrom(ctx, r, opt)
	}
	if err != nil {
		return err
	}
	text, err := compactIfDue(ctx, cmd, &a.Update, *noCompact, up.Compact)
	if err != nil {
		return err
	}
	return f.print(a, fmt.Sprintf("appended %d records to %q: indices %d..%d, delta of %d changes, %d B%s",
		a.Records-a.First, *f.name, a.First, a.Records-1, a.DeltaOps, a.DeltaBytes, text))
}

// dbCompact folds a database's updates into a new generation (`rosemary
// db compact`).
func dbCompact(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	st, err := f.parseOpen(ctx, args)
	if err != nil {
		return err
	}
	defer st.Close()
	cur, err := st.Info(ctx, *f.name)
	if err != nil {
		return err
	}
	var d client.Description
	switch kind := cur.Head().Kind; kind {
	case client.KindKV:
		d, err = st.KV(*f.name).Compact(ctx)
	case client.KindPIR:
		up, ok := st.PIR(*f.name).(client.PIRUpdater)
		if !ok {
			return errors.New("db compact: a cluster's pir databases take no updates to compact")
		}
		d, err = up.Compact(ctx)
	default:
		return fmt.Errorf("db compact: %w: a %s database takes no updates (reload it)", client.ErrKind, kind)
	}
	if err != nil {
		return err
	}
	return f.print(d, "compacted "+describe(d))
}

// kvFormatOf is a keyword load's input format by its file's extension.
func kvFormatOf(path string) string {
	if strings.ToLower(filepath.Ext(path)) == ".jsonl" {
		return string(kv.JSONL)
	}
	return string(kv.CSV)
}

// recordFormatOf is the record format a PIR input's extension names:
// .csv csv, .txt lines, else fixed.
func recordFormatOf(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return "csv"
	case ".txt":
		return "lines"
	}
	return "fixed"
}
