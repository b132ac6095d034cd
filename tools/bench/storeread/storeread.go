package storeread

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/internal/timing"
)

// Defaults for the read-throughput comparison: 4 channels of 16 KiB pages (the
// paper's example page size) and a ciphertext-like object of 2 polys × 16
// limbs × 2^14 8-byte words (128 KiB limbs, 8 pages each; 4 MiB in total).
var (
	DefaultLayout = layout.Layout{Channels: 4, PageSize: 16 << 10}
	DefaultShape  = store.Shape{Polys: 2, Limbs: 16, LogN: 14, WordSize: 8}
)

// Bench holds one object in a store and the same bytes in one plain
// file on the same file system, to compare the store's parallel limb reads
// with a plain sequential read. Neither uses O_DIRECT and no cache is
// dropped, so after the first pass both are served from the page cache.
type Bench struct {
	st    *store.Store
	obj   *store.Object
	seq   *os.File
	shape store.Shape
	buf   []byte   // one limb
	all   [][]byte // every limb (ReadStoreObject)
}

// New creates dir/store (layout l) holding one random object of
// the given shape and dir/sequential.dat with the same limbs back to back,
// fsyncs both, and reads both once.
func New(dir string, l layout.Layout, shape store.Shape) (*Bench, error) {
	if err := shape.Validate(); err != nil {
		return nil, fmt.Errorf("storeread: %w", err)
	}
	s, err := store.Open(filepath.Join(dir, "store"), l)
	if err != nil {
		return nil, err
	}
	limbs := make([][]byte, shape.NumLimbs())
	for i := range limbs {
		limbs[i] = make([]byte, shape.LimbBytes())
		rand.Read(limbs[i])
	}
	rb := &Bench{st: s, shape: shape, buf: make([]byte, shape.LimbBytes())}
	if _, err := s.Put("readbench", store.KindCiphertext, shape, limbs); err != nil {
		rb.Close()
		return nil, err
	}
	if rb.obj, err = s.Acquire("readbench"); err != nil {
		rb.Close()
		return nil, err
	}
	if rb.seq, err = os.Create(filepath.Join(dir, "sequential.dat")); err != nil {
		rb.Close()
		return nil, fmt.Errorf("storeread: %w", err)
	}
	for _, b := range limbs {
		if _, err := rb.seq.Write(b); err != nil {
			rb.Close()
			return nil, fmt.Errorf("storeread: %w", err)
		}
	}
	if err := rb.seq.Sync(); err != nil {
		rb.Close()
		return nil, fmt.Errorf("storeread: %w", err)
	}
	if err := rb.ReadStore(); err != nil {
		rb.Close()
		return nil, err
	}
	if err := rb.ReadSequential(); err != nil {
		rb.Close()
		return nil, err
	}
	return rb, nil
}

// Bytes is the payload read by one ReadStore or ReadSequential.
func (rb *Bench) Bytes() int64 { return rb.shape.Bytes() }

// ReadStore reads every limb of the object with the store's parallel limb
// read (checksums verified).
func (rb *Bench) ReadStore() error {
	for poly := 0; poly < rb.shape.Polys; poly++ {
		for limb := 0; limb < rb.shape.Limbs; limb++ {
			if err := rb.obj.ReadLimbInto(rb.buf, poly, limb); err != nil {
				return err
			}
		}
	}
	return nil
}

// ReadStoreObject reads the whole object with the store's object read (one
// read per channel and part, all channels in parallel; checksums verified).
func (rb *Bench) ReadStoreObject() error {
	if rb.all == nil {
		rb.all = make([][]byte, rb.shape.NumLimbs())
		for i := range rb.all {
			rb.all[i] = make([]byte, rb.shape.LimbBytes())
		}
	}
	return rb.obj.ReadAllInto(rb.all)
}

// ReadSequential reads the plain file front to back, one limb-sized read at
// a time, on the calling goroutine.
func (rb *Bench) ReadSequential() error {
	n := int64(len(rb.buf))
	for i := 0; i < rb.shape.NumLimbs(); i++ {
		if _, err := rb.seq.ReadAt(rb.buf, int64(i)*n); err != nil {
			return fmt.Errorf("storeread: sequential read: %w", err)
		}
	}
	return nil
}

// Close releases the object and closes the store and the plain file.
func (rb *Bench) Close() error {
	var errs []error
	if rb.obj != nil {
		rb.obj.Release()
	}
	if rb.seq != nil {
		errs = append(errs, rb.seq.Close())
	}
	errs = append(errs, rb.st.Close())
	return errors.Join(errs...)
}

// Comparison is the outcome of Compare. Throughputs are
// payload bytes per second (MB = 10^6 bytes).
type Comparison struct {
	Layout            layout.Layout
	Shape             store.Shape
	Bytes             int64 // payload per pass
	Rounds            int
	ParallelSeconds   float64 // total over all rounds
	SequentialSeconds float64
	ParallelMBps      float64
	SequentialMBps    float64
	Ratio             float64 // ParallelMBps / SequentialMBps
}

// Compare measures, in one run, the store's parallel limb-read
// throughput against a plain sequential read of the same bytes from the same
// file system: rounds alternate one full pass of each. The figure includes
// the page cache (no O_DIRECT, no cache dropping), so on a warm cache it
// compares CPU-side costs (goroutines, checksums) more than disk bandwidth.
// dir is a scratch directory that receives dir/store and dir/sequential.dat.
func Compare(dir string, l layout.Layout, shape store.Shape, rounds int) (Comparison, error) {
	if rounds < 1 {
		return Comparison{}, fmt.Errorf("storeread: %d rounds, want at least 1", rounds)
	}
	rb, err := New(dir, l, shape)
	if err != nil {
		return Comparison{}, err
	}
	defer rb.Close()
	total, err := timing.Alternate(rounds, rb.ReadStore, rb.ReadSequential)
	if err != nil {
		return Comparison{}, err
	}
	par, seq := total[0], total[1]
	return summarize(l, shape, rounds, par, seq), nil
}

func summarize(l layout.Layout, shape store.Shape, rounds int, par, seq time.Duration) Comparison {
	c := Comparison{Layout: l, Shape: shape, Bytes: shape.Bytes(), Rounds: rounds,
		ParallelSeconds: par.Seconds(), SequentialSeconds: seq.Seconds()}
	total := float64(c.Bytes) * float64(rounds) / 1e6
	if c.ParallelSeconds > 0 {
		c.ParallelMBps = total / c.ParallelSeconds
	}
	if c.SequentialSeconds > 0 {
		c.SequentialMBps = total / c.SequentialSeconds
	}
	if c.SequentialMBps > 0 {
		c.Ratio = c.ParallelMBps / c.SequentialMBps
	}
	return c
}
