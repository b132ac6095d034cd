package link

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Namespace is a network namespace joined to the caller's by a veth pair
// whose two ends are rate-shaped, so a process started inside it (Exec)
// talks to the caller over a link of the given bandwidth. Delay is not
// shaped: the kernels we run on lack the netem qdisc, so round-trip time
// is added afterwards as rounds × RTT (see Link.Project) and stated as
// such. Needs root and iproute2 (ip, tc).
type Namespace struct {
	Name     string
	HostAddr string // the caller's end
	PeerAddr string // the namespace's end (listen here)
	Shaping  string // the qdisc used, for reports
	host     string // veth device names
}

func run(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("link: %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// NewShapedNamespace creates the namespace and the veth pair, shaping both
// directions with tbf to bandwidth (bytes per second).
func NewShapedNamespace(ctx context.Context, bandwidth float64) (*Namespace, error) {
	if !(bandwidth > 0) {
		return nil, fmt.Errorf("link: bandwidth %v B/s must be positive", bandwidth)
	}
	for _, tool := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("link: shaping needs %s (iproute2): %w", tool, err)
		}
	}
	pid := os.Getpid()
	ns := &Namespace{Name: fmt.Sprintf("rmlink%d", pid), host: fmt.Sprintf("rml%da", pid)}
	peer := fmt.Sprintf("rml%db", pid)
	subnet := fmt.Sprintf("10.213.%d", pid%250)
	ns.HostAddr, ns.PeerAddr = subnet+".1", subnet+".2"
	if err := run(ctx, "ip", "netns", "add", ns.Name); err != nil {
		return nil, err
	}
	in := []string{"ip", "netns", "exec", ns.Name}
	rate := fmt.Sprintf("%dkbit", int64(bandwidth*8/1e3))
	// burst ≥ rate/HZ is needed to reach the rate; 1 MB covers 400 Mbit/s.
	tbf := []string{"tc", "qdisc", "add", "dev", "DEV", "root", "tbf", "rate", rate, "burst", "1mb", "latency", "400ms"}
	steps := [][]string{
		{"ip", "link", "add", ns.host, "type", "veth", "peer", "name", peer},
		{"ip", "link", "set", peer, "netns", ns.Name},
		{"ip", "addr", "add", ns.HostAddr + "/24", "dev", ns.host},
		{"ip", "link", "set", ns.host, "up"},
		append(in[:4:4], "ip", "addr", "add", ns.PeerAddr+"/24", "dev", peer),
		append(in[:4:4], "ip", "link", "set", peer, "up"),
		append(in[:4:4], "ip", "link", "set", "lo", "up"),
		withDev(tbf, ns.host),
		append(in[:4:4], withDev(tbf, peer)...),
	}
	for _, s := range steps {
		if err := run(ctx, s...); err != nil {
			ns.Close()
			return nil, err
		}
	}
	ns.Shaping = fmt.Sprintf("tbf rate %s burst 1mb on both ends of a veth pair (no delay: the kernel has no netem)", rate)
	return ns, nil
}

func withDev(args []string, dev string) []string {
	out := append([]string(nil), args...)
	for i, a := range out {
		if a == "DEV" {
			out[i] = dev
		}
	}
	return out
}

// Exec is the command prefix that runs a program inside the namespace.
func (ns *Namespace) Exec() []string { return []string{"ip", "netns", "exec", ns.Name} }

// Close deletes the veth pair and the namespace.
func (ns *Namespace) Close() error {
	ctx := context.Background()
	err1 := run(ctx, "ip", "link", "del", ns.host)
	err2 := run(ctx, "ip", "netns", "del", ns.Name)
	if err2 != nil {
		return err2
	}
	_ = err1 // gone with the namespace's peer already
	return nil
}
