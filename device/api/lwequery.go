package api

import (
	"context"
	"fmt"

	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// LWEQueryRequest is one query of an LWE PIR database generation, the typed
// PIR service (Device.QueryLWE): the parameter set and shape the client
// verified in the database's manifest, where the generation's objects and
// the caller's Galois keys are, and the query itself. The device builds
// the answer from them; no stream program is set.
type LWEQueryRequest struct {
	Params     string // the parameter set's name
	Rows, Cols int    // the stored byte matrix
	RecordSize int    // a stored record's bytes
	Generation string // the generation's object prefix ("<db>/g<gen>.<token>")
	Keys       string // the prefix of the caller's Galois keys
	// Query is the LWE vector, one instance per limb of packed 32-bit
	// words; Secret the ring secret encrypted under BGV (its limbs).
	Query  [][][]uint64
	Secret [][]uint64
}

// maxLWEDim bounds a query's rows and columns before they size anything
// (fhe/lwepir checks the shape exactly).
const maxLWEDim = 1 << 30

func lweQueryFromProto(m *devicepb.LWEQueryRequest) (*LWEQueryRequest, error) {
	for what, s := range map[string]string{"parameter set": m.GetParams(), "generation": m.GetGeneration(), "key prefix": m.GetKeys()} {
		if err := checkNameLen(what, s); err != nil {
			return nil, err
		}
	}
	if m.GetRows() == 0 || m.GetRows() > maxLWEDim || m.GetCols() == 0 || m.GetCols() > maxLWEDim || m.GetRecordSize() == 0 || m.GetRecordSize() > maxLWEDim {
		return nil, fmt.Errorf("%w: an LWE shape of %d × %d, records of %d bytes", ErrInvalid, m.GetRows(), m.GetCols(), m.GetRecordSize())
	}
	vals, err := valuesFromProto("query", []*devicepb.StreamValues{{Instances: m.GetQuery()}})
	if err != nil {
		return nil, err
	}
	secret, err := decodeLimbs("secret", m.GetSecret().GetData())
	if err != nil {
		return nil, err
	}
	return &LWEQueryRequest{Params: m.GetParams(), Rows: int(m.GetRows()), Cols: int(m.GetCols()), RecordSize: int(m.GetRecordSize()),
		Generation: m.GetGeneration(), Keys: m.GetKeys(), Query: vals[0].Instances, Secret: secret}, nil
}

func lweQueryToProto(r *LWEQueryRequest) *devicepb.LWEQueryRequest {
	m := &devicepb.LWEQueryRequest{Params: r.Params, Rows: uint32(min(max(r.Rows, 0), maxLWEDim+1)), Cols: uint64(max(r.Cols, 0)),
		RecordSize: uint32(min(max(r.RecordSize, 0), maxLWEDim+1)), Generation: r.Generation, Keys: r.Keys,
		Secret: &devicepb.Instance{Data: encodeLimbs(r.Secret)}}
	for _, in := range r.Query {
		m.Query = append(m.Query, &devicepb.Instance{Data: encodeLimbs(in)})
	}
	return m
}

func (s *server) QueryLWE(ctx context.Context, in *devicepb.LWEQueryRequest) (*devicepb.RunStreamResponse, error) {
	return handle(ctx, "QueryLWE", in, lweQueryFromProto, s.d.QueryLWE, runStreamRespToProto)
}

func (c *client) QueryLWE(ctx context.Context, req *LWEQueryRequest) (*RunStreamResponse, error) {
	return call(ctx, "QueryLWE", c.rpc.QueryLWE, lweQueryToProto(req), runStreamRespFromProto)
}
