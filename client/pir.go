package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/client/internal/seal"
	"github.com/rosemary-fhe/rosemary/client/internal/session"
	"github.com/rosemary-fhe/rosemary/client/kv"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
	"github.com/rosemary-fhe/rosemary/fhe/pir"
)

// PIRScheme is how a PIR database answers queries.
type PIRScheme string

// PIR schemes.
const (
	// SchemeLWE: the hint-free LWE scheme (package fhe/lwepir), the
	// default: one 32-bit multiply-add per stored byte on the device.
	SchemeLWE PIRScheme = "lwe"
	// SchemeBGV: a BGV query expanded on the device (package fhe/pir), the
	// compiled Plan's stream program; kept for comparison.
	SchemeBGV PIRScheme = "bgv"
)

// ParsePIRScheme reads a scheme name ("" is the default, SchemeLWE).
func ParsePIRScheme(s string) (PIRScheme, error) {
	switch PIRScheme(s) {
	case "", SchemeLWE:
		return SchemeLWE, nil
	case SchemeBGV:
		return SchemeBGV, nil
	}
	return "", fmt.Errorf("client: unknown PIR scheme %q (lwe or bgv)", s)
}

// PIROptions configure a PIR database.
type PIROptions struct {
	Scheme PIRScheme // "" is SchemeLWE
	// LWEParams names the LWE parameter set ("" is "default", 128-bit;
	// "test" is small and insecure, for tests: refused unless
	// InsecureParams, which the manifest then records).
	LWEParams      string
	InsecureParams bool
	// DeltaMax and CompactAt bound the delta of Set (see KVOptions).
	DeltaMax, CompactAt int
	// LWEMode (LWE): what every generation stores, and so how it is
	// queried. LWEPacked (the default): the packed mode's precomputation
	// (64 MiB a pack of 2048 rows at the default parameters, about 1 CPU-s
	// to build at each load), queried without Galois keys, a 9.5 KB
	// answer. LWERing: the hint diagonals (64 MiB a pack), queried with
	// the ring stage.
	LWEMode LWEMode
	// LogCols (LWE): the stored matrix aims below 2^LogCols columns (0 is
	// lwepir.PackedTargetLogCols, 18, for a packed-only database of
	// PackV3, lwepir.TargetLogCols, 19, otherwise). A query is 3.5 bytes a
	// column up (28-bit words) and 26 KB of keys, and each 2048 rows are a
	// pack to compute, store and download: at 1 GiB, 19 gives 2048 rows and
	// 1.86 MB up, 18 gives 4096 rows and 0.94 MB, 17 gives 8192 rows and
	// 0.49 MB, four times the packing and its storage (BENCHMARKS.md).
	LogCols int
}

// scheme is a manifest's scheme (manifests from before the LWE scheme
// have none: they are BGV).
func (in *Info) scheme() PIRScheme {
	if in.pir().Scheme == "" {
		return SchemeBGV
	}
	return in.pir().Scheme
}

// CreatePIR creates an empty PIR database of recordSize-byte records.
func (c *Client) CreatePIR(ctx context.Context, name string, recordSize int, opt PIROptions) (*Info, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	scheme, err := ParsePIRScheme(string(opt.Scheme))
	if err != nil {
		return nil, err
	}
	if scheme == SchemeLWE {
		p, pname, err := lweParamsFor(opt.LWEParams, opt.InsecureParams)
		if err != nil {
			return nil, fmt.Errorf("client: create %s: %w", name, err)
		}
		if max := p.HintSlots() - seal.Overhead; recordSize < 1 || recordSize > max {
			return nil, fmt.Errorf("client: create %s: %w: records of %d bytes (1 to %d)", name, pir.ErrRecords, recordSize, max)
		}
		if opt.LogCols != 0 && (opt.LogCols < p.LogN || opt.LogCols > lwepir.MaxLogCols) {
			return nil, fmt.Errorf("client: create %s: %w: a target of 2^%d columns (2^%d to 2^%d)", name, lwepir.ErrParams, opt.LogCols, p.LogN, lwepir.MaxLogCols)
		}
		part := &PIRPart{Scheme: SchemeLWE, LWEParams: pname, RecordSize: recordSize, Packing: c.packingVersion(), LogCols: opt.LogCols}
		part.StoreMode(opt.LWEMode)
		if part.LogCols == 0 && !part.ring() && part.Packing >= lwepir.PackV3 {
			part.LogCols = lwepir.PackedTargetLogCols
		}
		return c.create(ctx, &Info{Header: Header{Name: name, Kind: KindPIR}, InsecureParams: p.Insecure, Sealed: true,
			Parts:    Parts{PIR: part},
			DeltaMax: opt.DeltaMax, CompactAt: opt.CompactAt, Created: time.Now().UTC()})
	}
	preset, err := fhe.Lookup(pirPreset)
	if err != nil {
		return nil, err
	}
	// Records are sealed here (seal.Overhead bytes each) before they go.
	if max := 2<<preset.LogN - seal.Overhead; recordSize < 1 || recordSize > max {
		return nil, fmt.Errorf("client: create %s: %w: records of %d bytes (1 to %d)", name, pir.ErrRecords, recordSize, max)
	}
	return c.create(ctx, &Info{Header: Header{Name: name, Kind: KindPIR}, Preset: preset.Name, Parts: Parts{PIR: &PIRPart{Scheme: SchemeBGV, RecordSize: recordSize}}, Sealed: true, Created: time.Now().UTC()})
}

func (c *Client) create(ctx context.Context, in *Info) (*Info, error) {
	if err := c.startGeneration(in); err != nil {
		return nil, err
	}
	if _, err := c.readInfo(ctx, in.Name); err == nil {
		return nil, fmt.Errorf("%w: %q", ErrExists, in.Name)
	} else if !errors.Is(err, ErrNoDatabase) {
		return nil, err
	}
	if err := c.writeInfo(ctx, in, 0); err != nil {
		if errors.Is(err, api.ErrStale) { // created meanwhile
			return nil, fmt.Errorf("%w: %q", ErrExists, in.Name)
		}
		return nil, err
	}
	return in, nil
}

// Info describes a database.
func (c *Client) Info(ctx context.Context, name string) (*Info, error) { return c.readInfo(ctx, name) }

// LoadOptions say how to read the input of Load.
type LoadOptions struct {
	// Records: the format of a PIR database's input (fixed-size records,
	// one record per line, or one column of a CSV).
	Records dataset.RecordFormat
	// CSV column and header row (Records = dataset.CSVColumn).
	Column int
	Header bool
	// Vectors: the format of a vector database's input (.fvecs, .bvecs,
	// .npy); the input must be seekable (it is read twice).
	Vectors dataset.VectorFormat
	// KV: the format of a keyword database's input (kv.CSV, the default,
	// with Header; or kv.JSONL).
	KV kv.Format
	// Progress, if set, is told the input bytes consumed so far.
	Progress func(done int64)
	// ExpectedRecords (> 0) is the records an input whose size the load
	// cannot read (a pipe, as every cluster shard gets) is expected to
	// hold: an LWE database larger than the loader holds before laying it
	// out (session.MaxPendingBytes) gets the matrix of that many records,
	// not the largest databases'. An estimate: the records read decide
	// what is stored.
	ExpectedRecords int
}

// RecordOptions are the options a PIR load's record reader takes.
func (o LoadOptions) RecordOptions() dataset.RecordOptions {
	return dataset.RecordOptions{Column: o.Column, Header: o.Header}
}

// Load replaces a database's contents with the records (or vectors) read
// from r. It writes a new generation beside the current one, under a
// name no other load uses, and publishes it only when complete, by one
// compare-and-swap of the manifest: a load that fails or is killed leaves
// the previous generation in place and queryable; of two loads run at
// once one publishes and the other fails with ErrConcurrentLoad. Once
// published, the data of every earlier generation (and of loads that
// lost or were interrupted) is removed.
func (c *Client) Load(ctx context.Context, name string, r io.Reader, opt LoadOptions) (*Info, error) {
	return c.load(ctx, name, "", r, opt)
}

// load is Load of a database of kind want ("": any).
func (c *Client) load(ctx context.Context, name string, want Kind, r io.Reader, opt LoadOptions) (*Info, error) {
	in, headGen, err := c.readHead(ctx, name)
	if err != nil {
		return nil, err
	}
	if want != "" && in.Kind != want {
		return nil, fmt.Errorf("%w: %q is a %s database, not %s", ErrKind, name, in.Kind, want)
	}
	next, err := c.nextGeneration(in)
	if err != nil {
		return nil, err
	}
	cr := &countingReader{r: r, progress: opt.Progress}
	switch {
	case in.Kind == KindPIR && in.scheme() == SchemeLWE:
		err = c.loadLWE(ctx, &next, cr, InputSize(r), opt)
	case in.Kind == KindPIR:
		err = c.loadPIR(ctx, &next, cr, opt)
	case in.Kind == KindKV:
		err = c.loadKV(ctx, &next, cr, opt)
	case in.Kind == KindVectors:
		rs, ok := r.(io.ReadSeeker)
		if !ok {
			err = errors.New("a vector load reads its input twice: give a file, not a stream")
			break
		}
		err = c.loadVectors(ctx, &next, &countingReadSeeker{countingReader: cr, s: rs}, opt)
	default:
		err = fmt.Errorf("%w: loading a %s database", ErrKind, in.Kind)
	}
	if err == nil {
		err = c.writeGrants(ctx, &next)
	}
	if err == nil {
		next.Loaded = time.Now().UTC()
		err = c.writeInfo(ctx, &next, headGen)
		if errors.Is(err, api.ErrStale) {
			err = fmt.Errorf("%w (%w)", ErrConcurrentLoad, err)
		}
	}
	if err != nil {
		// Best effort: the next load removes what is left.
		c.deletePrefix(context.WithoutCancel(ctx), genPrefix(&next)+"/")
		return nil, fmt.Errorf("client: load %s: %w", name, err)
	}
	if err := c.removeSuperseded(ctx, &next); err != nil {
		return &next, fmt.Errorf("client: load %s: published generation %d, but removing earlier data: %w", name, next.Generation, err)
	}
	return &next, nil
}

// addRecords hands every record of rr to add, sealed under a fresh salt
// of generation in when the database is sealed (in.Salt is set here).
func (c *Client) addRecords(ctx context.Context, in *Info, rr interface{ Next() ([]byte, error) }, add func(context.Context, []byte) error) error {
	var sl *seal.Sealer
	if in.Sealed {
		salt, err := seal.NewSalt()
		if err != nil {
			return err
		}
		in.Salt = Hex(bytes.Clone(salt[:]))
		if sl, err = c.sealer(ctx, in); err != nil {
			return err
		}
	}
	var sealed []byte
	for i := uint64(0); ; i++ {
		rec, err := rr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if sl != nil {
			sealed = sl.Seal(sealed[:0], i, rec)
			rec = sealed
		}
		if err := add(ctx, rec); err != nil {
			return err
		}
	}
}

// nextGeneration is the manifest of the generation after in, before its
// data is written: a new load token and a fresh key, no delta (a load or a
// compaction replaces everything).
func (c *Client) nextGeneration(in *Info) (Info, error) {
	if !in.keys.owned {
		return Info{}, fmt.Errorf("client: %s: %w", in.Name, ErrNotKeyOwner)
	}
	token, err := newLoadToken()
	if err != nil {
		return Info{}, err
	}
	next := *in
	next.Parts = in.Parts.Clone()
	next.Generation, next.Token, next.Delta = in.Generation+1, token, nil
	return next, c.startGeneration(&next)
}

// ErrConcurrentLoad: another load of the database published while this
// one ran; this one published nothing.
var ErrConcurrentLoad = errors.New("client: another load of the database published first")

// newLoadToken names one load's data.
func newLoadToken() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

func (c *Client) loadPIR(ctx context.Context, in *Info, r io.Reader, opt LoadOptions) error {
	preset, err := fhe.Lookup(in.Preset)
	if err != nil {
		return err
	}
	params, err := preset.BGVParameters()
	if err != nil {
		return err
	}
	rr, err := dataset.NewRecordReader(r, opt.Records, in.pir().RecordSize, opt.RecordOptions())
	if err != nil {
		return err
	}
	l, err := session.NewPIRLoader(session.DeviceSink(c.dev), genPrefix(in), params, in.StoredRecordSize(), nil)
	if err != nil {
		return err
	}
	if err := c.addRecords(ctx, in, rr, l.Add); err != nil {
		return err
	}
	shape, n, err := l.Finish(ctx)
	if err != nil {
		return err
	}
	in.Records, in.pir().Rows, in.pir().Cols, in.Bytes = shape.Records, shape.Rows, shape.Cols, n
	return nil
}

// Get returns record index of a PIR database. The query is encrypted
// here, the device expands it and scans the whole database, the answer is
// decrypted here: the device never learns the index.
func (c *Client) Get(ctx context.Context, name string, index int) ([]byte, error) {
	q, err := c.GetQuery(ctx, name, index)
	if err != nil {
		return nil, err
	}
	return q.Record, nil
}

// GetQuery is Get with what the query cost (bytes across, device work).
func (c *Client) GetQuery(ctx context.Context, name string, index int) (*session.PIRQuery, error) {
	return retryGeneration(ctx, c, name, func(in *Info) (*session.PIRQuery, error) {
		// The delta is read right after the manifest, whatever the index:
		// the device cannot tell whether it answered.
		ops, err := c.deltaOps(ctx, in)
		if err != nil {
			return nil, err
		}
		q, err := c.getIn(ctx, in, index)
		if err != nil {
			return nil, err
		}
		if q.Record, err = fromDelta(in, ops, index, q.Record); err != nil {
			return nil, err
		}
		return q, nil
	})
}

// getIn reads record index of generation in. An appended record is not
// in the generation: getIn asks for a random one of the generation's
// instead, the same query to the device, and returns it (the caller takes
// the appended record from the delta).
func (c *Client) getIn(ctx context.Context, in *Info, index int) (*session.PIRQuery, error) {
	name := in.Name
	var err error
	if in.Kind != KindPIR {
		return nil, fmt.Errorf("%w: %q is a %s database, Get reads PIR databases", ErrKind, name, in.Kind)
	}
	if in.Records == 0 {
		return nil, fmt.Errorf("%w: %q", ErrEmpty, name)
	}
	if index < 0 || index >= in.Records {
		return nil, fmt.Errorf("client: get %s: %w: index %d of %d records", name, ErrIndexOutOfRange, index, in.Records)
	}
	index = in.asked(index)
	var q *session.PIRQuery
	if in.scheme() == SchemeLWE {
		var s *session.LWESession
		if s, err = c.lweSession(ctx, in); err != nil {
			return nil, err
		}
		if q, err = s.Get(ctx, index); errors.Is(err, session.ErrMalformedAnswer) {
			return nil, c.answerFailed(in, index, err)
		}
	} else {
		var s RecordQuerier
		if s, err = c.pirSession(ctx, in); err != nil {
			return nil, err
		}
		q, err = s.Get(ctx, index)
	}
	if err != nil {
		return nil, fmt.Errorf("client: get %s[%d]: %w", name, index, err)
	}
	if in.Sealed {
		sl, err := c.sealer(ctx, in)
		if err != nil {
			return nil, err
		}
		// A record the device altered, moved or kept from another
		// generation fails here.
		if q.Record, err = sl.Open(nil, uint64(index), q.Record); err != nil {
			if in.scheme() == SchemeLWE {
				return nil, c.answerFailed(in, index, err)
			}
			return nil, fmt.Errorf("client: get %s[%d]: %w", name, index, err)
		}
	}
	return q, nil
}

// sealer is the Sealer of database generation in.
func (c *Client) sealer(ctx context.Context, in *Info) (*seal.Sealer, error) {
	var salt seal.Salt
	if len(in.Salt) != len(salt) {
		return nil, fmt.Errorf("client: %s: manifest holds no valid sealing salt", in.Name)
	}
	copy(salt[:], in.Salt)
	return seal.NewSealer(in.keys.gen, in.Name, in.Generation, salt)
}

// pirSession returns the session of a database generation: its plan set on
// the device, evaluation keys uploaded once per key set.
func (c *Client) pirSession(ctx context.Context, in *Info) (RecordQuerier, error) {
	return cachedSession(c, c.sessions, in, func() (RecordQuerier, error) {
		progs, err := c.compiled()
		if err != nil {
			return nil, err
		}
		preset, err := fhe.Lookup(in.Preset)
		if err != nil {
			return nil, err
		}
		params, err := preset.BGVParameters()
		if err != nil {
			return nil, err
		}
		shape, err := pir.NewShape(params, in.StoredRecordSize(), in.genRecords())
		if err != nil {
			return nil, err
		}
		if shape.Rows != in.pir().Rows || shape.Cols != in.pir().Cols {
			return nil, fmt.Errorf("client: %s: stored as %d × %d plaintexts, its records make %d × %d", in.Name, in.pir().Rows, in.pir().Cols, shape.Rows, shape.Cols)
		}
		sk, err := c.keys.secretKey(in.Preset)
		if err != nil {
			return nil, err
		}
		opt, err := c.sessionOptions(ctx, in)
		if err != nil {
			return nil, err
		}
		return progs.OpenPIR(ctx, c.dev, genPrefix(in), preset, shape, sk, opt)
	})
}

// cachedSession returns the session of database generation in from cache,
// or opens one and keeps it there: a session's plan and keys are set on the
// device once, not for every query.
func cachedSession[S any](c *Client, cache map[string]S, in *Info, open func() (S, error)) (S, error) {
	key := sessionKey(in)
	c.mu.Lock()
	s, ok := cache[key]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err := open()
	if err != nil {
		var none S
		return none, err
	}
	c.mu.Lock()
	cache[key] = s
	c.mu.Unlock()
	return s, nil
}

// sessionKey names generation in's sessions in the client's caches.
func sessionKey(in *Info) string { return fmt.Sprintf("%s@%d.%s", in.Name, in.Generation, in.KeyNonce) }

// sessionOptions are the options of every session of database generation
// in: its evaluation keys in the caller's member area of the database, for
// this key set, uploaded once and reused by the sessions of later
// generations.
func (c *Client) sessionOptions(ctx context.Context, in *Info) (session.Options, error) {
	me, err := c.identity(ctx)
	if err != nil {
		return session.Options{}, err
	}
	return session.Options{KeyPrefix: keyPrefix(in.Name, me, c.keys.ID()), ReuseKeys: true}, nil
}

// Drop deletes a database: its manifest first (it is gone at once), then
// its data and keys.
//
// Every member's role is taken away and every member object deleted with
// it: a database created again under the name starts with no readers and
// a new key (its incarnation is new).
func (c *Client) Drop(ctx context.Context, name string) error {
	in, err := c.readInfo(ctx, name)
	if err != nil {
		return err
	}
	for id := range in.Members {
		if _, err := c.dev.Grant(ctx, &devicepb.GrantRequest{Database: name, Identity: id, Role: api.RoleNone}); err != nil {
			return fmt.Errorf("client: drop %s: revoking %s: %w", name, id, err)
		}
	}
	if _, err := c.dev.Delete(ctx, &devicepb.DeleteRequest{Name: headObject(name)}); err != nil {
		return fmt.Errorf("client: drop %s: %w", name, err)
	}
	if err := c.keys.forgetGeneration(name); err != nil {
		return err
	}
	return c.deletePrefix(ctx, name+"/")
}

// removeSuperseded deletes, once generation in is published, the data
// and delta segments of every generation up to it but its own: earlier
// generations, and loads that lost to it or were interrupted. A load that
// began after it was published writes a later generation and is left
// alone.
func (c *Client) removeSuperseded(ctx context.Context, in *Info) error {
	if err := c.removeOther(ctx, in.Name+"/g", in.Name, genPrefix(in)+"/", in.Generation); err != nil {
		return err
	}
	return c.removeSupersededDeltas(ctx, in)
}

// removeOther deletes the objects under list of generations up to gen
// (dataGeneration(genName, object)) that are not under keep.
func (c *Client) removeOther(ctx context.Context, list, genName, keep string, gen uint64) error {
	for {
		resp, err := c.dev.List(ctx, &devicepb.ListRequest{Prefix: list})
		if err != nil {
			return err
		}
		deleted := 0
		for _, o := range resp.Objects {
			if g, ok := dataGeneration(genName, o.Name); !ok || g > gen || strings.HasPrefix(o.Name, keep) {
				continue
			}
			if _, err := c.dev.Delete(ctx, &devicepb.DeleteRequest{Name: o.Name}); err != nil && !isNotFound(err) {
				return fmt.Errorf("client: remove %s: %w", o.Name, err)
			}
			deleted++
		}
		if !resp.Truncated || deleted == 0 {
			return nil
		}
	}
}

func (c *Client) deletePrefix(ctx context.Context, prefix string) error {
	for {
		resp, err := c.dev.List(ctx, &devicepb.ListRequest{Prefix: prefix})
		if err != nil {
			return err
		}
		for _, o := range resp.Objects {
			// Gone already is no failure: a concurrent load that published
			// removes superseded data, this load's among it.
			if _, err := c.dev.Delete(ctx, &devicepb.DeleteRequest{Name: o.Name}); err != nil && !isNotFound(err) {
				return fmt.Errorf("client: delete %s: %w", o.Name, err)
			}
		}
		if !resp.Truncated {
			return nil
		}
	}
}

// countingReadSeeker is a countingReader that seeks (a second pass counts
// from the start again).
type countingReadSeeker struct {
	*countingReader
	s io.Seeker
}

func (c *countingReadSeeker) Seek(off int64, whence int) (int64, error) {
	n, err := c.s.Seek(off, whence)
	if err == nil {
		c.n = n
	}
	return n, err
}

// countingReader reports the bytes read through it.
type countingReader struct {
	r        io.Reader
	n        int64
	progress func(int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.progress != nil && n > 0 {
		c.progress(c.n)
	}
	return n, err
}
