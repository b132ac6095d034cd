package e2e

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
	"github.com/rosemary-fhe/rosemary/optiprime/graph"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
)

// layerFile is the weight file of convolution i (op index) for the
// prepared choice: the protocol and log N in the name, the plan and the
// weights in the file's digest.
func (p *prepared) layerFile(i int) string {
	return filepath.Join(p.dir, fmt.Sprintf("%s-n%d-op%03d.weights", p.s.h.Protocol, p.s.h.LogN, i))
}

// writeLayer encodes convolution i's weights and writes them to its file,
// unless the file there already holds them.
func (p *prepared) writeLayer(ev *cheetah.Evaluator, i int, op graph.Op) error {
	s, pl := p.s, p.s.plans[i]
	name := p.layerFile(i)
	if f, err := os.Open(name); err == nil {
		fi, err := f.Stat()
		if err == nil {
			err = pl.CheckWeightFile(f, fi.Size(), s.ringWeights(op))
		}
		f.Close()
		if err == nil {
			return nil // encoded by an earlier run
		}
	}
	ws, err := s.prepareWeights(ev, op, pl)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(p.dir, ".weights-*")
	if err != nil {
		return fmt.Errorf("e2e: %s weights: %w", op.Name, err)
	}
	err = pl.WriteWeights(f, ws)
	if err == nil {
		// On disk before it is named: a later server checks a file's
		// header, not every coefficient's bytes, and a crash would
		// otherwise leave a named file whose pages were never written
		// (zeros, valid coefficients). It also keeps the writeback of
		// gigabytes of weights out of the sessions that follow.
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err == nil {
		err = syncDir(p.dir)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("e2e: %s weights: %w", op.Name, err)
	}
	return nil
}

// readLayer reads convolution i's weights from its file.
func (p *prepared) readLayer(i int, op graph.Op) (*linear.Weights, int64, error) {
	f, err := os.Open(p.layerFile(i))
	if err != nil {
		return nil, 0, fmt.Errorf("e2e: %s weights: %w", op.Name, err)
	}
	defer f.Close()
	cr := &countReader{r: f}
	ws, err := p.s.plans[i].ReadWeights(cr, p.s.ringWeights(op))
	if err != nil {
		return nil, 0, fmt.Errorf("e2e: %s weights (%s): %w", op.Name, p.layerFile(i), err)
	}
	return ws, cr.n, nil
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

// weightStream reads a session's weight files in the order the session
// reaches its convolutions, one layer ahead: the reader holds layer k+1
// until the session, done with layer k, takes it, so at most two layers
// are live. The reading is I/O and decoding, overlapped with the session's
// work (its CPU is the session's, in whatever kind runs meanwhile).
type weightStream struct {
	c     chan loadedLayer
	stop  chan struct{}
	bytes atomic.Int64
}

type loadedLayer struct {
	i   int
	ws  *linear.Weights
	err error
}

func (p *prepared) stream(n *graph.Net) *weightStream {
	st := &weightStream{c: make(chan loadedLayer), stop: make(chan struct{})}
	go func() {
		defer close(st.c)
		for i, op := range n.Ops {
			if op.Kind != graph.Conv {
				continue
			}
			ws, nb, err := p.readLayer(i, op)
			st.bytes.Add(nb)
			select {
			case st.c <- loadedLayer{i, ws, err}:
			case <-st.stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return st
}

// next returns convolution i's weights (the session's next convolution).
func (st *weightStream) next(i int) (*linear.Weights, error) {
	l, ok := <-st.c
	switch {
	case !ok:
		return nil, errors.New("e2e: weight files ended before the network")
	case l.err != nil:
		return nil, l.err
	case l.i != i:
		return nil, fmt.Errorf("e2e: internal: weight file of op %d read for op %d", l.i, i)
	}
	return l.ws, nil
}

// close ends the reader (a session that failed or ended early).
func (st *weightStream) close() { close(st.stop) }

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
