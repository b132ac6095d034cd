package client

import (
	"crypto/hpke"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// A key set's member key receives grants: an owner seals a database's key
// to a reader's public key with HPKE (RFC 9180; ML-KEM-768 + X25519, so the
// grant stays secret against a future quantum adversary; HKDF-SHA256;
// AES-256-GCM), and only the reader's private key opens it. The private
// key is `member.key` (mode 0600), the public one `member.pub`, the file a
// reader hands to an owner.

const (
	memberKeyFile = "member.key"
	// MemberPublicKeyFile is the file of a key directory a reader gives an
	// owner to be granted a database.
	MemberPublicKeyFile = "member.pub"
)

func memberKEM() hpke.KEM { return hpke.MLKEM768X25519() }

// loadMemberKey reads the key set's member key, making it when a key
// directory from before grants has none.
func loadMemberKey(dir string) (hpke.PrivateKey, error) {
	path := filepath.Join(dir, memberKeyFile)
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		k, err := memberKEM().GenerateKey()
		if err != nil {
			return nil, fmt.Errorf("client: member key: %w", err)
		}
		priv, err := k.Bytes()
		if err != nil {
			return nil, fmt.Errorf("client: member key: %w", err)
		}
		if err := writePrivate(path, priv); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, MemberPublicKeyFile), k.PublicKey().Bytes(), 0o644); err != nil {
			return nil, fmt.Errorf("client: member key: %w", err)
		}
		return k, nil
	}
	if err != nil {
		return nil, fmt.Errorf("client: member key: %w", err)
	}
	raw, err := readPrivate(path, fi)
	if err != nil {
		return nil, err
	}
	k, err := memberKEM().NewPrivateKey(raw)
	if err != nil {
		return nil, fmt.Errorf("client: member key %s: %w", path, err)
	}
	return k, nil
}

// MemberPublicKey is the public key an owner seals grants to (the content
// of member.pub).
func (k *Keys) MemberPublicKey() []byte { return k.member.PublicKey().Bytes() }

// readPrivate reads a key file, refused when others may read or write it.
func readPrivate(path string, fi os.FileInfo) ([]byte, error) {
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s has mode %#o; a key must be readable by its owner only (chmod 600)", ErrKeyPermissions, path, perm)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("client: keys: %w", err)
	}
	return raw, nil
}

// writePrivate writes a new 0600 file and syncs it.
func writePrivate(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("client: keys: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("client: keys: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("client: keys: %w", err)
	}
	return f.Close()
}
