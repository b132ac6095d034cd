package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/device/authz"
)

// dbKeys makes a key directory (`rosemary db keys`).
func dbKeys(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	if *f.keys == "" {
		return errors.New("db keys: --keys DIR is required")
	}
	k, err := client.NewKeys(*f.keys)
	if err != nil {
		return err
	}
	pub := filepath.Join(k.Dir(), client.MemberPublicKeyFile)
	owner := filepath.Join(k.Dir(), client.OwnerPublicKeyFile)
	return f.print(map[string]string{"keys": k.Dir(), "key_set": k.ID(), "member_key": pub, "owner_key": owner,
		"owner_key_fingerprint": client.KeyFingerprint(k.OwnerPublicKey())},
		fmt.Sprintf("new keys in %s (key set %s); the secret key files are 0600 and never leave this machine;\n"+
			"an owner grants you a database with your public %s; your readers trust your grants with `rosemary db trust` on your %s (fingerprint %s)",
			k.Dir(), k.ID(), pub, owner, client.KeyFingerprint(k.OwnerPublicKey())))
}

// dbTrust records an owner's key whose grants the key set accepts (`rosemary db trust`).
func dbTrust(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	label := f.fs.String("owner", "", "who the key belongs to (one word: their identity)")
	ownerKey := f.fs.String("owner-key", "", "the owner's owner.pub, received from them by a channel the device does not control")
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	if *f.keys == "" || *label == "" || *ownerKey == "" {
		return errors.New("db trust: --keys DIR, --owner IDENTITY and --owner-key FILE are required")
	}
	k, err := client.LoadKeys(*f.keys)
	if err != nil {
		return err
	}
	pub, err := os.ReadFile(*ownerKey)
	if err != nil {
		return fmt.Errorf("db trust: %w", err)
	}
	if err := k.TrustOwner(*label, pub); err != nil {
		return err
	}
	fp := client.KeyFingerprint(pub)
	return f.print(map[string]string{"trusted": *label, "fingerprint": fp},
		fmt.Sprintf("grants signed by %s's key %s are accepted (check the fingerprint with them)", *label, fp))
}

// dbGrant gives an identity a role on a database, or takes it away (revoke) (`rosemary db grant|revoke`).
func dbGrant(ctx context.Context, cmd string, f *dbFlags, args []string) error {
	to := f.fs.String("to", "", "identity (certificate common name) to grant to or revoke from")
	roleName := f.fs.String("role", "reader", "grant: reader (may query) or owner (may do everything)")
	memberKey := f.fs.String("member-key", "", "grant: the grantee's public member key (member.pub of its key directory)")
	st, err := f.parseOpen(ctx, args)
	if err != nil {
		return err
	}
	defer st.Close()
	c, ok := sharer(st)
	if !ok {
		return fmt.Errorf("db %s: grants are a device's (give --device or --store)", cmd)
	}
	if *to == "" {
		return errors.New("db " + cmd + ": --to IDENTITY is required")
	}
	if cmd == "revoke" {
		if err := c.Revoke(ctx, *f.name, *to); err != nil {
			return err
		}
		return f.print(map[string]string{"revoked": *to, "name": *f.name}, fmt.Sprintf("revoked %s's access to %q", *to, *f.name))
	}
	role, err := authz.ParseRole(*roleName)
	if err != nil || role == authz.None {
		return fmt.Errorf("db grant: --role %q (want reader or owner)", *roleName)
	}
	if *memberKey == "" {
		return errors.New("db grant: --member-key FILE is required (the grantee's member.pub: it receives the database's key)")
	}
	pub, err := os.ReadFile(*memberKey)
	if err != nil {
		return err
	}
	if err := c.Grant(ctx, *f.name, *to, role, pub); err != nil {
		return err
	}
	return f.print(map[string]string{"granted": *to, "name": *f.name, "role": *roleName}, fmt.Sprintf("granted %s the %s role on %q", *to, *roleName, *f.name))
}
