package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/optiprime/graph"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

const helperEnv = "ROSEMARY_E2E_SERVER_HELPER"

// TestServerHelper is the server process of TestTwoProcesses (this test
// binary re-executed); it does nothing in a normal run.
func TestServerHelper(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("helper process only")
	}
	n, _, err := graph.Build(graph.Mini, 3, graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fmt.Printf("LISTEN %s\n", l.Addr())
	conn, err := transport.Accept(l)
	if err != nil {
		t.Fatal(err)
	}
	if err := Serve(conn, n); err != nil {
		t.Fatal(err)
	}
}

// TestTwoProcesses runs the reduced network with the server in a child
// process over loopback TCP: the client knows only the public network and
// the image, and its output must equal the reference computed here from
// the same seed.
func TestTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestServerHelper$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	n, img, err := graph.Build(graph.Mini, 3, graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := n.Reference(img)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "LISTEN ")
	if !ok {
		t.Fatalf("helper said %q", line)
	}
	conn, err := transport.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	out, rep, err := Infer(conn, n.Public(), img, Config{Protocol: linear.OptiEncodeBSGS})
	if err != nil {
		t.Fatal(err)
	}
	rep.Check(out, want)
	if !rep.Correct {
		t.Fatalf("%d of %d outputs differ: got %v, want %v", rep.Mismatches, rep.Outputs, out, want)
	}
	// The server's per-operation report arrived and its CPU time is its own.
	var srv float64
	for _, l := range rep.Layers {
		srv += l.ServerCPUS
	}
	if srv <= 0 || rep.ServerCPUS < srv {
		t.Errorf("server CPU %v s in total, %v s over operations", rep.ServerCPUS, srv)
	}
}
