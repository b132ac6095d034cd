package client

import (
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rosemary-fhe/rosemary/client/internal/seal"
)

// A key set's data key seals the records of its databases (package seal):
// 32 bytes from crypto/rand in `data.key` (mode 0600; it never leaves the
// client). Each generation of each database seals under its own key
// derived from it (trust.go), so that one generation's key can be handed
// to a reader without the others, or the next.

const dataKeyFile = "data.key"

// loadDataKey reads the key set's data key, making it when a key directory
// from before sealing has none.
func loadDataKey(dir string) (seal.DataKey, error) {
	var k seal.DataKey
	path := filepath.Join(dir, dataKeyFile)
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		if _, err := rand.Read(k[:]); err != nil {
			return k, fmt.Errorf("client: data key: %w", err)
		}
		return k, writePrivate(path, k[:])
	}
	if err != nil {
		return k, fmt.Errorf("client: data key: %w", err)
	}
	raw, err := readPrivate(path, fi)
	if err != nil {
		return k, err
	}
	if len(raw) != len(k) {
		return k, fmt.Errorf("client: data key: %s holds %d bytes, want %d", path, len(raw), len(k))
	}
	copy(k[:], raw)
	return k, nil
}

// databaseKey is the key set's long-lived key for label: the tag key of a
// keyword database named so (its tags outlive generations), and what a
// cluster's keyword database seals its delta under. A database's records
// are sealed under its generation's key instead (trust.go).
func (k *Keys) databaseKey(db string) (seal.DataKey, error) {
	var out seal.DataKey
	b, err := hkdf.Key(sha256.New, k.data[:], nil, "rosemary database key v1\x00"+db, len(out))
	if err != nil {
		return out, fmt.Errorf("client: data key: %w", err)
	}
	copy(out[:], b)
	return out, nil
}
