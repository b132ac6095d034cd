package client

import (
	"context"
	"io"
)

// Store holds a user's databases: one device (NewStore over a Client) or a
// cluster of them (cluster.NewStore). Its handles are typed by kind, each
// with only the methods its kind has; a handle does no I/O until used,
// and its first call fails with ErrKind if the database is another kind.
type Store interface {
	// Create makes an empty database of the kind spec gives.
	Create(ctx context.Context, name string, spec Spec) (Description, error)
	// Info reads a database's description (a device's verified manifest,
	// a cluster's shard map).
	Info(ctx context.Context, name string) (Description, error)
	// Drop deletes a database and everything stored of it.
	Drop(ctx context.Context, name string) error
	PIR(name string) PIRDatabase
	KV(name string) KVDatabase
	Vectors(name string) VectorDatabase
	Close() error
}

// Description is a store's record of one database: a device's manifest
// (*Info) or a cluster's shard map (*cluster.Map), both beginning with a
// Header.
type Description interface {
	Head() *Header
}

// Described returns d as a Description, none on an error: a nil *Info
// (or *cluster.Map) in the interface would not be a nil Description.
func Described[D Description](d D, err error) (Description, error) {
	if err != nil {
		return nil, err
	}
	return d, nil
}

// Spec is what Create makes: exactly one of PIR, KV and Vectors, and, on
// a cluster, its shards and the replicas of each (0: the cluster's
// defaults; one device holds one copy: more is refused there).
type Spec struct {
	PIR     *PIRSpec
	KV      *KVOptions
	Vectors *VectorSpec

	Shards, Replicas int
}

// PIRSpec is a PIR database's record size and options.
type PIRSpec struct {
	RecordSize int
	PIROptions
}

// VectorSpec is a vector database's dimensions and options.
type VectorSpec struct {
	Dim int
	VectorOptions
}

// Kind is the kind of database the spec makes ("" if it names none or
// several).
func (s Spec) Kind() Kind {
	var k Kind
	n := 0
	if s.PIR != nil {
		k, n = KindPIR, n+1
	}
	if s.KV != nil {
		k, n = KindKV, n+1
	}
	if s.Vectors != nil {
		k, n = KindVectors, n+1
	}
	if n != 1 {
		return ""
	}
	return k
}

// PIRDatabase reads records privately by index.
type PIRDatabase interface {
	// Load replaces the records with those r holds (opt.Records says how).
	Load(ctx context.Context, r io.Reader, opt LoadOptions) (Description, error)
	// Get reads record index without the device learning which.
	Get(ctx context.Context, index int) (*Record, error)
	// GetMany reads several records, each as Get does.
	GetMany(ctx context.Context, indices []int) ([][]byte, error)
}

// PIRUpdater is a PIR database changed in place between loads (one
// device's; a cluster's are reloaded whole).
type PIRUpdater interface {
	Set(ctx context.Context, index int, record []byte) (*Update, error)
	Append(ctx context.Context, records ...[]byte) (*Appended, error)
	AppendFrom(ctx context.Context, r io.Reader, opt LoadOptions) (*Appended, error)
	// Compact folds the updates into a new generation.
	Compact(ctx context.Context) (Description, error)
}

// KVDatabase reads values by key privately, and changes them.
type KVDatabase interface {
	// Load replaces the pairs with those r holds (opt.KV and opt.Header
	// say how).
	Load(ctx context.Context, r io.Reader, opt LoadOptions) (Description, error)
	Lookup(ctx context.Context, key []byte) ([]byte, error)
	LookupMany(ctx context.Context, keys [][]byte) ([]KVLookup, error)
	Put(ctx context.Context, key, value []byte) (*Update, error)
	Delete(ctx context.Context, key []byte) (*Update, error)
	// Compact folds the updates into a new generation.
	Compact(ctx context.Context) (Description, error)
}

// VectorDatabase finds the stored vectors nearest an encrypted query.
type VectorDatabase interface {
	// Load replaces the vectors with those r holds (opt.Vectors says how;
	// r must be seekable).
	Load(ctx context.Context, r io.Reader, opt LoadOptions) (Description, error)
	Nearest(ctx context.Context, query []float32, k int) (*Neighbors, error)
}

// Record is one record read privately, and what reading it cost.
type Record struct {
	Index int    `json:"index"`
	Data  []byte `json:"record"`
	// Generation the record was read from (0: not reported).
	Generation uint64 `json:"generation,omitempty"`
	// QueryBytes and AnswerBytes crossed the connection up and down
	// (Measured), or are the ciphertext payloads (an in-process device);
	// a cluster's sum over the devices it queried.
	QueryBytes  int64 `json:"query_bytes"`
	AnswerBytes int64 `json:"answer_bytes"`
	Measured    bool  `json:"measured"`
	// OnDevice: the device scanned (not the host); Retries: replicas
	// that failed and were replaced (a cluster).
	OnDevice bool    `json:"on_device"`
	Retries  int     `json:"retries,omitempty"`
	Seconds  float64 `json:"seconds"`
}

// Sharer is a store on which a database's owner grants others access (one
// device's: a grant is sealed to the grantee's member key and signed).
type Sharer interface {
	Grant(ctx context.Context, name, identity string, role Role, memberKey []byte) error
	Revoke(ctx context.Context, name, identity string) error
}
