package session

import (
	"context"

	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// RecordQuerier retrieves records of one database generation.
type RecordQuerier interface {
	Get(ctx context.Context, index int) (*PIRQuery, error)
}

// VectorLoader writes a vector database from its vectors in order.
type VectorLoader interface {
	Add(ctx context.Context, v []float64) error
	// Finish writes what remains and returns the bytes written.
	Finish(ctx context.Context) (int64, error)
}

// VectorQuerier scores queries against one vector database generation.
type VectorQuerier interface {
	// Scores are the query's scores against every vector, decrypted,
	// and what the device reported.
	Scores(ctx context.Context, q []float64) ([]float64, *devicepb.RunStreamResponse, error)
	QueryBytes() int64
	AnswerBytes() int64
}
