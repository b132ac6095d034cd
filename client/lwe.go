package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"

	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/client/internal/session"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// InputSize returns the bytes left in a seekable input (and leaves it where it
// was), or -1.
func InputSize(r io.Reader) int64 {
	s, ok := r.(io.Seeker)
	if !ok {
		return -1
	}
	cur, err := s.Seek(0, io.SeekCurrent)
	if err != nil {
		return -1
	}
	end, err := s.Seek(0, io.SeekEnd)
	if _, err2 := s.Seek(cur, io.SeekStart); err != nil || err2 != nil {
		return -1
	}
	return end - cur
}

// loadLWE writes a generation of an LWE PIR database: records sealed, laid
// out in columns of a byte matrix, tiles and hint diagonals uploaded as
// they are made. The size of an input of fixed-size records (inputSize, or
// -1) sizes the matrix before the first record; otherwise the loader sizes
// it from the records it reads (see session.LWELoader).
func (c *Client) loadLWE(ctx context.Context, in *Info, r io.Reader, inputSize int64, opt LoadOptions) error {
	p, err := in.lweParams()
	if err != nil {
		return err
	}
	rr, err := dataset.NewRecordReader(r, opt.Records, in.pir().RecordSize, opt.RecordOptions())
	if err != nil {
		return err
	}
	// Only fixed-size records are counted by the input's size; lines or CSV
	// rows may be shorter than the record size, so the count is only an
	// estimate, for a database too large to wait for its end.
	count, estimate := 0, max(0, opt.ExpectedRecords)
	if inputSize > 0 {
		n := int(max(1, inputSize/int64(in.pir().RecordSize)))
		if opt.Records == dataset.FixedSize {
			count = n
		} else {
			estimate = n
		}
	}
	return c.writeLWESized(ctx, in, p, rr, count, estimate)
}

// writeLWE writes the records of rr (est of them, or -1 if unknown) as
// generation in of an LWE database, sealed (addRecords).
func (c *Client) writeLWE(ctx context.Context, in *Info, p lwepir.Params, rr interface{ Next() ([]byte, error) }, est int) error {
	return c.writeLWESized(ctx, in, p, rr, est, 0)
}

// writeLWESized is writeLWE with the count (≤ 0: unknown) and estimate of
// session.NewSizedLWELoader.
func (c *Client) writeLWESized(ctx context.Context, in *Info, p lwepir.Params, rr interface{ Next() ([]byte, error) }, count, estimate int) error {
	stored := in.StoredRecordSize()
	var seed [lwepir.SeedSize]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return err
	}
	in.pir().Seed = Hex(bytes.Clone(seed[:]))
	logCols := in.pir().LogCols
	if logCols == 0 {
		logCols = lwepir.TargetLogCols
	}
	maxRows := p.HintSlots()
	if !in.pir().ring() {
		maxRows = p.MaxPackedRows() // no diagonals: the rows may grow past the hint's slots
	}
	l, err := session.NewSizedLWELoaderCols(session.DeviceSink(c.dev), genPrefix(in), p, stored, seed, count, estimate, logCols, maxRows)
	if err != nil {
		return err
	}
	if in.pir().Packed {
		l.StorePacker()
	}
	if !in.pir().ring() {
		l.SkipDiagonals()
	}
	if err := c.addRecords(ctx, in, rr, l.Add); err != nil {
		return err
	}
	shape, err := l.Finish(ctx)
	if err != nil {
		return err
	}
	in.Records, in.pir().Rows, in.pir().Cols, in.Bytes = l.Records(), shape.Rows, shape.Cols, l.Written()+l.PackerWritten()
	return nil
}

// LWEMode chooses how LWE PIR generations are stored and queried.
type LWEMode int

const (
	// LWEPacked, the default: a generation stores the packed mode's
	// precomputation and no hint diagonals (PIROptions), and a client
	// queries in the packed mode wherever the generation stores it and the
	// device speaks it (wire version api.PackedWireVersion or later). Each
	// query carries its packing keys (253 KB at the default
	// parameters), the answer is about 9.5 KB, nothing is uploaded
	// beforehand; the device's CPU a query is about 2.3× less than the
	// ring stage's (BENCHMARKS.md).
	LWEPacked LWEMode = iota
	// LWERing: a generation stores the hint diagonals only, and a client
	// queries with the ring stage (the device evaluates H·s under BGV with
	// the client's Galois keys, uploaded once a key set) wherever the
	// generation stores the diagonals.
	LWERing
)

// ParseLWEMode reads "packed" or "ring" ("" is LWEPacked).
func ParseLWEMode(s string) (LWEMode, error) {
	switch s {
	case "", "packed":
		return LWEPacked, nil
	case "ring":
		return LWERing, nil
	}
	return 0, fmt.Errorf("client: LWE mode %q: want packed or ring", s)
}

func (m LWEMode) String() string {
	if m == LWERing {
		return "ring"
	}
	return "packed"
}

// StoreMode makes p describe generations written in mode m: LWEPacked
// stores the packer and no diagonals, LWERing the diagonals only.
func (p *PIRPart) StoreMode(m LWEMode) {
	p.Packed, p.NoRing = m != LWERing, m != LWERing
}

// Mode is the mode p's generations are written in: LWERing for a
// description from before the packed mode, LWEPacked where they store
// the packer (alone or beside the diagonals).
func (p *PIRPart) Mode() LWEMode {
	if p.Packed {
		return LWEPacked
	}
	return LWERing
}

// SetLWEMode sets how this client queries LWE generations that store both
// modes (sessions already open keep theirs). The default is LWEPacked. A
// generation that stores one mode is queried in that mode whatever this
// says.
func (c *Client) SetLWEMode(m LWEMode) {
	c.mu.Lock()
	c.lweMode = m
	c.mu.Unlock()
}

// ErrPackedOnly reports a generation that only the packed mode answers on
// a device whose wire version predates it.
var ErrPackedOnly = errors.New("client: the generation is stored for the packed mode only, which the device does not speak")

// packingVersion is the packing version a database created now is given:
// the latest the device packs with (PackV1, the only one a device before
// packing versions knows; PackV2 before two keys).
func (c *Client) packingVersion() lwepir.PackVersion {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.wire >= api.TwoKeysWireVersion:
		return lwepir.PackLatest
	case c.wire >= api.PackingWireVersion:
		return lwepir.PackV2
	}
	return lwepir.PackV1
}

// packingWire is the first wire version whose devices pack with v.
func packingWire(v lwepir.PackVersion) uint32 {
	switch {
	case v >= lwepir.PackV3:
		return api.TwoKeysWireVersion
	case v == lwepir.PackV2:
		return api.PackingWireVersion
	}
	return api.PackedWireVersion
}

// packedLWE reports whether generation in is queried in the packed mode.
func (c *Client) packedLWE(in *Info) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := in.pir()
	need := packingWire(m.Packing)
	speaks := c.wire >= need
	switch {
	case !m.Packed:
		return false, nil
	case !m.ring():
		if !speaks {
			return false, fmt.Errorf("%w (%s: device wire version %d, packed queries of packing version %d need %d)", ErrPackedOnly, in.Name, c.wire, max(m.Packing, lwepir.PackV1), need)
		}
		return true, nil
	}
	return c.lweMode == LWEPacked && speaks, nil
}

// lweSession returns the session of an LWE database generation.
func (c *Client) lweSession(ctx context.Context, in *Info) (*session.LWESession, error) {
	return cachedSession(c, c.lsessions, in, func() (*session.LWESession, error) {
		p, err := in.lweParams()
		if err != nil {
			return nil, err
		}
		shape := lwepir.Shape{Rows: in.pir().Rows, Cols: in.pir().Cols, RecordSize: in.StoredRecordSize()}
		if err := shape.Validate(p); err != nil || shape.Records() < in.genRecords() {
			return nil, fmt.Errorf("client: %s: manifest holds no valid LWE shape (%d × %d)", in.Name, in.pir().Rows, in.pir().Cols)
		}
		var seed [lwepir.SeedSize]byte
		if len(in.pir().Seed) != len(seed) {
			return nil, fmt.Errorf("client: %s: manifest holds no valid LWE seed", in.Name)
		}
		copy(seed[:], in.pir().Seed)
		packed, err := c.packedLWE(in)
		if err != nil {
			return nil, err
		}
		if packed {
			// No key of the client's is used or stored: each query's keys
			// come from its fresh secret. A generation that failed before
			// is still not queried again.
			if err := c.keys.ringFailed(in); err != nil {
				return nil, err
			}
			return c.packedSession(genPrefix(in), p, shape, seed)
		}
		sk, err := c.keys.ringSecretKey(in, p)
		if err != nil {
			return nil, err
		}
		opt, err := c.sessionOptions(ctx, in)
		if err != nil {
			return nil, err
		}
		// A key set that set this generation's program and keys on the
		// device before (in any process) assumes they are there: a query
		// is then its one RPC after the manifest.
		ready := c.keys.ringReady(in)
		s, err := session.NewLWESession(ctx, c.dev, genPrefix(in), p, shape, seed, sk, opt.KeyPrefix, ready)
		if err == nil && !ready {
			err = c.keys.markRingReady(in)
		}
		return s, err
	})
}

// answerFailed makes an LWE answer of generation in that did not open (or
// decode) fatal for its key: the ring secret is destroyed, the cached
// session dropped, and the generation is not queried again from this key
// set. err is returned wrapped as ErrTampered, naming the database.
func (c *Client) answerFailed(in *Info, index int, err error) error {
	c.mu.Lock()
	delete(c.lsessions, sessionKey(in))
	c.mu.Unlock()
	ferr := c.keys.failRing(in)
	return errors.Join(fmt.Errorf("client: get %s[%d] (generation %d) from %s: %w: the device's answer did not verify (%v); the query key is destroyed and this generation is not queried again",
		in.Name, index, in.Generation, c.deviceName(), ErrTampered, err), ferr)
}

// packedSession opens a packed-mode session on the generation stored under
// prefix, whose requests carry several queries where the device's wire
// version allows (api.BatchWireVersion).
func (c *Client) packedSession(prefix string, p lwepir.Params, shape lwepir.Shape, seed [lwepir.SeedSize]byte) (*session.LWESession, error) {
	s, err := session.NewPackedLWESession(c.dev, prefix, p, shape, seed)
	if err != nil {
		return nil, err
	}
	if c.wire >= api.BatchWireVersion {
		s.AllowBatches(api.MaxPackedBatch)
	}
	return s, nil
}
