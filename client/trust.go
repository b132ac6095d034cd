package client

import (
	"context"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/hpke"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/rosemary-fhe/rosemary/client/internal/seal"
	"github.com/rosemary-fhe/rosemary/device/objname"
)

// The client believes nothing about a database that it did not make or
// cannot verify. What it reads from a device is checked here:
//
//   - The manifest travels in an envelope with an HMAC-SHA256 tag under a
//     key derived from the generation's key; a manifest that does not
//     verify is refused with ErrTampered, and so are a changed kind,
//     parameter set, shape, seed, salt, generation or delta list.
//   - Each generation has its own key: the owner derives it from its data
//     key and the manifest's fresh KeyNonce (a PRF under a key only the
//     owner holds, so to anyone else it is random), and never takes it from
//     the device. A reader gets it in a grant: sealed to the reader's member
//     key (HPKE) and signed by the owner's owner key, which the reader was
//     told to trust out of band; a planted or altered grant is refused.
//   - A new generation (load, compaction, revoke) has a new key, wrapped
//     for the readers the manifest lists: a revoked reader's key opens
//     nothing written after it.

// ErrNoGrant: the caller is not the database's owner and no grant for its
// current generation is left for it.
var ErrNoGrant = errors.New("client: no grant for this database's generation")

// ErrNotKeyOwner: only the key set that created a database makes its
// generations and grants.
var ErrNotKeyOwner = errors.New("client: this key set did not create the database (only its creator's key set writes generations and grants)")

// dbKeys are the keys of one generation of a database.
type dbKeys struct {
	gen   seal.DataKey // seals the generation's records and delta, MACs its manifest
	tags  seal.DataKey // keys a keyword database's tag hasher (one per database: tags outlive generations)
	owned bool         // derived here: this key set created the database
}

const nonceBytes = 16

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// lengthPrefixed appends each part with its length, so that no two lists of
// parts encode alike.
func lengthPrefixed(dst []byte, parts ...string) []byte {
	for _, p := range parts {
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(p)))
		dst = append(dst, p...)
	}
	return dst
}

// ownerKeys derives the keys of generation in as its owner.
func (k *Keys) ownerKeys(in *Info) (dbKeys, error) {
	var out dbKeys
	info := lengthPrefixed([]byte("rosemary generation key v2\x00"), in.Name, in.Incarnation, in.KeyNonce)
	b, err := hkdf.Key(sha256.New, k.data[:], nil, string(info), len(out.gen))
	if err != nil {
		return out, fmt.Errorf("client: data key: %w", err)
	}
	copy(out.gen[:], b)
	if out.tags, err = k.databaseKey(in.Name); err != nil {
		return out, err
	}
	out.owned = true
	return out, nil
}

// startGeneration gives in (a database being created, or its next
// generation) a fresh key: a new nonce, the owner's derivation.
func (c *Client) startGeneration(in *Info) error {
	if in.Incarnation == "" {
		inc, err := randomHex(nonceBytes)
		if err != nil {
			return err
		}
		in.Incarnation = inc
	}
	nonce, err := randomHex(nonceBytes)
	if err != nil {
		return err
	}
	in.KeyNonce = nonce
	in.OwnerKey = c.keys.OwnerPublicKey()
	in.keys, err = c.keys.ownerKeys(in)
	return err
}

// signedManifest is a head object: the manifest's JSON and its tag.
type signedManifest struct {
	Manifest json.RawMessage `json:"manifest"`
	MAC      []byte          `json:"mac"`
}

func manifestMAC(key seal.DataKey, name string, manifest []byte) ([]byte, error) {
	mk, err := hkdf.Key(sha256.New, key[:], nil, string(lengthPrefixed([]byte("rosemary manifest mac v2\x00"), name)), 32)
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, mk)
	m.Write(manifest)
	return m.Sum(nil), nil
}

// sealManifest encodes in as a head object; only its owner can.
func sealManifest(in *Info) ([]byte, error) {
	if !in.keys.owned {
		return nil, fmt.Errorf("client: publish %s: %w", in.Name, ErrNotKeyOwner)
	}
	body, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	tag, err := manifestMAC(in.keys.gen, in.Name, body)
	if err != nil {
		return nil, err
	}
	return json.Marshal(signedManifest{Manifest: body, MAC: tag})
}

// openManifest decodes and verifies the head object of database name:
// under the key set's own derivation if it made the database, else under
// the key of the grant left for the caller.
func (c *Client) openManifest(ctx context.Context, name string, raw []byte, floor seenGeneration) (*Info, error) {
	env, in, err := decodeManifest(name, raw)
	if err != nil {
		return nil, err
	}
	var keys dbKeys
	mine := hmac.Equal(in.OwnerKey, c.keys.OwnerPublicKey())
	if mine {
		keys, err = c.keys.ownerKeys(in)
	} else {
		keys, err = c.grantedKeys(ctx, in)
	}
	if err != nil {
		return nil, err
	}
	tag, err := manifestMAC(keys.gen, name, env.Manifest)
	if err != nil {
		return nil, err
	}
	if !hmac.Equal(tag, env.MAC) {
		return nil, fmt.Errorf("client: %s: %w: the manifest's tag does not verify", name, ErrTampered)
	}
	in.keys = keys
	if err := in.checkParams(); err != nil {
		return nil, err
	}
	if err := c.keys.checkGeneration(in, floor); err != nil {
		return nil, err
	}
	return in, nil
}

// grant is a database generation's keys sealed to one reader and signed
// by the database's owner.
type grant struct {
	OwnerKey []byte `json:"owner_key"` // ed25519 public key of the signer
	Sealed   []byte `json:"sealed"`    // HPKE ciphertext of gen ‖ tags
	Sig      []byte `json:"sig"`
}

// grantObject is where the keys of database in's generation sealed to
// member to lie.
func grantObject(in *Info, to string) string {
	return objname.Grant(in.Name, to, in.KeyNonce)
}

// grantContext binds a grant to its database, reader and generation.
func grantContext(in *Info, to string) []byte {
	return lengthPrefixed([]byte("rosemary grant v2\x00"), in.Name, to, in.Incarnation, in.KeyNonce)
}

func grantSigned(in *Info, to string, sealed []byte) []byte {
	return append(grantContext(in, to), sealed...)
}

// writeGrant leaves generation in's keys for reader to, sealed to its
// member key.
func (c *Client) writeGrant(ctx context.Context, in *Info, to string, memberKey []byte) error {
	if !in.keys.owned {
		return fmt.Errorf("client: grant %s to %s: %w", in.Name, to, ErrNotKeyOwner)
	}
	pub, err := memberKEM().NewPublicKey(memberKey)
	if err != nil {
		return fmt.Errorf("client: grant %s to %s: the member key: %w", in.Name, to, err)
	}
	payload := append(append([]byte(nil), in.keys.gen[:]...), in.keys.tags[:]...)
	sealed, err := hpke.Seal(pub, hpke.HKDFSHA256(), hpke.AES256GCM(), grantContext(in, to), payload)
	if err != nil {
		return fmt.Errorf("client: grant %s to %s: %w", in.Name, to, err)
	}
	g := grant{OwnerKey: c.keys.OwnerPublicKey(), Sealed: sealed, Sig: ed25519.Sign(c.keys.owner, grantSigned(in, to, sealed))}
	b, err := json.Marshal(g)
	if err != nil {
		return err
	}
	if err := c.writeBlob(ctx, grantObject(in, to), b, nil); err != nil {
		return fmt.Errorf("client: grant %s to %s: %w", in.Name, to, err)
	}
	return nil
}

// writeGrants leaves generation in's keys for every reader its manifest
// lists (before the generation is published, so they find them).
func (c *Client) writeGrants(ctx context.Context, in *Info) error {
	for id, m := range in.Members {
		if err := c.writeGrant(ctx, in, id, m.MemberKey); err != nil {
			return err
		}
	}
	return nil
}

// grantedKeys opens the grant left for the caller for generation in.
func (c *Client) grantedKeys(ctx context.Context, in *Info) (dbKeys, error) {
	var keys dbKeys
	me, err := c.identity(ctx)
	if err != nil {
		return keys, err
	}
	obj := grantObject(in, me)
	c.mu.Lock()
	keys, ok := c.grants[obj]
	c.mu.Unlock()
	if ok {
		return keys, nil
	}
	raw, err := c.readBlob(ctx, obj)
	if err != nil {
		if isNotFound(err) {
			return keys, fmt.Errorf("%w: %s for %s (ask its owner for one)", ErrNoGrant, in.Name, me)
		}
		return keys, fmt.Errorf("client: %s: grant: %w", in.Name, err)
	}
	var g grant
	if err := json.Unmarshal(raw, &g); err != nil {
		return keys, fmt.Errorf("client: %s: %w: the grant left for %s is malformed", in.Name, ErrTampered, me)
	}
	trusted, err := c.keys.trustsOwner(g.OwnerKey)
	if err != nil {
		return keys, err
	}
	if !trusted || len(g.OwnerKey) != ed25519.PublicKeySize {
		return keys, fmt.Errorf("client: %s: %w: the grant left for %s is signed by key %s, which this key set does not trust (rosemary db trust)",
			in.Name, ErrTampered, me, KeyFingerprint(g.OwnerKey))
	}
	if !hmac.Equal(g.OwnerKey, in.OwnerKey) || !ed25519.Verify(g.OwnerKey, grantSigned(in, me, g.Sealed), g.Sig) {
		return keys, fmt.Errorf("client: %s: %w: the grant left for %s does not verify", in.Name, ErrTampered, me)
	}
	b, err := hpke.Open(c.keys.member, hpke.HKDFSHA256(), hpke.AES256GCM(), grantContext(in, me), g.Sealed)
	if err != nil || len(b) != len(keys.gen)+len(keys.tags) {
		return keys, fmt.Errorf("client: %s: %w: the grant left for %s does not open with this key set", in.Name, ErrTampered, me)
	}
	copy(keys.gen[:], b)
	copy(keys.tags[:], b[len(keys.gen):])
	c.mu.Lock()
	if len(c.grants) >= maxCachedGrants {
		clear(c.grants)
	}
	c.grants[obj] = keys
	c.mu.Unlock()
	return keys, nil
}

// maxCachedGrants bounds the opened grants a client keeps.
const maxCachedGrants = 256

// UnverifiedInfo is database name's manifest as the device holds it, its
// tag not checked: for a cluster's coordinator, which holds no key of the
// database and only compares a replica's objects with the bytes its
// manifest claims (a lie there costs a copy, not a record). Never base a
// query on it.
func (c *Client) UnverifiedInfo(ctx context.Context, name string) (*Info, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	raw, err := c.readHeadObject(ctx, name)
	if err != nil {
		return nil, err
	}
	_, in, err := decodeManifest(name, raw)
	return in, err
}

// decodeManifest decodes database name's head object, its tag unchecked.
func decodeManifest(name string, raw []byte) (signedManifest, *Info, error) {
	var env signedManifest
	if err := json.Unmarshal(raw, &env); err != nil || len(env.Manifest) == 0 {
		return env, nil, fmt.Errorf("client: %s: %w: the manifest is not a tagged envelope", name, ErrTampered)
	}
	var in Info
	if err := json.Unmarshal(env.Manifest, &in); err != nil {
		return env, nil, fmt.Errorf("client: %s: %w: manifest: %v", name, ErrTampered, err)
	}
	if in.Name != name {
		return env, nil, fmt.Errorf("client: %s: %w: the manifest names %q", name, ErrTampered, in.Name)
	}
	return env, &in, nil
}
