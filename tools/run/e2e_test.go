package run

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/resident"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
)

// daemonEnv makes the test binary run as the device daemon on the store
// directory it names.
const daemonEnv = "ROSEMARY_TEST_DEVICE_STORE"

func TestMain(m *testing.M) {
	if dir := os.Getenv(daemonEnv); dir != "" {
		if err := serveDaemon(dir); err != nil {
			fmt.Fprintln(os.Stderr, "daemon:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func serveDaemon(dir string) error {
	st, err := store.Open(dir, layout.Layout{Channels: 4, PageSize: 4096})
	if err != nil {
		return err
	}
	defer st.Close()
	d, err := device.New(st, device.DefaultLimits())
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("listening %s\n", lis.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return device.Serve(ctx, d, lis, device.WithPlaintext())
}

// daemon is the device running in a child process.
type daemon struct {
	cmd  *exec.Cmd
	addr string
}

func startDaemon(t *testing.T) *daemon {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), daemonEnv+"="+t.TempDir())
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("daemon did not report its address: %v", err)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok {
		t.Fatalf("daemon said %q", line)
	}
	return &daemon{cmd: cmd, addr: addr}
}

// peakRSS reads a process's peak resident set (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// idleStats is the daemon's statistics once a test's work is done; it
// fails the test if any value is still resident after that work.
func idleStats(ctx context.Context, t *testing.T, c *remote.Client, after string) *devicepb.StatsResponse {
	t.Helper()
	st, err := c.Stats(ctx, &devicepb.StatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.ResidentBytes != 0 {
		t.Fatalf("%d bytes still resident after %s", st.ResidentBytes, after)
	}
	return st
}

func dial(t *testing.T, addr string) *remote.Client {
	t.Helper()
	c, err := remote.Dial(addr, remote.WithPlaintext())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// A vector-distance query and PIR queries, executed by a device daemon in
// another process over data stored on it, decrypt to the plaintext
// answers; only the query, intermediate and answer ciphertexts cross.
func TestEndToEndTwoProcesses(t *testing.T) {
	ctx := context.Background()
	d := startDaemon(t)
	c := dial(t, d.addr)

	vec, err := Run(ctx, c, Options{Workload: "vecdist", VecPlaintexts: 32, VecDim: 4, VecGroups: 2, Placement: "device"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !vec.Correct {
		t.Fatalf("vector distances wrong: %s", vec.Error)
	}
	t.Logf("vecdist 32 plaintexts: host↔device %d B, host-only %d B (%.2f×), device store reads %d B",
		vec.HostDeviceBytes, vec.HostOnlyBytes, vec.Ratio, vec.DeviceStoreBytes)

	// The default PIR: 128-bit parameters, a one-ciphertext query expanded
	// on the device, 3 queries (first, last, random) over 16 MiB.
	sec, err := Run(ctx, c, Options{Workload: "pir", Prefix: "pir-secure", PIRRecords: 1 << 16, PIRRecordSize: 256}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !sec.Correct || sec.Params != "bgv-13" || sec.Segments != "stream" {
		t.Fatalf("secure PIR: %+v", sec)
	}
	// One level-2 query (2 × 3 limbs) up, one level-0 answer (2 limbs) down.
	if want := int64((6 + 2) * 8192 * 8); sec.CiphertextBytes != want {
		t.Fatalf("secure PIR: %d ciphertext bytes crossed, want %d", sec.CiphertextBytes, want)
	}
	if sec.HostDeviceBytes*20 > sec.HostOnlyBytes {
		t.Fatalf("secure PIR: %d bytes crossed per query, the database is %d", sec.HostDeviceBytes, sec.HostOnlyBytes)
	}
	t.Logf("secure PIR over %d B: host↔device %d B per query (%.0f×)", sec.HostOnlyBytes, sec.HostDeviceBytes, sec.Ratio)
	st := idleStats(ctx, t, c, "the runs")
	rss := peakRSS(t, d.cmd.Process.Pid)
	t.Logf("daemon peak RSS %.1f MiB, peak device DRAM %.1f MiB", float64(rss)/(1<<20), float64(st.PeakResidentBytes)/(1<<20))
	if rss > 2<<30 {
		t.Fatalf("daemon peak RSS %d B exceeds 2 GiB", rss)
	}
}

// Load: 8 clients × 4 vector-distance queries against one daemon, every
// answer checked; the daemon's peak RSS stays bounded.
func TestLoad(t *testing.T) {
	ctx := context.Background()
	d := startDaemon(t)
	setup := dial(t, d.addr)
	s, err := Setup(ctx, setup, Options{Workload: "vecdist", VecPlaintexts: 4, VecDim: 4, VecGroups: 2, Placement: "device", Prefix: "load"})
	if err != nil {
		t.Fatal(err)
	}
	const clients, queries = 8, 4
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	var mu sync.Mutex
	correct := 0
	for i := 0; i < clients; i++ {
		c := dial(t, d.addr)
		run := resident.New(c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for q := 0; q < queries; q++ {
				r, err := s.Query(ctx, c, run)
				if err != nil {
					errs <- err
					return
				}
				if !r.Correct {
					errs <- r.Err
					return
				}
				mu.Lock()
				correct++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if correct != clients*queries {
		t.Fatalf("%d correct answers, want %d", correct, clients*queries)
	}
	st := idleStats(ctx, t, setup, "all queries")
	rss := peakRSS(t, d.cmd.Process.Pid)
	t.Logf("%d queries correct; daemon peak RSS %.1f MiB, peak device DRAM %.1f MiB, %d jobs, %d micro-ops, store reads %d B",
		correct, float64(rss)/(1<<20), float64(st.PeakResidentBytes)/(1<<20), st.Jobs, st.MicroOps, st.StoreBytesRead)
	if rss > 1<<30 {
		t.Fatalf("daemon peak RSS %d B exceeds 1 GiB", rss)
	}
}
