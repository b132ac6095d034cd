package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/tools/bench"
)

// TestMain lets the test binary serve as the rosemary command: bench
// abuse starts its device as a child process of this executable.
func TestMain(m *testing.M) {
	if os.Getenv("ROSEMARY_TEST_AS_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A few seconds of bench abuse: three clients of another identity send
// expanding, malformed, oversized and table-filling requests while the
// owner queries; every owner query is answered with the right record,
// the device's own memory stays under its limit, and every attack was
// refused (the table filling only evicts the attacker's own programs).
func TestBenchAbuseShort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a device process and attacks it for seconds")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("ROSEMARY_TEST_AS_MAIN", "1") // the child device runs main
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := bench.RunAbuse(ctx, bench.AbuseOptions{Dir: t.TempDir(), DeviceCommand: []string{exe, "device", "serve", "--log-level", "warn"},
		MemoryLimitMB: 256, Duration: 4 * time.Second, Attackers: 3, Size: 256 << 10, RecordSize: 256, LWEParams: "test", Seed: 3,
		Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", *rep)
	if rep.OwnerQueries == 0 || rep.OwnerFailures != 0 || rep.OwnerWrong != 0 {
		t.Errorf("owner: %d queries, %d failed (%v), %d wrong", rep.OwnerQueries, rep.OwnerFailures, rep.OwnerErrors, rep.OwnerWrong)
	}
	if !rep.UnderLimit || rep.PeakAnonBytes == 0 || rep.PeakAnonBytes > uint64(rep.MemoryLimitBytes) {
		t.Errorf("device RssAnon peaked at %d bytes, limit %d (%d samples)", rep.PeakAnonBytes, rep.MemoryLimitBytes, rep.Samples)
	}
	if !rep.OwnerSetAfter {
		t.Error("the owner could not set a stream program after the attack")
	}
	for name, a := range rep.Attacks {
		if a.Sent == 0 {
			t.Errorf("no %s requests sent", name)
		}
		if name != "table_fill" && a.Codes["OK"] != 0 {
			t.Errorf("%s: %d accepted: %v", name, a.Codes["OK"], a.Codes)
		}
	}
}
