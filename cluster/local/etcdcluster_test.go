package local

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/device/certs"
)

const memberEnv = "ROSEMARY_LOCAL_ETCD_MEMBER" // ServeMember's arguments, separated by the unit separator (0x1f)

// TestMain lets the test binary serve as an etcd member process.
func TestMain(m *testing.M) {
	if v := os.Getenv(memberEnv); v != "" {
		if err := ServeMember(context.Background(), strings.Split(v, "\x1f")); err != nil {
			fmt.Fprintln(os.Stderr, "etcd member:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// spawnMember runs a member in a process of this test binary.
func spawnMember(args []string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), memberEnv+"="+strings.Join(args, "\x1f"))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// Three members on TLS, in this process and as processes killed and
// started again: a write goes through with one member stopped, not with
// two (no quorum), and again once one of them is back; a restarted member
// serves what was written while it was down.
func TestEtcdClusterQuorum(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three etcd members")
	}
	t.Run("in process", func(t *testing.T) { testQuorum(t, nil) })
	t.Run("processes", func(t *testing.T) { testQuorum(t, spawnMember) })
}

func testQuorum(t *testing.T, spawn MemberSpawner) {
	pki := t.TempDir()
	if err := certs.Init(pki); err != nil {
		t.Fatal(err)
	}
	for name, role := range map[string]certs.Role{"etcd": certs.RoleServer, "admin": certs.RoleAdmin} {
		if err := certs.Issue(pki, name, role, nil); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	c, err := StartEtcdCluster(ctx, t.TempDir(), 3, certs.InDir(pki, "etcd"), spawn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tlsCfg, err := certs.ClientConfig(certs.InDir(pki, "admin"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Endpoints()) != 3 {
		t.Fatalf("endpoints %v", c.Endpoints())
	}
	cli, err := cluster.Connect(ctx, cluster.Etcd{Endpoints: c.Endpoints(), TLS: tlsCfg})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	// put writes k within limit, trying again while etcd elects a leader
	// (a killed leader's followers say "request timed out, possibly due
	// to previous leader failure").
	put := func(v string, limit time.Duration) error {
		pctx, cancel := context.WithTimeout(ctx, limit)
		defer cancel()
		for {
			_, err := cli.Put(pctx, "k", v)
			if err == nil || pctx.Err() != nil {
				return err
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	get := func() string {
		gctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		r, err := cli.Get(gctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Kvs) != 1 {
			t.Fatalf("k: %d values", len(r.Kvs))
		}
		return string(r.Kvs[0].Value)
	}
	ms := c.Members()
	ms[0].Stop()
	if err := put("one down", 30*time.Second); err != nil {
		t.Fatalf("a write with 2 of 3 members: %v", err)
	}
	ms[1].Stop()
	// No quorum: no write goes through (the member left answers that the
	// request timed out, or the caller's deadline passes first).
	if err := put("two down", 2*time.Second); err == nil {
		t.Fatal("a write went through with 1 of 3 members")
	}
	if err := ms[0].Start(); err != nil {
		t.Fatal(err)
	}
	if err := ms[0].WaitReady(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := put("back", 30*time.Second); err != nil {
		t.Fatalf("a write after a member came back: %v", err)
	}
	if got := get(); got != "back" {
		t.Fatalf("k = %q, want back", got)
	}
	if err := ms[1].Start(); err != nil {
		t.Fatal(err)
	}
	if err := ms[1].WaitReady(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	ms[0].Stop()
	ms[2].Stop()
	if err := ms[2].Start(); err != nil {
		t.Fatal(err)
	}
	if err := ms[2].WaitReady(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got := get(); got != "back" {
		t.Fatalf("k on members 1 and 2 = %q, want back", got)
	}
}
