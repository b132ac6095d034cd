package kv

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
)

// TagSize is the size of an item's tag.
const TagSize = 16

// Tag names one chunk of one key in the table.
type Tag [TagSize]byte

// Hasher turns keys into tags. Its key is secret (derived from the owner's
// data key); the tags it makes are as good as random to anyone without it.
type Hasher struct {
	mac hash.Hash
	buf []byte
}

// NewHasher derives the tag key of a database from its 32-byte secret.
func NewHasher(secret []byte) (*Hasher, error) {
	k, err := hkdf.Key(sha256.New, secret, nil, "rosemary kv tag key v1", 32)
	if err != nil {
		return nil, fmt.Errorf("kv: %w", err)
	}
	return &Hasher{mac: hmac.New(sha256.New, k)}, nil
}

// Tag is the tag of chunk j of key. Not safe for concurrent use.
func (h *Hasher) Tag(key []byte, j int) Tag {
	h.mac.Reset()
	h.buf = binary.BigEndian.AppendUint32(h.buf[:0], uint32(j))
	h.mac.Write(h.buf)
	h.mac.Write(key)
	var t Tag
	copy(t[:], h.mac.Sum(h.buf[:0]))
	return t
}

// Choices is how many buckets an item may sit in.
const Choices = 2

// Buckets returns the candidate buckets of tag t in a table of n buckets
// built with seed. The tag is secret, so the buckets are too.
func Buckets(seed [32]byte, t Tag, n int) [Choices]int {
	var in [32 + TagSize]byte
	copy(in[:], seed[:])
	copy(in[32:], t[:])
	sum := sha256.Sum256(in[:])
	var out [Choices]int
	for i := range out {
		out[i] = int(binary.LittleEndian.Uint64(sum[8*i:]) % uint64(n))
	}
	return out
}
