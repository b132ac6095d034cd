package client

import (
	"context"
	"crypto/hpke"
	"errors"
	"fmt"

	"github.com/rosemary-fhe/rosemary/client/internal/seal"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/authz"
)

// Role is what an identity is to a database.
type Role = api.Role

// Roles Grant gives.
const (
	RoleReader = api.RoleReader // may query (Get, Nearest)
	RoleOwner  = api.RoleOwner  // may do everything
)

// localIdentity names an in-process caller's area of a database (an
// in-process device checks no identity).
const localIdentity = "local"

// identity is the caller's identity as the device sees it (its
// certificate's common name), asked once.
func (c *Client) identity(ctx context.Context) (string, error) {
	c.mu.Lock()
	me := c.me
	c.mu.Unlock()
	if me != "" {
		return me, nil
	}
	cfg, err := c.dev.Config(ctx, &api.ConfigRequest{})
	if err != nil {
		return "", fmt.Errorf("client: config: %w", err)
	}
	me = cfg.Caller
	if me == "" {
		me = localIdentity
	}
	c.mu.Lock()
	c.me = me
	c.mu.Unlock()
	return me, nil
}

// grantObject is where the key of database db sealed to member to lies.
func grantObject(db, to string) string { return authz.MemberPrefix(db, to) + "grant" }

func grantInfo(db, to string) []byte { return []byte("rosemary grant v1\x00" + db + "\x00" + to) }

// Grant gives identity the role on database name (only its owner may). A
// reader may query the database but not load, drop or read its objects;
// memberKey is the reader's public key (its key directory's member.pub):
// the database's key is sealed to it and left on the device, where only
// that reader can open it. The data key itself never leaves this client.
func (c *Client) Grant(ctx context.Context, name, identity string, role Role, memberKey []byte) error {
	if _, err := c.readInfo(ctx, name); err != nil {
		return err
	}
	if role != RoleReader && role != RoleOwner {
		return fmt.Errorf("client: grant of role %d (want reader or owner)", role)
	}
	pub, err := memberKEM().NewPublicKey(memberKey)
	if err != nil {
		return fmt.Errorf("client: grant %s to %s: the member key: %w", name, identity, err)
	}
	key, err := c.keys.databaseKey(name)
	if err != nil {
		return err
	}
	sealed, err := hpke.Seal(pub, hpke.HKDFSHA256(), hpke.AES256GCM(), grantInfo(name, identity), key[:])
	if err != nil {
		return fmt.Errorf("client: grant %s to %s: %w", name, identity, err)
	}
	if _, err := c.dev.Grant(ctx, &api.GrantRequest{Database: name, Identity: identity, Role: role}); err != nil {
		return fmt.Errorf("client: grant %s to %s: %w", name, identity, err)
	}
	if err := c.writeBlob(ctx, grantObject(name, identity), sealed, nil); err != nil {
		return fmt.Errorf("client: grant %s to %s: %w", name, identity, err)
	}
	return nil
}

// Revoke takes identity's role on database name away and deletes what
// was left for it. (A reader that kept the key can still open records it
// already fetched; the device answers it no more queries.)
func (c *Client) Revoke(ctx context.Context, name, identity string) error {
	if _, err := c.dev.Grant(ctx, &api.GrantRequest{Database: name, Identity: identity, Role: api.RoleNone}); err != nil {
		return fmt.Errorf("client: revoke %s from %s: %w", name, identity, err)
	}
	return c.deletePrefix(ctx, authz.MemberPrefix(name, identity))
}

// databaseKey is the key the records of database name are sealed under: a
// grant left for this caller opens to it; otherwise the caller is the
// owner and derives it from its data key.
func (c *Client) databaseKey(ctx context.Context, name string) (seal.DataKey, error) {
	var key seal.DataKey
	me, err := c.identity(ctx)
	if err != nil {
		return key, err
	}
	sealed, err := c.readBlob(ctx, grantObject(name, me))
	switch {
	case err != nil && isNotFound(err):
		return c.keys.databaseKey(name)
	case err != nil:
		return key, fmt.Errorf("client: %s: grant: %w", name, err)
	}
	b, err := hpke.Open(c.keys.member, hpke.HKDFSHA256(), hpke.AES256GCM(), grantInfo(name, me), sealed)
	if err != nil || len(b) != len(key) {
		return key, fmt.Errorf("client: %s: the grant left for %s does not open with this key set: %w", name, me, errors.Join(err, ErrTampered))
	}
	copy(key[:], b)
	return key, nil
}
