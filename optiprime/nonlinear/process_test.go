package nonlinear

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/optiprime/share"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// The two-process tests re-execute this test binary as the server. The
// child is selected by environment variables, so `go test` needs nothing
// else: childEnv=1 runs serveChild instead of the tests.
const (
	childEnv       = "ROSEMARY_NONLINEAR_CHILD"
	childListenEnv = "ROSEMARY_NONLINEAR_LISTEN"
	childBits      = 37
	// Test-only frames: the client hands the server its input shares (in a
	// real run they come out of the previous HE layer) and the server returns
	// its output shares so the test can reconstruct.
	typeTestInput  byte = 0x3c
	typeTestOutput byte = 0x3d
	childPool           = 1 << 20 // correlated OTs each way, above what the batch draws
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := serveChild(os.Getenv(childListenEnv)); err != nil {
			fmt.Fprintln(os.Stderr, "child server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveChild accepts one client, receives its input shares, runs ReLU and
// truncation by 2^12 as party 0 and sends back its output shares.
func serveChild(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	defer l.Close()
	fmt.Printf("LISTEN %s\n", l.Addr())
	conn, err := transport.Accept(l)
	if err != nil {
		return err
	}
	defer conn.Close()
	r, _ := share.NewRing(childBits)
	p, err := NewParty(conn, r)
	if err != nil {
		return err
	}
	in, err := conn.RecvType(typeTestInput)
	if err != nil {
		return err
	}
	if len(in) < 4 {
		return fmt.Errorf("short input frame")
	}
	n := int(binary.BigEndian.Uint32(in))
	x0, err := share.Unpack(in[4:], n, childBits)
	if err != nil {
		return err
	}
	if err := p.reserve(childPool, childPool); err != nil {
		return err
	}
	y0, err := p.ReLU(x0)
	if err != nil {
		return err
	}
	z0, err := p.Truncate(x0, share.Scale)
	if err != nil {
		return err
	}
	return conn.Send(typeTestOutput, share.Pack(nil, append(y0, z0...), childBits))
}

// runTwoProcess starts the server child with the given command prefix (empty,
// or e.g. `ip netns exec NS`) listening on listen, connects to it, and checks
// a batch of n ReLUs and truncations. It returns the client's counters for
// the protocol part (after OT setup) and the elapsed time of that part.
func runTwoProcess(t *testing.T, prefix []string, listen string, n int) (transport.Stats, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{}, prefix...), exe, "-test.run=^$")
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), childEnv+"=1", childListenEnv+"="+listen)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child: %v", err)
	}
	waited := false
	defer func() {
		if !waited {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("child address: %v", err)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "LISTEN ")
	if !ok {
		t.Fatalf("child said %q", line)
	}
	conn, err := transport.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := mustRing(t, childBits)
	g := testPRG(t)
	p, err := NewParty(conn, r)
	if err != nil {
		t.Fatal(err)
	}
	x := signedInputs(g, r, n)
	x0, x1 := r.Split(g, x)
	in := binary.BigEndian.AppendUint32(nil, uint32(n))
	if err := conn.Send(typeTestInput, share.Pack(in, x0, childBits)); err != nil {
		t.Fatal(err)
	}
	// Both fill their pools first: the counters below are the steps'
	// (one regular Ferret iteration each way runs here).
	if err := p.reserve(childPool, childPool); err != nil {
		t.Fatal(err)
	}
	before := conn.Stats()
	start := time.Now()
	y1, err := p.ReLU(x1)
	if err != nil {
		t.Fatal(err)
	}
	z1, err := p.Truncate(x1, share.Scale)
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	st := conn.Stats().Sub(before)
	out, err := conn.RecvType(typeTestOutput)
	if err != nil {
		t.Fatal(err)
	}
	yz0, err := share.Unpack(out, 2*n, childBits)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	waited = true
	y, _ := r.Reconstruct(yz0[:n], y1)
	z, _ := r.Reconstruct(yz0[n:], z1)
	for i := range x {
		v := r.ToSigned(x[i])
		if got := r.ToSigned(y[i]); got != max(v, 0) {
			t.Fatalf("ReLU(%d) = %d", v, got)
		}
		if got, want := r.ToSigned(z[i]), v>>share.Scale; got != want && got != want-1 {
			t.Fatalf("trunc(%d) = %d, want %d or %d", v, got, want, want-1)
		}
	}
	return st, elapsed
}

// TestTwoProcessReLU runs the server as a separate process over loopback TCP.
func TestTwoProcessReLU(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const n = 4096
	st, el := runTwoProcess(t, nil, "127.0.0.1:0", n)
	// The first frame after the client's input frame continues its flight
	// (see TestReLUCost), so the ReLU counts one flight less here.
	want := add(ReLUCost(n, childBits), TruncateCost(n, childBits, share.Scale))
	want.Flights--
	if st != want {
		t.Errorf("TCP counters %+v, want %+v", st, want)
	}
	t.Logf("loopback TCP, ReLU+trunc ℓ=%d batch %d: c2s %d B, s2c %d B, %d flights, %v",
		childBits, n, st.BytesC2S, st.BytesS2C, st.Flights, el)
}
