package device

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/authz"
	"github.com/rosemary-fhe/rosemary/device/object"
)

// TestAdversarialDeviceCopyFromRewritesNothing: a device that asks for a
// copy from a store it built itself cannot rewrite an existing database:
// not its access list (the probe made it {"owner":"alice","grants":
// {"mallory":2}}), not a member object, not its manifest, not an object
// of another shape. Everything stays byte for byte.
func TestAdversarialDeviceCopyFromRewritesNothing(t *testing.T) {
	ctx := context.Background()
	honest, evil := serveTCP(t), serveTCP(t)
	ch, ce := dialT(t, honest.addr), dialT(t, evil.addr)
	mine := []string{"acct/head", "acct/members/bob/grant.1", "acct/g1/t0"}
	putVerifyObjects(t, ch, mine...)
	// The evil store: the same names with other bytes, a new member area,
	// an object of another shape, and an access list granting mallory.
	for _, name := range []string{"acct/head", "acct/members/bob/grant.1", "acct/members/mallory/grant.1"} {
		if _, err := ce.Put(ctx, mustPut(name, object.Kind(2), 2, 1, verifyLimbs(name+"evil"), 8)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ce.Put(ctx, mustPut("acct/g1/t0", object.Kind(2), 1, 1, [][]uint64{{9, 9, 9, 9}}, 8)); err != nil {
		t.Fatal(err)
	}
	if err := evil.d.access.GrantTrusted("acct", "mallory", authz.Owner); err != nil {
		t.Fatal(err)
	}
	aclBefore, err := honest.d.LoadACL("acct")
	if err != nil || aclBefore == nil {
		t.Fatalf("access list: %v, %v", aclBefore, err)
	}
	for _, prefix := range []string{"acct/members/x/", "acct/members/", "acct/members/mallory/", "acct/", "acct/g1/"} {
		_, err := ch.CopyFrom(ctx, &devicepb.CopyFromRequest{Source: evil.addr, Prefix: prefix})
		if prefix == "acct/members/x/" {
			// Nothing listed there: nothing to write, but no access list
			// either (checked below).
			if err != nil {
				t.Fatalf("copy of an empty prefix: %v", err)
			}
			continue
		}
		if code(err) != codes.PermissionDenied && !errors.Is(err, ErrCopyRefused) {
			t.Errorf("copy of %s from a forged store: %v, want PermissionDenied", prefix, err)
		}
	}
	acl, err := honest.d.LoadACL("acct")
	if err != nil || fmt.Sprint(acl) != fmt.Sprint(aclBefore) {
		t.Fatalf("access list after the copies: %+v (was %+v), %v", acl, aclBefore, err)
	}
	for _, name := range mine {
		got, err := getObject(ctx, ch, name)
		if err != nil || fmt.Sprint(got.Data) != fmt.Sprint(verifyLimbs(name)) {
			t.Fatalf("%s after the copies: %v, %v", name, got, err)
		}
	}
	if _, err := ch.Get(ctx, &devicepb.GetRequest{Name: "acct/members/mallory/grant.1"}); code(err) != codes.NotFound {
		t.Fatalf("a member object planted by the copy: %v", err)
	}
	// A new replica (this device holds nothing of the database) is copied
	// whole, access list included: what a cluster's repair needs.
	fresh := serveTCP(t)
	cf := dialT(t, fresh.addr)
	if _, err := cf.CopyFrom(ctx, &devicepb.CopyFromRequest{Source: honest.addr, Prefix: "acct/"}); err != nil {
		t.Fatal(err)
	}
	if acl, err := fresh.d.LoadACL("acct"); err != nil || fmt.Sprint(acl) != fmt.Sprint(aclBefore) {
		t.Fatalf("a new replica's access list: %+v, %v", acl, err)
	}
}

// TestAdversarialDeviceDropClearsGrants: deleting a database's manifest
// (its drop) leaves its access list with the owner alone, so the same
// name created again grants nobody what the old one did.
func TestAdversarialDeviceDropClearsGrants(t *testing.T) {
	ctx := context.Background()
	s := serveTCP(t)
	c := dialT(t, s.addr)
	putVerifyObjects(t, c, "acct/head", "acct/g1/t0")
	if err := s.d.access.GrantTrusted("acct", "bob", authz.Reader); err != nil {
		t.Fatal(err)
	}
	if err := s.d.access.GrantTrusted("acct", "mallory", authz.Owner); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete(ctx, &devicepb.DeleteRequest{Name: "acct/head"}); err != nil {
		t.Fatal(err)
	}
	acl, err := s.d.LoadACL("acct")
	if err != nil || acl == nil || len(acl.Grants) != 0 || acl.Owner == "" {
		t.Fatalf("access list after the drop: %+v, %v; want the owner alone", acl, err)
	}
	for _, who := range []string{"bob", "mallory"} {
		if r := acl.RoleOf(who); r != authz.None {
			t.Fatalf("%s keeps role %v after the drop", who, r)
		}
	}
}
