package nonlinear

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/link"
	"github.com/rosemary-fhe/rosemary/optiprime/share"
)

// TestWANNetns runs the two-process ReLU/truncation batch between the root
// network namespace (client) and a fresh namespace (server) joined by a veth
// pair shaped by `tc netem` to the WAN preset: 20 ms delay each way (40 ms
// RTT) and 400 Mbit/s. It needs root and iproute2 (ip, tc) and is skipped
// otherwise. If the kernel lacks the netem qdisc, it shapes the rate with
// tbf only (no delay) and says so. It checks results and exact counters, and
// logs the measured time beside the link model's projection; it asserts
// nothing about time.
func TestWANNetns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces")
	}
	for _, tool := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s (iproute2)", tool)
		}
	}
	pid := os.Getpid()
	ns := fmt.Sprintf("rmwan%d", pid)
	va, vb := fmt.Sprintf("rmw%da", pid), fmt.Sprintf("rmw%db", pid)
	subnet := fmt.Sprintf("10.211.%d", pid%250)
	run := func(args ...string) error {
		out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	if err := run("ip", "netns", "add", ns); err != nil {
		t.Skipf("cannot create a network namespace (no CAP_SYS_ADMIN?): %v", err)
	}
	t.Cleanup(func() {
		run("ip", "link", "del", va)
		run("ip", "netns", "del", ns)
	})
	inNS := []string{"ip", "netns", "exec", ns}
	setup := [][]string{
		{"ip", "link", "add", va, "type", "veth", "peer", "name", vb},
		{"ip", "link", "set", vb, "netns", ns},
		{"ip", "addr", "add", subnet + ".1/24", "dev", va},
		{"ip", "link", "set", va, "up"},
		append(inNS[:4:4], "ip", "addr", "add", subnet+".2/24", "dev", vb),
		append(inNS[:4:4], "ip", "link", "set", vb, "up"),
		append(inNS[:4:4], "ip", "link", "set", "lo", "up"),
	}
	for _, c := range setup {
		if err := run(c...); err != nil {
			t.Fatal(err)
		}
	}
	half := link.WAN.RTT / 2
	rate := fmt.Sprintf("%dmbit", int(link.WAN.Bandwidth*8/1e6))
	shaping := "netem"
	for _, dev := range [][]string{{va}, {vb}} {
		pre := []string{}
		if dev[0] == vb {
			pre = inNS
		}
		netem := append(append([]string{}, pre...), "tc", "qdisc", "add", "dev", dev[0], "root", "netem",
			"delay", fmt.Sprintf("%dms", half.Milliseconds()), "rate", rate, "limit", "100000")
		if err := run(netem...); err != nil {
			if !strings.Contains(err.Error(), "unknown") {
				t.Fatal(err)
			}
			shaping = "tbf (kernel has no netem: rate only, no delay)"
			tbf := append(append([]string{}, pre...), "tc", "qdisc", "add", "dev", dev[0], "root", "tbf",
				"rate", rate, "burst", "256kb", "latency", "200ms")
			if err := run(tbf...); err != nil {
				t.Fatal(err)
			}
		}
	}
	const n = 4096
	st, el := runTwoProcess(t, inNS, subnet+".2:0", n)
	want := add(ReLUCost(n, childBits), TruncateCost(n, childBits, share.Scale))
	want.Flights--
	if st != want {
		t.Errorf("counters %+v, want %+v", st, want)
	}
	proj, err := link.WAN.Project(link.FromStats(st), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("veth shaped by %s: ReLU+trunc ℓ=%d batch %d: %d B c2s, %d B s2c, %d flights; measured %v, link-model WAN network time %.3f s",
		shaping, childBits, n, st.BytesC2S, st.BytesS2C, st.Flights, el, proj.PropagateS+proj.TransferS)
}
