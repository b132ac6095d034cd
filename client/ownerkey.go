package client

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A key set's owner key signs the grants its owner leaves for readers
// (Ed25519, `owner.key`, mode 0600; its public half `owner.pub`). HPKE as
// Go implements it has no authenticated mode for the ML-KEM hybrid, and a
// base-mode grant can be sealed by anyone holding the reader's public key
// — a device included. So a grant is sealed to the reader and signed by the
// owner, and a reader accepts only grants signed by a key it was told to
// trust out of band (TrustOwner, `rosemary db trust`): the device can hand
// it no database key of its own making.

const (
	ownerKeyFile = "owner.key"
	// OwnerPublicKeyFile is the file of a key directory an owner gives its
	// readers, who trust it to sign grants (Keys.TrustOwner).
	OwnerPublicKeyFile = "owner.pub"
	trustedOwnersFile  = "trusted-owners"
)

// loadOwnerKey reads the key set's owner key, making it when a key
// directory from before signed grants has none.
func loadOwnerKey(dir string) (ed25519.PrivateKey, error) {
	path := filepath.Join(dir, ownerKeyFile)
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		pub, priv, err := ed25519.GenerateKey(nil) // crypto/rand
		if err != nil {
			return nil, fmt.Errorf("client: owner key: %w", err)
		}
		if err := writePrivate(path, priv.Seed()); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, OwnerPublicKeyFile), pub, 0o644); err != nil {
			return nil, fmt.Errorf("client: owner key: %w", err)
		}
		return priv, nil
	}
	if err != nil {
		return nil, fmt.Errorf("client: owner key: %w", err)
	}
	raw, err := readPrivate(path, fi)
	if err != nil {
		return nil, err
	}
	if len(raw) != ed25519.SeedSize {
		return nil, fmt.Errorf("client: owner key: %s holds %d bytes, want %d", path, len(raw), ed25519.SeedSize)
	}
	return ed25519.NewKeyFromSeed(raw), nil
}

// OwnerPublicKey is the public key that verifies the grants this key set
// signs (the content of owner.pub).
func (k *Keys) OwnerPublicKey() []byte {
	return append([]byte(nil), k.owner.Public().(ed25519.PublicKey)...)
}

// KeyFingerprint is the short form of a public key users compare.
func KeyFingerprint(pub []byte) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// TrustOwner records pub (an owner's owner.pub) as a key whose grants
// this key set accepts; label says whose it is. A reader does this once,
// with a key it got from the owner by a channel the device does not
// control.
func (k *Keys) TrustOwner(label string, pub []byte) error {
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("client: trust %s: an owner key is %d bytes, not %d", label, ed25519.PublicKeySize, len(pub))
	}
	if label == "" || strings.ContainsAny(label, " \t\r\n") {
		return fmt.Errorf("client: trust: label %q (one word)", label)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	trusted, err := k.trustedLocked()
	if err != nil {
		return err
	}
	for _, t := range trusted {
		if bytes.Equal(t, pub) {
			return nil
		}
	}
	path := filepath.Join(k.dir, trustedOwnersFile)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("client: trust: %w", err)
	}
	if _, err := fmt.Fprintf(f, "%s %s\n", hex.EncodeToString(pub), label); err != nil {
		f.Close()
		return fmt.Errorf("client: trust: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("client: trust: %w", err)
	}
	return f.Close()
}

// trustsOwner reports whether pub is this key set's own owner key or one
// it was told to trust.
func (k *Keys) trustsOwner(pub []byte) (bool, error) {
	if bytes.Equal(pub, k.OwnerPublicKey()) {
		return true, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	trusted, err := k.trustedLocked()
	if err != nil {
		return false, err
	}
	for _, t := range trusted {
		if bytes.Equal(t, pub) {
			return true, nil
		}
	}
	return false, nil
}

// trustedLocked reads the trusted owner keys (k.mu held).
func (k *Keys) trustedLocked() ([][]byte, error) {
	path := filepath.Join(k.dir, trustedOwnersFile)
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("client: trusted owners: %w", err)
	}
	// Whoever may write this file may choose whom the client believes.
	raw, err := readPrivate(path, fi)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for line := 1; sc.Scan(); line++ {
		h, _, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if h == "" {
			continue
		}
		pub, err := hex.DecodeString(h)
		if err != nil || len(pub) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("client: %s line %d is not an owner key", path, line)
		}
		out = append(out, pub)
	}
	return out, sc.Err()
}
