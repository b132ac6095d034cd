// Package programs serves the database kinds whose queries are compiled
// FHE programs the device runs: BGV PIR (the expanded-query PIR of package
// fhe/pir) and encrypted vector search (HEVEC). A session compiles its
// query for the Rosemary engine (package compiler), sets the plan's device
// segment on the device as a stream program (package compiler/lower), and
// stores the evaluation keys the program names; the secret key stays
// here. New is the client.Programs a Client is given (WithPrograms): an
// application that only queries LWE PIR and keyword databases does without
// it and links none of this.
package programs

import (
	"context"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/client/internal/session"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/pir"
)

// Compiled implements client.Programs (its methods return the session
// types client aliases, so this package needs nothing of client's).
type Compiled struct{}

// New returns the compiled programs of BGV PIR and vector databases.
func New() Compiled { return Compiled{} }

// OpenPIR implements client.Programs.
func (Compiled) OpenPIR(ctx context.Context, dev api.Device, gen string, preset fhe.Preset, shape pir.Shape, sk *rlwe.SecretKey,
	opt session.Options) (session.RecordQuerier, error) {
	return NewPIRSessionWith(ctx, dev, gen, preset, shape, sk, opt)
}

// CheckVectors implements client.Programs.
func (Compiled) CheckVectors(preset string, coefficients int) error {
	_, err := VectorShape(preset, 1, coefficients)
	return err
}

// shape is the HEVEC scan of v.
func shape(v session.Vectors) (s workload.HEVECShape, err error) {
	s, err = VectorShape(v.Preset, v.Count, v.Coefficients)
	s.Encrypted = v.Encrypted
	return s, err
}

// NewVectorLoader implements client.Programs.
func (Compiled) NewVectorLoader(sink session.ObjectSink, gen string, v session.Vectors, sk *rlwe.SecretKey) (session.VectorLoader, error) {
	s, err := shape(v)
	if err != nil {
		return nil, err
	}
	return NewVectorLoader(sink, gen, s, sk)
}

// OpenVectors implements client.Programs.
func (Compiled) OpenVectors(ctx context.Context, dev api.Device, gen string, v session.Vectors, sk *rlwe.SecretKey,
	opt session.Options) (session.VectorQuerier, error) {
	s, err := shape(v)
	if err != nil {
		return nil, err
	}
	return NewVectorSession(ctx, dev, gen, s, sk, opt)
}
