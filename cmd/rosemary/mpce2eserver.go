package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// e2eServer is the server process of `mpc bench --e2e` (a child `rosemary
// mpc e2e-serve`) and how this process, its client, reaches it.
type e2eServer struct {
	child  *exec.Cmd
	stdout io.Reader
	pki    string        // the run's certificates; "" in plaintext
	tls    *tls.Config   // the client's; nil: plaintext
	delay  time.Duration // WithDelay on both ends (--rtt / 2); 0: none
}

// startE2EServer starts the server (under prefix: a network namespace)
// listening at listen for sessions sessions. Unless plaintext, both ends
// speak mutual TLS with certificates made for this run in a temporary
// directory: a CA, the server's for listen's host, a user's for the
// client; stop removes them.
//
// prepare, if not empty, lists the protocols whose weights the server
// encodes before it listens (input-independent, offline; see
// e2e.Server.Prepare), into weight files in weightsDir if it is not empty
// (e2e.Server.PrepareDir).
//
// delay, if positive, is injected on every frame both ends send
// (transport.WithDelay).
func startE2EServer(ctx context.Context, prefix []string, listen, netName string, seed uint64, logT, sessions int, plaintext bool, prepare, weightsDir string, logN int, delay time.Duration) (*e2eServer, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	s := &e2eServer{delay: delay}
	args := append(append([]string{}, prefix...), exe, "mpc", "e2e-serve", "--net", netName,
		"--seed", fmt.Sprint(seed), "--logt", fmt.Sprint(logT), "--listen", listen, "--sessions", fmt.Sprint(sessions))
	if prepare != "" {
		args = append(args, "--prepare", prepare, "--logn", fmt.Sprint(logN))
		if weightsDir != "" {
			args = append(args, "--weights-dir", weightsDir)
		}
	}
	if delay > 0 {
		args = append(args, "--delay", delay.String())
	}
	if plaintext {
		args = append(args, "--insecure-plaintext")
	} else {
		f, err := s.makePKI(listen)
		if err != nil {
			s.stop()
			return nil, err
		}
		args = append(args, "--cert-file", f.Cert, "--key-file", f.Key, "--trusted-ca-file", f.CA)
	}
	s.child = exec.CommandContext(ctx, args[0], args[1:]...)
	s.child.Stderr = os.Stderr
	if s.stdout, err = s.child.StdoutPipe(); err != nil {
		s.stop()
		return nil, err
	}
	if err := s.child.Start(); err != nil {
		s.stop()
		return nil, fmt.Errorf("start server: %w", err)
	}
	return s, nil
}

// makePKI makes the run's certificates and returns the server's files.
func (s *e2eServer) makePKI(listen string) (certs.Files, error) {
	dir, err := os.MkdirTemp("", "rosemary-mpc-e2e-")
	if err != nil {
		return certs.Files{}, err
	}
	s.pki = dir
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return certs.Files{}, err
	}
	if err := certs.Init(dir); err != nil {
		return certs.Files{}, err
	}
	if err := certs.Issue(dir, "mpc-server", certs.RoleServer, []string{host}); err != nil {
		return certs.Files{}, err
	}
	if err := certs.Issue(dir, "mpc-bench", certs.RoleUser, nil); err != nil {
		return certs.Files{}, err
	}
	if s.tls, err = certs.ClientConfig(certs.InDir(dir, "mpc-bench")); err != nil {
		return certs.Files{}, err
	}
	return certs.InDir(dir, "mpc-server"), nil
}

// addr reads the address the server prints once it listens.
func (s *e2eServer) addr() (string, error) {
	line, err := bufio.NewReader(s.stdout).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("server address: %w", err)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "LISTEN ")
	if !ok {
		return "", fmt.Errorf("server said %q", line)
	}
	return addr, nil
}

// dial opens one session's connection.
func (s *e2eServer) dial(ctx context.Context, addr string) (*transport.Conn, error) {
	var opts []transport.Option
	if s.delay > 0 {
		opts = append(opts, transport.WithDelay(s.delay))
	}
	if s.tls == nil {
		return transport.Dial(ctx, addr, opts...)
	}
	return transport.DialTLS(ctx, addr, s.tls, opts...)
}

// wait waits for the server to end after its sessions.
func (s *e2eServer) wait() error { return s.child.Wait() }

// stop kills a server still running (our child, by its pid) and removes the
// run's certificates.
func (s *e2eServer) stop() {
	if s.child != nil && s.child.Process != nil && s.child.ProcessState == nil {
		s.child.Process.Kill()
		s.child.Wait()
	}
	if s.pki != "" {
		os.RemoveAll(s.pki)
	}
}
