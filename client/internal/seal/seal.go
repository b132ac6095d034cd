// Package seal encrypts a database's records on the client, so that the
// device stores and streams only ciphertext: PIR hides which record a
// query reads, sealing hides what the records say.
//
// Each load of a database (one generation) gets its own AES-256-GCM key,
// derived with HKDF-SHA256 from the owner's 32-byte data key, the
// database's name, the generation and a random 32-byte salt chosen for
// that load (kept in the database's manifest; it is not secret). Under a
// key used by one load only, record i's nonce is i itself, so a sealed
// record is the record plus a 16-byte tag and no stored nonce: a PIR scan
// costs per byte, so the 24 bytes a random nonce would add are avoided.
// The associated data binds the database name, the generation and the
// index: a record moved to another index, another generation or another
// database fails to open (ErrOpen).
//
// AES-GCM is from the standard library (constant time with the AES and
// carry-less multiply instructions amd64 and arm64 have); HKDF from
// crypto/hkdf.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// KeySize is the size of a data key and of a load's salt.
const KeySize = 32

// Overhead is what sealing adds to a record: the GCM tag.
const Overhead = 16

// DataKey is an owner's record key: it never leaves the client.
type DataKey [KeySize]byte

// Salt makes one load's key unique even when a generation number is
// reused (a load that failed before publishing, then retried).
type Salt [KeySize]byte

// NewDataKey draws a data key from crypto/rand.
func NewDataKey() (DataKey, error) {
	var k DataKey
	if _, err := rand.Read(k[:]); err != nil {
		return k, fmt.Errorf("seal: %w", err)
	}
	return k, nil
}

// NewSalt draws a load's salt from crypto/rand.
func NewSalt() (Salt, error) {
	var s Salt
	if _, err := rand.Read(s[:]); err != nil {
		return s, fmt.Errorf("seal: %w", err)
	}
	return s, nil
}

// ErrOpen is returned for a record that is not what was sealed at that
// index of that generation of that database.
var ErrOpen = errors.New("tampered: failed authentication (altered, moved, planted or from another generation)")

// Sealer seals and opens the records of one generation of one database.
// Safe for concurrent use.
type Sealer struct {
	aead cipher.AEAD
	ad   []byte // the name and generation; the index is appended per record
}

// keyInfo is HKDF's info: a version label, the name and the generation.
func keyInfo(db string, generation uint64) []byte {
	info := []byte("rosemary record key v1\x00")
	info = binary.BigEndian.AppendUint32(info, uint32(len(db)))
	info = append(info, db...)
	return binary.BigEndian.AppendUint64(info, generation)
}

// NewSealer derives the key of generation g of database db.
func NewSealer(key DataKey, db string, g uint64, salt Salt) (*Sealer, error) {
	k, err := hkdf.Key(sha256.New, key[:], salt[:], string(keyInfo(db, g)), 32)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return &Sealer{aead: aead, ad: keyInfo(db, g)}, nil
}

func (s *Sealer) nonceAndAD(index uint64) ([]byte, []byte) {
	nonce := make([]byte, s.aead.NonceSize())
	binary.BigEndian.PutUint64(nonce[len(nonce)-8:], index)
	ad := binary.BigEndian.AppendUint64(append([]byte(nil), s.ad...), index)
	return nonce, ad
}

// Seal appends record index, sealed, to dst. Each index must be sealed
// once per Sealer (once per load): the nonce is the index.
func (s *Sealer) Seal(dst []byte, index uint64, record []byte) []byte {
	nonce, ad := s.nonceAndAD(index)
	return s.aead.Seal(dst, nonce, record, ad)
}

// Open appends the record sealed at index to dst, or fails with ErrOpen.
func (s *Sealer) Open(dst []byte, index uint64, sealed []byte) ([]byte, error) {
	if len(sealed) < Overhead {
		return nil, fmt.Errorf("%w: %d bytes, shorter than a tag", ErrOpen, len(sealed))
	}
	nonce, ad := s.nonceAndAD(index)
	out, err := s.aead.Open(dst, nonce, sealed, ad)
	if err != nil {
		return nil, ErrOpen
	}
	return out, nil
}
