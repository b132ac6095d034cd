package certs

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
)

// Files names a party's key pair and the CA it trusts: what a daemon's
// --cert-file/--key-file/--trusted-ca-file and a client's
// --cert/--key/--cacert flags hold.
type Files struct {
	Cert, Key, CA string
}

// Set reports whether any file is named.
func (f Files) Set() bool { return f.Cert != "" || f.Key != "" || f.CA != "" }

// InDir is the files Issue wrote for name in dir.
func InDir(dir, name string) Files {
	return Files{Cert: CertFile(dir, name), Key: KeyFile(dir, name), CA: dir + string(os.PathSeparator) + CAFile}
}

// ErrIncomplete is returned when only some of the three files are named.
var ErrIncomplete = errors.New("certs: a certificate, its key and the trusted CA are needed together")

func (f Files) load() (tls.Certificate, *x509.CertPool, error) {
	if f.Cert == "" || f.Key == "" || f.CA == "" {
		return tls.Certificate{}, nil, ErrIncomplete
	}
	if err := checkPrivate(f.Key); err != nil {
		return tls.Certificate{}, nil, err
	}
	pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("certs: %w", err)
	}
	caPEM, err := os.ReadFile(f.CA)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("certs: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return tls.Certificate{}, nil, fmt.Errorf("certs: %s holds no certificate", f.CA)
	}
	return pair, pool, nil
}

// ServerConfig is a TLS 1.3 server configuration. With clientCertAuth (the
// default of every rosemary daemon) a client must present a certificate
// signed by the trusted CA; without it, one is verified when given.
func ServerConfig(f Files, clientCertAuth bool) (*tls.Config, error) {
	pair, pool, err := f.load()
	if err != nil {
		return nil, err
	}
	auth := tls.VerifyClientCertIfGiven
	if clientCertAuth {
		auth = tls.RequireAndVerifyClientCert
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{pair},
		ClientCAs:    pool,
		ClientAuth:   auth,
	}, nil
}

// ClientConfig is a TLS 1.3 client configuration presenting f's
// certificate and trusting only f's CA; the server's name is checked
// against the address dialled.
func ClientConfig(f Files) (*tls.Config, error) {
	pair, pool, err := f.load()
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{pair},
		RootCAs:      pool,
	}, nil
}

// ErrNotLoopback is returned when plaintext is asked for on an address
// other parties can reach.
var ErrNotLoopback = errors.New("plaintext is allowed on loopback addresses only")

// CheckLoopback accepts a host:port whose host is a loopback address or
// "localhost"; an empty or unspecified host (all interfaces) is refused.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotLoopback, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%w: %q", ErrNotLoopback, addr)
}

// ErrPeerRole is returned when a peer's certificate, though issued by the
// deployment's CA, carries another role than the connection needs.
var ErrPeerRole = errors.New("certs: the peer's certificate has the wrong role")

// RequirePeerRole returns a copy of cfg that also refuses a peer whose
// verified certificate carries none of roles: a device copying from
// another accepts only a device of the deployment as its source, not a
// user who runs a server with its own certificate.
func RequirePeerRole(cfg *tls.Config, roles ...Role) *tls.Config {
	out := cfg.Clone()
	prev := cfg.VerifyConnection
	out.VerifyConnection = func(cs tls.ConnectionState) error {
		if prev != nil {
			if err := prev(cs); err != nil {
				return err
			}
		}
		if len(cs.PeerCertificates) == 0 {
			return fmt.Errorf("%w: no certificate", ErrPeerRole)
		}
		id, err := IdentityOf(cs.PeerCertificates[0])
		if err != nil {
			return fmt.Errorf("%w: %w", ErrPeerRole, err)
		}
		for _, r := range roles {
			if id.Role == r {
				return nil
			}
		}
		return fmt.Errorf("%w: %s", ErrPeerRole, id)
	}
	return out
}
