// Package certs makes and loads the X.509 material a Rosemary deployment
// authenticates with, and the TLS configurations built from it.
//
// The model is etcd's: one certificate authority per deployment, one key
// pair per party; the party's identity is its certificate's common name
// and its role (user, device, admin or server) is the certificate's
// organizational unit. A device daemon takes --cert-file, --key-file and
// --trusted-ca-file and requires client certificates; a client takes
// --cert, --key and --cacert. Every connection is TLS 1.3 with mutual
// authentication.
//
// Keys are ECDSA P-256 from crypto/rand; private keys are written 0600 and
// refused when readable by others, like the client's secret keys.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// Role is what a certificate's holder may be.
type Role string

// The roles a certificate carries (its subject's organizational unit).
const (
	RoleUser   Role = "user"   // owns and queries databases
	RoleDevice Role = "device" // serves a store; may copy from other devices
	RoleAdmin  Role = "admin"  // operates the cluster (status, repair)
	// RoleServer is a control-plane server's (the cluster's etcd): it
	// serves TLS and speaks to its peers, and has no rights on a device.
	RoleServer Role = "server"
)

// ParseRole parses a role name.
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case RoleUser, RoleDevice, RoleAdmin, RoleServer:
		return r, nil
	}
	return "", fmt.Errorf("certs: unknown role %q (want user, device, admin or server)", s)
}

// Identity is an authenticated party: its certificate's common name and
// role.
type Identity struct {
	Name string
	Role Role
}

func (id Identity) String() string { return id.Name + " (" + string(id.Role) + ")" }

// Plaintext is the one identity of every caller of a daemon serving
// plaintext on loopback (no certificate to name anyone).
var Plaintext = Identity{Name: "plaintext-loopback", Role: RoleUser}

// ErrNoRole is returned for a certificate that carries no known role.
var ErrNoRole = errors.New("certs: certificate carries no rosemary role")

// IdentityOf reads the identity of a verified certificate.
func IdentityOf(c *x509.Certificate) (Identity, error) {
	if c.Subject.CommonName == "" {
		return Identity{}, errors.New("certs: certificate has no common name")
	}
	for _, ou := range c.Subject.OrganizationalUnit {
		if r, err := ParseRole(ou); err == nil {
			return Identity{Name: c.Subject.CommonName, Role: r}, nil
		}
	}
	return Identity{}, ErrNoRole
}

// File names inside a certificate directory.
const (
	CAFile    = "ca.crt"
	CAKeyFile = "ca.key"
)

// CertFile and KeyFile are the files Issue writes for name.
func CertFile(dir, name string) string { return filepath.Join(dir, name+".crt") }
func KeyFile(dir, name string) string  { return filepath.Join(dir, name+".key") }

// validName keeps names usable as file names and identities.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Validity of what Init and Issue make.
const (
	caValidity   = 10 * 365 * 24 * time.Hour
	leafValidity = 2 * 365 * 24 * time.Hour
)

// Init makes a certificate authority in dir (ca.crt, ca.key). It refuses
// to overwrite an existing one.
func Init(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, CAKeyFile)); err == nil {
		return fmt.Errorf("certs: %s already holds a CA (%s)", dir, CAKeyFile)
	}
	key, tmpl, err := newKeyAndTemplate(pkix.Name{CommonName: "rosemary CA", Organization: []string{"rosemary"}}, caValidity)
	if err != nil {
		return err
	}
	tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.MaxPathLenZero = true, true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	if err := writeKey(filepath.Join(dir, CAKeyFile), key); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, CAFile), "CERTIFICATE", der, 0o644)
}

// Issue makes a key pair for name with role, signed by the CA in dir, and
// writes dir/name.crt and dir/name.key. hosts (IP addresses or DNS names)
// become the certificate's subject alternative names; a device without
// hosts gets 127.0.0.1, ::1 and localhost. Every certificate may act as a
// TLS client; a device's and a server's also as a server. The name "root"
// is refused: etcd would take its holder for its superuser.
func Issue(dir, name string, role Role, hosts []string) error {
	if !validName.MatchString(name) || name == "ca" || name == "root" {
		return fmt.Errorf("certs: bad name %q (letters, digits, . _ -; at most 64; not \"ca\" or \"root\")", name)
	}
	if _, err := ParseRole(string(role)); err != nil {
		return err
	}
	ca, caKey, err := loadCA(dir)
	if err != nil {
		return err
	}
	key, tmpl, err := newKeyAndTemplate(pkix.Name{CommonName: name, OrganizationalUnit: []string{string(role)}, Organization: []string{"rosemary"}}, leafValidity)
	if err != nil {
		return err
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if role == RoleDevice || role == RoleServer {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		if len(hosts) == 0 {
			hosts = []string{"127.0.0.1", "::1", "localhost"}
		}
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	if err := writeKey(KeyFile(dir, name), key); err != nil {
		return err
	}
	return writePEM(CertFile(dir, name), "CERTIFICATE", der, 0o644)
}

// newKeyAndTemplate draws a P-256 key and a 128-bit serial number from
// crypto/rand and starts a certificate for subject, valid from an hour ago
// (clock skew) for validity.
func newKeyAndTemplate(subject pkix.Name, validity time.Duration) (*ecdsa.PrivateKey, *x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, nil, fmt.Errorf("certs: %w", err)
	}
	now := time.Now()
	return key, &x509.Certificate{SerialNumber: serial, Subject: subject, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(validity)}, nil
}

func loadCA(dir string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	ca, err := readCert(filepath.Join(dir, CAFile))
	if err != nil {
		return nil, nil, err
	}
	der, err := readPEM(filepath.Join(dir, CAKeyFile), "EC PRIVATE KEY", true)
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParseECPrivateKey(der)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: %s: %w", CAKeyFile, err)
	}
	return ca, key, nil
}

// ReadIdentity reads the identity of the certificate in path (the first
// CERTIFICATE block). It does not verify the certificate: for a party's
// own certificate, to learn the name others will see.
func ReadIdentity(path string) (Identity, error) {
	c, err := readCert(path)
	if err != nil {
		return Identity{}, err
	}
	return IdentityOf(c)
}

func readCert(path string) (*x509.Certificate, error) {
	der, err := readPEM(path, "CERTIFICATE", false)
	if err != nil {
		return nil, err
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("certs: %s: %w", path, err)
	}
	return c, nil
}

// readPEM reads the first block of type typ from path; a private key
// (secret) must not be readable by group or others.
func readPEM(path, typ string, secret bool) ([]byte, error) {
	if secret {
		if err := checkPrivate(path); err != nil {
			return nil, err
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("certs: %w", err)
	}
	for {
		var b *pem.Block
		b, raw = pem.Decode(raw)
		if b == nil {
			return nil, fmt.Errorf("certs: %s holds no %s", path, typ)
		}
		if b.Type == typ {
			return b.Bytes, nil
		}
	}
}

// ErrKeyReadable is returned for a private key file others can read.
var ErrKeyReadable = errors.New("certs: private key file is readable by group or others (chmod 600)")

func checkPrivate(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%w: %s", ErrKeyReadable, path)
	}
	return nil
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	return writePEM(path, "EC PRIVATE KEY", der, 0o600)
}

// writePEM writes one block through a temporary file and a rename, so a
// reader never sees half a file.
func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("certs: %w", err)
	}
	if err := pem.Encode(tmp, &pem.Block{Type: typ, Bytes: der}); err != nil {
		tmp.Close()
		return fmt.Errorf("certs: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	return nil
}
