package client

import (
	"context"
	"errors"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/client/internal/session"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/pir"
)

// Programs serves the database kinds whose queries are compiled FHE
// programs the device runs — BGV PIR and encrypted vector search: it plans
// and lowers their queries (the compiler, the code generator, the key
// ids they name) and encodes their vectors. Package client/programs is the
// implementation; a Client given none (WithPrograms) serves LWE PIR and
// keyword databases — the default kinds, answered by the device's typed
// PIR service — and links no planner, code generator or interpreter, and
// refuses the others with ErrNoPrograms.
type Programs interface {
	// OpenPIR opens the query session of a BGV PIR database generation
	// stored under gen (its program set on dev, the keys of opt stored).
	OpenPIR(ctx context.Context, dev api.Device, gen string, preset fhe.Preset, shape pir.Shape, sk *rlwe.SecretKey,
		opt session.Options) (RecordQuerier, error)
	// CheckVectors reports whether vectors of coefficients coefficients
	// can be searched under preset.
	CheckVectors(preset string, coefficients int) error
	// NewVectorLoader starts writing a vector database generation under gen.
	NewVectorLoader(sink session.ObjectSink, gen string, v session.Vectors, sk *rlwe.SecretKey) (VectorLoader, error)
	// OpenVectors opens the query session of a vector database generation.
	OpenVectors(ctx context.Context, dev api.Device, gen string, v session.Vectors, sk *rlwe.SecretKey,
		opt session.Options) (VectorQuerier, error)
}

// RecordQuerier, VectorLoader and VectorQuerier are what a Programs
// opens: a BGV PIR session, a vector database's loader and its session.
type (
	RecordQuerier = session.RecordQuerier
	VectorLoader  = session.VectorLoader
	VectorQuerier = session.VectorQuerier
)

// ErrNoPrograms: a BGV PIR or vector database asked of a client given no
// Programs (WithPrograms).
var ErrNoPrograms = errors.New("client: BGV PIR and vector databases need the compiled programs (client/programs, WithPrograms)")

// WithPrograms gives c the compiled programs of BGV PIR and vector
// databases, and returns c.
func (c *Client) WithPrograms(p Programs) *Client {
	c.mu.Lock()
	c.programs = p
	c.mu.Unlock()
	return c
}

// compiled returns c's Programs, or ErrNoPrograms.
func (c *Client) compiled() (Programs, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.programs == nil {
		return nil, ErrNoPrograms
	}
	return c.programs, nil
}
