package link

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestShapedNamespace creates the namespace, checks the addresses and the
// tbf qdiscs on both veth ends, and that Close removes it. Needs root.
func TestShapedNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces")
	}
	if _, err := exec.LookPath("tc"); err != nil {
		t.Skip("needs iproute2")
	}
	ns, err := NewShapedNamespace(context.Background(), WAN.Bandwidth)
	if err != nil {
		t.Skipf("cannot create a shaped namespace here: %v", err)
	}
	out := func(args ...string) string {
		b, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v: %s", args, err, b)
		}
		return string(b)
	}
	if a := out(append(ns.Exec(), "ip", "-4", "addr")...); !strings.Contains(a, ns.PeerAddr) {
		t.Errorf("namespace has no %s: %s", ns.PeerAddr, a)
	}
	for _, q := range []string{out("tc", "qdisc", "show", "dev", ns.host), out(append(ns.Exec(), "tc", "qdisc", "show")...)} {
		if !strings.Contains(q, "tbf") || !strings.Contains(q, "400Mbit") {
			t.Errorf("qdisc is not tbf at 400 Mbit/s: %s", q)
		}
	}
	if err := ns.Close(); err != nil {
		t.Fatal(err)
	}
	if l := out("ip", "netns", "list"); strings.Contains(l, ns.Name) {
		t.Errorf("namespace %s left behind", ns.Name)
	}
}
