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
	l, err := session.NewSizedLWELoader(session.DeviceSink(c.dev), genPrefix(in), p, stored, seed, count, estimate)
	if err != nil {
		return err
	}
	if in.pir().Packed {
		l.StorePacker()
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

// LWEMode chooses how the client queries LWE PIR generations.
type LWEMode int

const (
	// LWERing: the ring stage (the device evaluates H·s under BGV with
	// the client's Galois keys, uploaded once a key set).
	LWERing LWEMode = iota
	// LWEPacked: the packed mode where the generation stores it (its
	// manifest says Packed) and the device speaks it (wire version
	// api.PackedWireVersion or later), else the ring stage: each query carries its
	// packing keys (about 380 KB at the default parameters), the answer is
	// about 9.5 KB, nothing is uploaded beforehand.
	LWEPacked
)

// SetLWEMode sets how this client queries LWE generations from now on
// (sessions already open keep theirs). The default is LWERing.
func (c *Client) SetLWEMode(m LWEMode) {
	c.mu.Lock()
	c.lweMode = m
	c.mu.Unlock()
}

// packedLWE reports whether generation in is queried in the packed mode.
func (c *Client) packedLWE(in *Info) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lweMode == LWEPacked && in.pir().Packed && c.wire >= api.PackedWireVersion
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
		if c.packedLWE(in) {
			// No key of the client's is used or stored: each query's keys
			// come from its fresh secret. A generation that failed before
			// is still not queried again.
			if err := c.keys.ringFailed(in); err != nil {
				return nil, err
			}
			return session.NewPackedLWESession(c.dev, genPrefix(in), p, shape, seed)
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
