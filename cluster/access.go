package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rosemary-fhe/rosemary/device/certs"
)

// Who may touch what in etcd (etcd's RBAC; the user is the common name of
// the client certificate, etcd's --client-cert-auth):
//
//	device d: read and write DeviceKey(d) (register, keep alive, leave),
//	          read the registry (copy sources are registered devices)
//	user u:   read the registry and every shard map; read and write the
//	          maps under MapKey(u, …), the databases u owns, and the
//	          deltas of its keyword databases, KVDeltaKey(u, …)
//	admin:    etcd's root role: everything (repair and rebalance rewrite
//	          any map; adding users)
//	server:   no etcd user: refused everything
//
// A name unknown to etcd is refused everything too, so a certificate the
// CA signed is not enough: its holder must also be added (AddUser).

// ErrDenied is returned when etcd refuses a request to the caller.
var ErrDenied = errors.New("cluster: etcd refused it to this identity")

// Denied marks etcd's permission errors with ErrDenied: permission
// denied, no user (a connection without a name), and "user name not
// found", etcd's answer to an administrative request of a caller it does
// not know.
func Denied(err error) error {
	if errors.Is(err, rpctypes.ErrPermissionDenied) || errors.Is(err, rpctypes.ErrUserEmpty) || errors.Is(err, rpctypes.ErrUserNotFound) {
		return fmt.Errorf("%w: %w", ErrDenied, err)
	}
	return err
}

// DeviceKey is where device id registers (a device may write only its
// own).
func DeviceKey(id string) string { return devicesPrefix + id }

// MapKey is where the shard map of owner's database name lives: under the
// owner's prefix, which only the owner and admins may write.
func MapKey(owner, name string) string { return dbsPrefix + owner + "/" + name }

// LoadsKey is the prefix of the claims of the loads running on owner's
// database name (claim.go): under the owner's loads prefix, which only the
// owner and admins may write.
func LoadsKey(owner, name string) string { return loadsPrefix + owner + "/" + name + "/" }

// rootName is etcd's superuser and its role, which etcd requires before it
// enables authentication.
const rootName = "root"

// SetupAuth turns etcd's authentication on, as etcd requires: the root
// role, a root user holding it (without a password, so that only a
// certificate named root could act as it, and certs.Issue makes none),
// then admin as a user with the root role, then auth. An etcd whose auth
// is already on is left as it is. cli must be admin's connection (before
// auth is on, etcd lets any authenticated client do this).
func SetupAuth(ctx context.Context, cli *clientv3.Client, admin certs.Identity) error {
	st, err := cli.AuthStatus(ctx)
	if err != nil {
		return fmt.Errorf("%w: auth status: %w", ErrEtcd, Denied(err))
	}
	if st.Enabled {
		return nil
	}
	if admin.Role != certs.RoleAdmin {
		return fmt.Errorf("cluster: %s sets up etcd's auth: want an admin", admin)
	}
	if err := ensureRole(ctx, cli, rootName); err != nil {
		return err
	}
	for _, u := range []string{rootName, admin.Name} {
		if err := ensureUser(ctx, cli, u, rootName); err != nil {
			return err
		}
	}
	if _, err := cli.AuthEnable(ctx); err != nil {
		return fmt.Errorf("%w: enable auth: %w", ErrEtcd, Denied(err))
	}
	return nil
}

// AddUser lets id into etcd with the rights its role calls for (above).
// It may be called again: what exists is kept and the grants repeated.
func AddUser(ctx context.Context, cli *clientv3.Client, id certs.Identity) error {
	if id.Name == "" || id.Name == rootName || strings.ContainsAny(id.Name, "/") {
		return fmt.Errorf("cluster: etcd user %q (not empty, not %q, no '/')", id.Name, rootName)
	}
	type grant struct {
		key, end string
		perm     clientv3.PermissionType
	}
	read, rw := clientv3.PermissionType(clientv3.PermRead), clientv3.PermissionType(clientv3.PermReadWrite)
	prefix := func(p string, perm clientv3.PermissionType) grant {
		return grant{p, clientv3.GetPrefixRangeEnd(p), perm}
	}
	var role string
	var grants []grant
	switch id.Role {
	case certs.RoleAdmin:
		return ensureUser(ctx, cli, id.Name, rootName)
	case certs.RoleDevice:
		role = "rosemary-device-" + id.Name
		grants = []grant{{DeviceKey(id.Name), "", rw}, prefix(devicesPrefix, read)}
	case certs.RoleUser:
		role = "rosemary-user-" + id.Name
		grants = []grant{prefix(devicesPrefix, read), prefix(dbsPrefix, read), prefix(MapKey(id.Name, ""), rw), prefix(LoadsKey(id.Name, "")[:len(LoadsKey(id.Name, ""))-1], rw),
			prefix(kvPrefix+id.Name+"/", rw)}
	default:
		return fmt.Errorf("cluster: %s has no business with etcd", id)
	}
	if err := ensureRole(ctx, cli, role); err != nil {
		return err
	}
	for _, g := range grants {
		if _, err := cli.RoleGrantPermission(ctx, role, g.key, g.end, g.perm); err != nil {
			return fmt.Errorf("%w: grant %s on %s: %w", ErrEtcd, role, g.key, Denied(err))
		}
	}
	return ensureUser(ctx, cli, id.Name, role)
}

func ensureRole(ctx context.Context, cli *clientv3.Client, role string) error {
	roles, err := cli.RoleList(ctx)
	if err != nil {
		return fmt.Errorf("%w: list roles: %w", ErrEtcd, Denied(err))
	}
	if slices.Contains(roles.Roles, role) {
		return nil
	}
	if _, err := cli.RoleAdd(ctx, role); err != nil {
		return fmt.Errorf("%w: add role %s: %w", ErrEtcd, role, Denied(err))
	}
	return nil
}

// ensureUser makes name a user without a password (its certificate is its
// credential) holding role.
func ensureUser(ctx context.Context, cli *clientv3.Client, name, role string) error {
	users, err := cli.UserList(ctx)
	if err != nil {
		return fmt.Errorf("%w: list users: %w", ErrEtcd, Denied(err))
	}
	if !slices.Contains(users.Users, name) {
		if _, err := cli.UserAddWithOptions(ctx, name, "", &clientv3.UserAddOptions{NoPassword: true}); err != nil {
			return fmt.Errorf("%w: add user %s: %w", ErrEtcd, name, Denied(err))
		}
	}
	if _, err := cli.UserGrantRole(ctx, name, role); err != nil {
		return fmt.Errorf("%w: grant %s to %s: %w", ErrEtcd, role, name, Denied(err))
	}
	return nil
}
