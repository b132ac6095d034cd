package client

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/objname"
)

// Role is what an identity is to a database.
type Role = api.Role

// Roles Grant gives.
const (
	RoleReader = api.RoleReader // may query (Get, Nearest)
	RoleOwner  = api.RoleOwner  // may do everything on the device; keys stay with the creator's key set
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
	cfg, err := c.dev.Config(ctx, &devicepb.ConfigRequest{})
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

// maxManifestTries bounds the compare-and-swap retries of a manifest edit
// that races updates.
const maxManifestTries = 8

// Grant gives identity the role on database name (only its owner may). A
// reader may query the database but not load, drop or read its objects;
// memberKey is the reader's public key (its key directory's member.pub):
// the current generation's key is sealed to it, signed with this key
// set's owner key (which the reader must trust: `rosemary db trust`) and
// left on the device; every later generation's key is too, until Revoke.
// The data key itself never leaves this client.
func (c *Client) Grant(ctx context.Context, name, identity string, role Role, memberKey []byte) error {
	if role != RoleReader && role != RoleOwner {
		return fmt.Errorf("client: grant of role %d (want reader or owner)", role)
	}
	if _, err := memberKEM().NewPublicKey(memberKey); err != nil {
		return fmt.Errorf("client: grant %s to %s: the member key: %w", name, identity, err)
	}
	if _, err := c.readInfo(ctx, name); err != nil {
		return err
	}
	if _, err := c.dev.Grant(ctx, &devicepb.GrantRequest{Database: name, Identity: identity, Role: role}); err != nil {
		return fmt.Errorf("client: grant %s to %s: %w", name, identity, err)
	}
	return c.editMembers(ctx, name, func(in *Info) error {
		if err := c.writeGrant(ctx, in, identity, memberKey); err != nil {
			return err
		}
		in.Members[identity] = Member{Role: role, MemberKey: append([]byte(nil), memberKey...)}
		return nil
	})
}

// editMembers applies edit to a copy of the manifest's member list and
// publishes it (same generation), retrying when an update raced it.
func (c *Client) editMembers(ctx context.Context, name string, edit func(*Info) error) error {
	for range maxManifestTries {
		in, headGen, err := c.readHead(ctx, name)
		if err != nil {
			return err
		}
		if !in.keys.owned {
			return fmt.Errorf("client: %s: %w", name, ErrNotKeyOwner)
		}
		next := *in
		next.Parts = in.Parts.Clone()
		next.Members = maps.Clone(in.Members)
		if next.Members == nil {
			next.Members = map[string]Member{}
		}
		if err := edit(&next); err != nil {
			return err
		}
		err = c.writeInfo(ctx, &next, headGen)
		if !errors.Is(err, api.ErrStale) {
			return err
		}
	}
	return fmt.Errorf("client: %s: the manifest kept changing (%d tries)", name, maxManifestTries)
}

// Revoke takes identity's role on database name away, deletes what was
// left for it and rotates the database's key: a keyword or LWE PIR
// database is rewritten at once as a new generation under a fresh key
// (wrapped for the remaining readers only); any other kind gets its next
// key at its next load, before which nothing new is written to it. A
// reader that kept a key can still open what it already fetched; the
// device answers it no more queries.
func (c *Client) Revoke(ctx context.Context, name, identity string) error {
	if _, err := c.dev.Grant(ctx, &devicepb.GrantRequest{Database: name, Identity: identity, Role: api.RoleNone}); err != nil {
		return fmt.Errorf("client: revoke %s from %s: %w", name, identity, err)
	}
	if err := c.editMembers(ctx, name, func(in *Info) error {
		delete(in.Members, identity)
		return nil
	}); err != nil {
		return fmt.Errorf("client: revoke %s from %s: %w", name, identity, err)
	}
	if err := c.deletePrefix(ctx, objname.Member(name, identity)); err != nil {
		return err
	}
	in, err := c.readInfo(ctx, name)
	if err != nil {
		return err
	}
	if in.Generation > 0 && in.scheme() == SchemeLWE && (in.Kind == KindKV || in.Kind == KindPIR) {
		if _, err := c.compact(ctx, name, "", true); err != nil {
			return fmt.Errorf("client: revoke %s from %s: rotating the key: %w", name, identity, err)
		}
	}
	return nil
}
