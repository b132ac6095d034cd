package infer

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

	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/model"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

const helperEnv = "ROSEMARY_INFER_SERVER_HELPER"

// TestServerHelper is the server process of TestTwoProcesses; it does
// nothing in a normal run.
func TestServerHelper(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("helper process only")
	}
	q, err := model.Default()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("LISTEN %s\n", l.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var failed error
	srv := &transport.SessionServer{Logf: func(f string, a ...any) {
		if strings.Contains(f, "images") {
			return
		}
		failed = fmt.Errorf(f, a...)
	}}
	if err := ServeListener(ctx, l, srv, q, 1); err != nil {
		t.Fatal(err)
	}
	if failed != nil {
		t.Fatal(failed)
	}
}

// TestTwoProcesses runs the server in a child process (this test binary
// re-executed) and the client here, over TCP on loopback.
func TestTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	q, d := fixtures(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestServerHelper$", "-test.v")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(out)
	addr := ""
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "LISTEN "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		t.Fatal("server process printed no address")
	}
	var rest strings.Builder
	drained := make(chan struct{})
	go func() {
		for sc.Scan() {
			rest.WriteString(sc.Text() + "\n")
		}
		close(drained)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := transport.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Evaluate(conn, Config{Protocol: linear.OptiEncode}, d.Subset(4), q, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Agreement != 1 || rep.MaxLogitDiff > rep.LogitErrorBound || rep.PlainAccuracy != 1 {
		t.Errorf("report %+v", rep)
	}
	<-drained // read all output before Wait closes the pipe
	if err := cmd.Wait(); err != nil {
		t.Fatalf("server process: %v\n%s", err, rest.String())
	}
	if !strings.Contains(rest.String(), "PASS") {
		t.Errorf("server process output:\n%s", rest.String())
	}
}
