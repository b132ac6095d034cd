package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/rosemary-fhe/rosemary/fhe/lwepir"

	"github.com/rosemary-fhe/rosemary/client/kv"
)

// Parts holds the kind-specific part of a database's description: exactly
// one of its fields is set, the one of the header's kind. A manifest
// (Info) and a cluster's shard map embed it, so a reader of a PIR database
// never sees a vector field, and the JSON holds the part as one object
// ("pir", "keyword" or "vectors").
type Parts struct {
	PIR     *PIRPart    `json:"pir,omitempty"`
	KV      *KVPart     `json:"keyword,omitempty"`
	Vectors *VectorPart `json:"vectors,omitempty"`
}

// PIRPart describes a database of fixed-size records read by private
// information retrieval: kind pir, and the buckets of a keyword database.
type PIRPart struct {
	RecordSize int `json:"record_size"`
	// Scheme: SchemeLWE (the default) or SchemeBGV. LWEParams names the
	// LWE parameter set and Seed the public matrix of the current
	// generation; neither is secret.
	Scheme    PIRScheme `json:"scheme,omitempty"`
	LWEParams string    `json:"lwe_params,omitempty"`
	Seed      Hex       `json:"seed,omitempty"`
	// Rows and Cols: the stored matrix (BGV: plaintexts; LWE: bytes).
	Rows int `json:"rows,omitempty"`
	Cols int `json:"cols,omitempty"`
	// Packed: the LWE generation stores the packed mode's precomputation
	// (objname.LWEPacker); generations loaded before it have none.
	// NoRing: it stores no hint diagonals, so it answers only in the
	// packed mode (databases created in LWEPacked mode, the default).
	// Neither (manifests from before the packed mode, and LWERing
	// databases): the ring stage only; Packed alone: either mode.
	Packed bool `json:"packed,omitempty"`
	NoRing bool `json:"no_ring,omitempty"`
	// Packing is the packed mode's version (lwepir.PackVersion), chosen
	// when the database is created and kept by every generation: its
	// packers' gadget and its queries' keys. Absent (every manifest
	// written before it): lwepir.PackV1. A keyword database's index and
	// heap share the version of its KVPart's.
	Packing lwepir.PackVersion `json:"packing,omitempty"`
	// LogCols: every generation is laid out below 2^LogCols columns
	// (PIROptions.LogCols; absent: lwepir.TargetLogCols).
	LogCols int `json:"log_cols,omitempty"`
}

// ring reports whether the generation stores the ring stage's diagonals.
func (p *PIRPart) ring() bool { return !p.NoRing }

// KVPart describes a keyword database: a cuckoo table whose buckets are
// the records of an LWE PIR database (PIRPart; the header's Records counts
// buckets).
type KVPart struct {
	PIRPart
	// Layout is the table's shape; HashSeed the seed of its bucket choices
	// in the current generation (public: the tags it hashes are secret);
	// Entries the keys of the current generation.
	Layout   kv.Layout `json:"layout"`
	HashSeed Hex       `json:"hash_seed,omitempty"`
	Entries  int       `json:"entries,omitempty"`
	// Heap: the heap layout (KVHeapLayout; kvheap.go): the buckets
	// (PIRPart, HashSeed) are an index of one pointer a key, and the values
	// lie in a second LWE database. Nil: the cuckoo layout, values cut into
	// chunks in the buckets (every manifest written before it).
	Heap *KVHeap `json:"heap,omitempty"`
}

// VectorPart describes a database of vectors searched by encrypted inner
// product.
type VectorPart struct {
	Dim    int    `json:"dim"`
	Metric Metric `json:"metric"`
	// Norm: the longest stored vector's length; vectors are stored
	// divided by it (so are queries).
	Norm float64 `json:"norm,omitempty"`
	// Encrypted: the vectors are stored as CKKS ciphertexts
	// (VectorOptions.EncryptVectors); Key is the fingerprint of the secret
	// key they are encrypted under (keyFingerprint), set by a load.
	Encrypted bool   `json:"encrypted,omitempty"`
	Key       string `json:"key,omitempty"`
}

// ErrParts reports a description whose kind-specific part is missing,
// doubled or of another kind than its header says.
var ErrParts = errors.New("client: a database description's kind-specific part does not match its kind")

// Matrix is the PIR database that stores the records: a PIR database's
// own, a keyword database's buckets'; nil for vectors.
func (p *Parts) Matrix() *PIRPart {
	switch {
	case p.PIR != nil:
		return p.PIR
	case p.KV != nil:
		return &p.KV.PIRPart
	}
	return nil
}

// check reports whether exactly the part of kind is set.
func (p *Parts) check(kind Kind) error {
	set := 0
	for _, ok := range []bool{p.PIR != nil, p.KV != nil, p.Vectors != nil} {
		if ok {
			set++
		}
	}
	want := map[Kind]bool{KindPIR: p.PIR != nil, KindKV: p.KV != nil, KindVectors: p.Vectors != nil}
	if set != 1 || !want[kind] {
		return fmt.Errorf("%w: kind %q", ErrParts, kind)
	}
	if m := p.Matrix(); m != nil && m.NoRing && !m.Packed {
		return fmt.Errorf("%w: an LWE generation with neither the ring stage's diagonals nor the packer", ErrParts)
	}
	return nil
}

func (p *Parts) empty() bool { return p.PIR == nil && p.KV == nil && p.Vectors == nil }

// legacyParts is the flat form descriptions had before the parts
// (manifests written by earlier builds, and their tags cover those bytes;
// shard maps in etcd): read, never written.
type legacyParts struct {
	RecordSize int        `json:"record_size"`
	Scheme     PIRScheme  `json:"scheme"`
	LWEParams  string     `json:"lwe_params"`
	Seed       Hex        `json:"seed"`
	Rows       int        `json:"rows"`
	Cols       int        `json:"cols"`
	KV         *kv.Layout `json:"kv"`
	HashSeed   Hex        `json:"hash_seed"`
	Entries    int        `json:"entries"`
	Dim        int        `json:"dim"`
	Metric     Metric     `json:"metric"`
	Norm       float64    `json:"norm"`
	Encrypted  bool       `json:"encrypted_vectors"`
	EncryptMap bool       `json:"encrypt_vectors"` // a shard map's name for it
	VectorKey  string     `json:"vector_key"`
}

// DecodeParts fills p from b, the JSON of a description of kind (a
// manifest, a cluster's map) already decoded into p: it checks the parts
// as written now, or reads the flat fields of a legacy description.
func DecodeParts(b []byte, kind Kind, p *Parts) error {
	if !p.empty() {
		return p.check(kind)
	}
	var l legacyParts
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	pir := PIRPart{RecordSize: l.RecordSize, Scheme: l.Scheme, LWEParams: l.LWEParams, Seed: l.Seed, Rows: l.Rows, Cols: l.Cols}
	switch kind {
	case KindPIR:
		p.PIR = &pir
	case KindKV:
		if l.KV == nil {
			return fmt.Errorf("%w: a keyword database without its layout", ErrParts)
		}
		p.KV = &KVPart{PIRPart: pir, Layout: *l.KV, HashSeed: l.HashSeed, Entries: l.Entries}
	case KindVectors:
		p.Vectors = &VectorPart{Dim: l.Dim, Metric: l.Metric, Norm: l.Norm, Encrypted: l.Encrypted || l.EncryptMap, Key: l.VectorKey}
	default:
		return fmt.Errorf("%w: kind %q", ErrParts, kind)
	}
	return nil
}

// pir is the manifest's PIR part (Matrix), or an empty one for a kind
// without (decoding guarantees a PIR or keyword manifest has its part).
func (in *Info) pir() *PIRPart {
	if m := in.Matrix(); m != nil {
		return m
	}
	return &PIRPart{}
}

// Clone is a copy of p that shares nothing with it: a description copied
// to become the next generation's must not write its parts into the one
// it came from.
func (p Parts) Clone() Parts {
	if p.PIR != nil {
		c := *p.PIR
		c.Seed = bytes.Clone(c.Seed)
		p.PIR = &c
	}
	if p.KV != nil {
		c := *p.KV
		c.Seed, c.HashSeed = bytes.Clone(c.Seed), bytes.Clone(c.HashSeed)
		if c.Heap != nil {
			h := *c.Heap
			h.PIR.Seed = bytes.Clone(h.PIR.Seed)
			c.Heap = &h
		}
		p.KV = &c
	}
	if p.Vectors != nil {
		c := *p.Vectors
		p.Vectors = &c
	}
	return p
}
