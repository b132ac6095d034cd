package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/rosemary-fhe/rosemary/device/certs"
)

// Etcd says how a party reaches the cluster's etcd: its endpoints and the
// party's TLS configuration (its certificate and the cluster's CA, as
// certs.ClientConfig makes them). etcd takes the certificate's common
// name for the user its RBAC rules apply to (see SetupAuth). A nil TLS is
// plaintext, allowed to loopback endpoints only.
type Etcd struct {
	Endpoints []string
	TLS       *tls.Config
}

// PlaintextOwner is the owner of every database made over a plaintext
// etcd (which cannot tell parties apart).
const PlaintextOwner = "plaintext-loopback"

// ErrNoEndpoints is returned for an Etcd without endpoints.
var ErrNoEndpoints = errors.New("cluster: no etcd endpoints")

// Connect dials etcd as e says. A plaintext connection is refused unless
// every endpoint is a loopback address.
func Connect(ctx context.Context, e Etcd) (*clientv3.Client, error) {
	if len(e.Endpoints) == 0 {
		return nil, ErrNoEndpoints
	}
	if e.TLS == nil {
		for _, ep := range e.Endpoints {
			if err := certs.CheckLoopback(ep); err != nil {
				return nil, fmt.Errorf("%w: plaintext to %s: %w", ErrEtcd, ep, err)
			}
		}
	}
	// The client's own log would repeat every refused or retried request
	// on stderr; the errors returned say it once.
	cli, err := clientv3.New(clientv3.Config{Endpoints: e.Endpoints, TLS: e.TLS, DialTimeout: 5 * time.Second, Context: ctx, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("%w: %v: %w", ErrEtcd, e.Endpoints, err)
	}
	return cli, nil
}

// Identity is the party e authenticates as: its certificate's identity,
// or a user named PlaintextOwner without TLS.
func (e Etcd) Identity() (certs.Identity, error) {
	if e.TLS == nil {
		return certs.Identity{Name: PlaintextOwner, Role: certs.RoleUser}, nil
	}
	if len(e.TLS.Certificates) == 0 || len(e.TLS.Certificates[0].Certificate) == 0 {
		return certs.Identity{}, fmt.Errorf("%w: the TLS configuration holds no client certificate", ErrEtcd)
	}
	leaf := e.TLS.Certificates[0].Leaf
	if leaf == nil {
		var err error
		if leaf, err = x509.ParseCertificate(e.TLS.Certificates[0].Certificate[0]); err != nil {
			return certs.Identity{}, fmt.Errorf("%w: client certificate: %w", ErrEtcd, err)
		}
	}
	return certs.IdentityOf(leaf)
}
