package certs

import (
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
)

// ErrNotAllowed is returned for a verified client whose identity a server
// does not serve.
var ErrNotAllowed = errors.New("certs: client not allowed")

// Allow is a TLS server's identity check of its clients (for
// tls.Config.VerifyConnection, after the chain verified): the client's
// certificate must carry one of roles and, when names is not empty, one of
// names. A certificate of the CA alone is not enough: every party of a
// deployment holds one.
func Allow(roles []Role, names []string) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return fmt.Errorf("%w: no client certificate", ErrNotAllowed)
		}
		id, err := IdentityOf(cs.PeerCertificates[0])
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNotAllowed, err)
		}
		if !slices.Contains(roles, id.Role) {
			return fmt.Errorf("%w: %s (want the role %v)", ErrNotAllowed, id, roles)
		}
		if len(names) > 0 && !slices.Contains(names, id.Name) {
			return fmt.Errorf("%w: %s is not among the allowed names", ErrNotAllowed, id)
		}
		return nil
	}
}
