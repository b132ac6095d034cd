package runtime

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
	return device.Serve(ctx, d, lis)
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
func idleStats(ctx context.Context, t *testing.T, c *device.Client, after string) *device.StatsResponse {
	t.Helper()
	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.ResidentBytes != 0 {
		t.Fatalf("%d bytes still resident after %s", st.ResidentBytes, after)
	}
	return st
}

func dial(t *testing.T, addr string) *device.Client {
	t.Helper()
	c, err := device.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// A PIR query and a vector-distance query, executed by a device daemon in
// another process over data stored on it, decrypt to the plaintext
// answers; only the query, intermediate and answer ciphertexts cross.
func TestEndToEndTwoProcesses(t *testing.T) {
	ctx := context.Background()
	d := startDaemon(t)
	c := dial(t, d.addr)

	const rows, cols = 16, 16
	pir, err := Run(ctx, c, Options{Workload: "pir", PIRLegacy: true, Insecure: true, PIRRows: rows, PIRCols: cols, Placement: "device"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !pir.Correct {
		t.Fatalf("PIR answer wrong: %s", pir.Error)
	}
	// insecure-test-bgv: N = 2048, 6 limbs at the top level; the database
	// is stored compact, one limb (its coefficients mod t) per plaintext.
	const limb = 2048 * 8
	pt, ct := int64(limb), int64(2*6*limb)
	if pir.HostOnlyBytes != rows*cols*pt {
		t.Fatalf("host-only bytes %d, want %d", pir.HostOnlyBytes, rows*cols*pt)
	}
	// Up: one selection per row and column; down: the rescaled answer (5 limbs).
	if want := (rows+cols)*ct + 2*5*limb; pir.CiphertextBytes != want {
		t.Fatalf("ciphertext bytes crossing %d, want %d", pir.CiphertextBytes, want)
	}
	if pir.HostDeviceBytes < pir.CiphertextBytes || pir.HostDeviceBytes > pir.CiphertextBytes*11/10+(1<<20) {
		t.Fatalf("wire bytes %d far from the ciphertext bytes %d", pir.HostDeviceBytes, pir.CiphertextBytes)
	}
	if pir.DeviceStoreBytes < pir.HostOnlyBytes {
		t.Fatalf("device read %d B from its store, the database is %d B", pir.DeviceStoreBytes, pir.HostOnlyBytes)
	}
	t.Logf("PIR %d×%d: host↔device %d B (ciphertexts %d B), host-only %d B: %.2f× less; device store reads %d B; setup %d B",
		rows, cols, pir.HostDeviceBytes, pir.CiphertextBytes, pir.HostOnlyBytes, pir.Ratio, pir.DeviceStoreBytes, pir.SetupBytes)

	// The packed query (one ciphertext, expanded on the device): only the
	// query and the answer cross, ≥ 20× less than the compact database.
	const pr, pc = 40, 40
	packed, err := Run(ctx, c, Options{Workload: "pir", PIRLegacy: true, Insecure: true, PIRRows: pr, PIRCols: pc, PIRPacked: true, Placement: "device", Prefix: "pir-packed"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !packed.Correct {
		t.Fatalf("packed PIR answer wrong: %s", packed.Error)
	}
	if want := ct + 2*5*limb; packed.CiphertextBytes != want {
		t.Fatalf("packed PIR: ciphertext bytes crossing %d, want %d", packed.CiphertextBytes, want)
	}
	if packed.HostOnlyBytes != pr*pc*pt {
		t.Fatalf("packed PIR: host-only bytes %d, want %d", packed.HostOnlyBytes, pr*pc*pt)
	}
	// The database is stored compact (one limb per plaintext), so a
	// host-only run reads 1600 × 16 KiB; the query, the answer and the
	// framing are ≈ 1 MiB.
	if packed.HostDeviceBytes*20 > packed.HostOnlyBytes {
		t.Fatalf("packed PIR: host↔device %d B is not 20× below host-only %d B", packed.HostDeviceBytes, packed.HostOnlyBytes)
	}
	t.Logf("packed PIR %d×%d: host↔device %d B (ciphertexts %d B), host-only %d B: %.1f× less; device store reads %d B; warm-up query %d B",
		pr, pc, packed.HostDeviceBytes, packed.CiphertextBytes, packed.HostOnlyBytes, packed.Ratio, packed.DeviceStoreBytes, packed.WarmupBytes)

	vec, err := Run(ctx, c, Options{Workload: "vecdist", VecPlaintexts: 32, VecDim: 4, VecGroups: 2, Placement: "device"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !vec.Correct {
		t.Fatalf("vector distances wrong: %s", vec.Error)
	}
	t.Logf("vecdist 32 plaintexts: host↔device %d B, host-only %d B (%.2f×), device store reads %d B",
		vec.HostDeviceBytes, vec.HostOnlyBytes, vec.Ratio, vec.DeviceStoreBytes)

	// The compiler's own placement for the legacy PIR also runs correctly
	// (scan on the device, the row products on the host), the device
	// segment as one stream program. With the database stored compact,
	// lifting it costs the engine an NTT per limb and plaintext: at this
	// size only the full compiler (CLCAO streams the products into the row
	// sums) finds the split cheaper than shipping the database.
	plan, err := Run(ctx, c, Options{Workload: "pir", PIRLegacy: true, Insecure: true, PIRRows: 32, PIRCols: 32, Opt: "full", Prefix: "pir-plan"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Correct || plan.DeviceOps == 0 || plan.HostOps == 0 || plan.Segments != "stream" {
		t.Fatalf("PIR under the plan: %+v", plan)
	}

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

// Load: 16 clients × 50 queries against one daemon, every answer checked;
// the daemon's peak RSS stays bounded.
func TestLoad(t *testing.T) {
	ctx := context.Background()
	d := startDaemon(t)
	setup := dial(t, d.addr)
	s, err := Setup(ctx, setup, Options{Workload: "pir", PIRLegacy: true, Insecure: true, PIRRows: 2, PIRCols: 2, Placement: "device", Prefix: "load"})
	if err != nil {
		t.Fatal(err)
	}
	const clients, queries = 16, 50
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	var mu sync.Mutex
	correct := 0
	for i := 0; i < clients; i++ {
		c := dial(t, d.addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for q := 0; q < queries; q++ {
				r, err := s.Query(ctx, c)
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
