package client

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hpke"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/client/internal/seal"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// Errors about keys (wrapped; test with errors.Is).
var (
	// ErrKeyPermissions: a secret key file readable or writable by others
	// than its owner.
	ErrKeyPermissions = errors.New("client: secret key file permissions")
	// ErrKeyParameters: a secret key made for other parameters than the
	// preset it is filed under.
	ErrKeyParameters = errors.New("client: secret key for other parameters")
	// ErrNoKeys: a key directory without keys (run NewKeys / `rosemary db keys`).
	ErrNoKeys = errors.New("client: no keys")
)

// Presets whose secret keys a key directory holds: PIR databases use the
// first, vector databases the second.
var keyPresets = []string{pirPreset, vectorPreset}

const (
	pirPreset    = "bgv-13"
	vectorPreset = "hevec"
	keyMagic     = "ROSEMARY SECRET KEY 1\n"
	keySetFile   = "keyset"
)

// Keys are a user's secret keys, one per parameter preset, kept in a key
// directory: each in `<preset>.sk` (mode 0600; it never leaves the
// client), with an identifier of the key set that names the evaluation
// keys uploaded for it.
type Keys struct {
	dir    string
	id     string
	sks    map[string]*rlwe.SecretKey
	data   seal.DataKey       // seals records (datakey.go)
	member hpke.PrivateKey    // opens grants (member.go)
	owner  ed25519.PrivateKey // signs grants (ownerkey.go)

	mu sync.Mutex // guards the files of the client's state (state.go, ownerkey.go)
}

// NewKeys creates a key directory (mode 0700) with fresh secret keys from
// crypto/rand. It refuses a directory that already holds keys.
func NewKeys(dir string) (*Keys, error) {
	if _, err := os.Stat(filepath.Join(dir, keySetFile)); err == nil {
		return nil, fmt.Errorf("client: %s already holds keys (remove it to make new ones)", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("client: keys: %w", err)
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, fmt.Errorf("client: keys: %w", err)
	}
	k := &Keys{dir: dir, id: hex.EncodeToString(id[:]), sks: map[string]*rlwe.SecretKey{}}
	for _, name := range keyPresets {
		params, err := rlweParameters(name)
		if err != nil {
			return nil, err
		}
		// Lattigo's key generator samples from crypto/rand-seeded streams.
		sk := rlwe.NewKeyGenerator(params).GenSecretKeyNew()
		if err := writeSecretKey(filepath.Join(dir, name+".sk"), name, params, sk); err != nil {
			return nil, err
		}
		k.sks[name] = sk
	}
	data, err := loadDataKey(dir)
	if err != nil {
		return nil, err
	}
	k.data = data
	if k.member, err = loadMemberKey(dir); err != nil {
		return nil, err
	}
	if k.owner, err = loadOwnerKey(dir); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, keySetFile), []byte(k.id+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("client: keys: %w", err)
	}
	return k, nil
}

// LoadKeys reads a key directory made by NewKeys, checking that every
// secret key file is private to its owner and was made for its preset's
// parameters.
func LoadKeys(dir string) (*Keys, error) {
	raw, err := os.ReadFile(filepath.Join(dir, keySetFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w in %s (make them with NewKeys or `rosemary db keys`)", ErrNoKeys, dir)
		}
		return nil, fmt.Errorf("client: keys: %w", err)
	}
	k := &Keys{dir: dir, id: strings.TrimSpace(string(raw)), sks: map[string]*rlwe.SecretKey{}}
	if _, err := hex.DecodeString(k.id); err != nil || len(k.id) != 32 {
		return nil, fmt.Errorf("client: keys: %s/%s is not a key-set identifier", dir, keySetFile)
	}
	for _, name := range keyPresets {
		sk, err := readSecretKey(filepath.Join(dir, name+".sk"), name)
		if err != nil {
			return nil, err
		}
		k.sks[name] = sk
	}
	if k.data, err = loadDataKey(dir); err != nil {
		return nil, err
	}
	if k.member, err = loadMemberKey(dir); err != nil {
		return nil, err
	}
	if k.owner, err = loadOwnerKey(dir); err != nil {
		return nil, err
	}
	return k, nil
}

// ID identifies the key set (it names the evaluation keys stored for it).
func (k *Keys) ID() string { return k.id }

// Dir is the key directory.
func (k *Keys) Dir() string { return k.dir }

func (k *Keys) secretKey(preset string) (*rlwe.SecretKey, error) {
	sk, ok := k.sks[preset]
	if !ok {
		return nil, fmt.Errorf("%w for preset %s in %s", ErrNoKeys, preset, k.dir)
	}
	return sk, nil
}

func rlweParameters(preset string) (rlwe.Parameters, error) {
	p, err := fhe.Lookup(preset)
	if err != nil {
		return rlwe.Parameters{}, err
	}
	switch p.Scheme {
	case fhe.BGV:
		bp, err := p.BGVParameters()
		return bp.Parameters, err
	default:
		cp, err := p.CKKSParameters()
		return cp.Parameters, err
	}
}

// paramsDigest fingerprints parameters (their binary form).
func paramsDigest(params rlwe.Parameters) (string, error) {
	b, err := params.MarshalBinary()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// A secret key file: the magic line, the preset's name, the digest of its
// parameters, then Lattigo's binary secret key.
func writeSecretKey(path, preset string, params rlwe.Parameters, sk *rlwe.SecretKey) error {
	digest, err := paramsDigest(params)
	if err != nil {
		return err
	}
	body, err := sk.MarshalBinary()
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.WriteString(keyMagic)
	b.WriteString(preset + "\n" + digest + "\n")
	b.Write(body)
	return writePrivate(path, b.Bytes())
}

func readSecretKey(path, preset string) (*rlwe.SecretKey, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("client: keys: %w", err)
	}
	raw, err := readPrivate(path, fi)
	if err != nil {
		return nil, err
	}
	rest, ok := bytes.CutPrefix(raw, []byte(keyMagic))
	if !ok {
		return nil, fmt.Errorf("client: keys: %s is not a Rosemary secret key file", path)
	}
	name, rest, ok1 := bytes.Cut(rest, []byte("\n"))
	digest, body, ok2 := bytes.Cut(rest, []byte("\n"))
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("client: keys: %s is truncated", path)
	}
	params, err := rlweParameters(preset)
	if err != nil {
		return nil, err
	}
	want, err := paramsDigest(params)
	if err != nil {
		return nil, err
	}
	if string(name) != preset || string(digest) != want {
		return nil, fmt.Errorf("%w: %s was made for preset %q (parameters %.12s…), this build's %s has parameters %.12s…",
			ErrKeyParameters, path, name, digest, preset, want)
	}
	sk := rlwe.NewSecretKey(params)
	if err := sk.UnmarshalBinary(body); err != nil {
		return nil, fmt.Errorf("client: keys: %s: %w", path, err)
	}
	if sk.Value.Q.N() != params.N() || sk.LevelQ() != params.MaxLevelQ() {
		return nil, fmt.Errorf("%w: %s holds a key of another ring", ErrKeyParameters, path)
	}
	return sk, nil
}
