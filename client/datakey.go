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
// client). Each database seals under its own key derived from it, so that
// one database's key can be handed to a reader without the others.

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

// databaseKey is the key database db's records are sealed under.
func (k *Keys) databaseKey(db string) (seal.DataKey, error) {
	var out seal.DataKey
	b, err := hkdf.Key(sha256.New, k.data[:], nil, "rosemary database key v1\x00"+db, len(out))
	if err != nil {
		return out, fmt.Errorf("client: data key: %w", err)
	}
	copy(out[:], b)
	return out, nil
}
