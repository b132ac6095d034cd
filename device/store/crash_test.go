package store

import (
	"bufio"
	"crypto/rand"
	"crypto/sha3"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Environment of the crash child: the test binary re-executed with these set
// runs crashChild instead of the tests.
const (
	crashEnvDir   = "ROSEMARY_STORE_CRASH_DIR"
	crashEnvSeed  = "ROSEMARY_STORE_CRASH_SEED"
	crashEnvTrial = "ROSEMARY_STORE_CRASH_TRIAL"
)

var crashNames = []string{"ct0", "ct1", "pt", "rlk", "gk"}

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashEnvDir); dir != "" {
		os.Exit(crashChild(dir, os.Getenv(crashEnvSeed), os.Getenv(crashEnvTrial)))
	}
	os.Exit(m.Run())
}

// stream is a deterministic SHAKE128 stream for choices in the crash test.
type stream struct{ x *sha3.SHAKE }

func newStream(seed []byte, label string) stream {
	x := sha3.NewSHAKE128()
	x.Write(seed)
	x.Write([]byte(label))
	return stream{x}
}

// intn returns a value in [0, n) (modulo bias is irrelevant here).
func (s stream) intn(n int) int {
	var b [8]byte
	s.x.Read(b[:])
	return int(binary.LittleEndian.Uint64(b[:]) % uint64(n))
}

// crashChild performs Puts and Deletes forever, on two goroutines at once
// (each its own objects: writers of different objects write their pages
// at the same time and publish in any order), announcing each operation
// on stdout before ("B …") and after ("D …") it; the parent kills it.
func crashChild(dir, seedHex, trialStr string) int {
	seed, err := hex.DecodeString(seedHex)
	trial, err2 := strconv.ParseUint(trialStr, 10, 32)
	if err != nil || err2 != nil {
		fmt.Fprintf(os.Stderr, "crash child: bad seed or trial: %v %v\n", err, err2)
		return 2
	}
	// One write per line: lines of the two writers do not interleave.
	say := func(format string, a ...any) { os.Stdout.WriteString(fmt.Sprintf(format, a...) + "\n") }
	s, err := Open(dir, testLayout)
	if err != nil {
		say("E open: %v", err)
		return 2
	}
	const writers = 2
	fail := make(chan struct{}, writers)
	for w := range writers {
		go func() {
			defer func() { fail <- struct{}{} }()
			var names []string
			for i, n := range crashNames {
				if i%writers == w {
					names = append(names, n)
				}
			}
			rng := newStream(seed, "child "+trialStr+" writer "+strconv.Itoa(w))
			for i := uint64(0); i < 100000; i++ {
				name := names[rng.intn(len(names))]
				if rng.intn(8) == 0 {
					say("B del %s", name)
					err := s.Delete(name)
					switch {
					case errors.Is(err, ErrNotFound):
						say("D del %s missing", name)
					case err != nil:
						say("E delete %s: %v", name, err)
						return
					default:
						say("D del %s", name)
					}
					continue
				}
				v := trial<<20 | uint64(w)<<19 | i
				sh := shapeFor(v)
				say("B put %s %d", name, v)
				if _, err := s.Put(name, KindCiphertext, sh, content(name, v, sh)); err != nil {
					say("E put %s: %v", name, err)
					return
				}
				say("D put %s %d", name, v)
			}
		}()
	}
	<-fail
	return 2
}

// crashOp is an operation announced by the child.
type crashOp struct {
	del  bool
	name string
	v    uint64
}

func parseCrashLine(line string) (begin bool, op crashOp, err error) {
	f := strings.Fields(line)
	if len(f) >= 1 && f[0] == "E" {
		return false, op, fmt.Errorf("child failed: %s", line)
	}
	if len(f) < 3 || (f[0] != "B" && f[0] != "D") {
		return false, op, fmt.Errorf("bad child line %q", line)
	}
	op.name = f[2]
	switch f[1] {
	case "del":
		op.del = true
	case "put":
		if len(f) != 4 {
			return false, op, fmt.Errorf("bad child line %q", line)
		}
		if op.v, err = strconv.ParseUint(f[3], 10, 64); err != nil {
			return false, op, fmt.Errorf("bad child line %q: %w", line, err)
		}
	default:
		return false, op, fmt.Errorf("bad child line %q", line)
	}
	return f[0] == "B", op, nil
}

// TestCrashSafety kills a child doing Puts and Deletes with SIGKILL at
// random points, then checks that the store reopens (catalog invariants
// hold), every published generation reads back intact, and nothing
// unpublished is visible. The in-flight operation at the kill may have
// published or not; either outcome is accepted, anything else fails.
func TestCrashSafety(t *testing.T) {
	trials := 100
	if testing.Short() {
		trials = 20
	}
	seed := make([]byte, 16)
	rand.Read(seed)
	t.Logf("seed %x (set ROSEMARY_STORE_CRASH_SEED to replay)", seed)
	if s := os.Getenv(crashEnvSeed); s != "" {
		var err error
		if seed, err = hex.DecodeString(s); err != nil {
			t.Fatal(err)
		}
	}
	rng := newStream(seed, "parent")
	dir := t.TempDir()
	model := map[string]uint64{} // published version of each live object
	var completed, inflightPublished, inflightLost int
	for trial := 1; trial <= trials; trial++ {
		killAfter := rng.intn(6)                                  // completed operations before the kill
		delay := time.Duration(rng.intn(4000)) * time.Microsecond // then this much more
		log, err := runCrashChild(dir, seed, trial, killAfter, delay)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		inflight := map[string]crashOp{} // by object: its writer's operation under way
		for _, line := range log {
			begin, op, err := parseCrashLine(line)
			if err != nil {
				t.Fatalf("trial %d: %v", trial, err)
			}
			if begin {
				if prev, ok := inflight[op.name]; ok {
					t.Fatalf("trial %d: %q begins while %+v is in flight", trial, line, prev)
				}
				inflight[op.name] = op
				continue
			}
			if in, ok := inflight[op.name]; !ok || in.del != op.del || in.v != op.v {
				t.Fatalf("trial %d: completion %q without its beginning", trial, line)
			}
			delete(inflight, op.name)
			completed++
			if op.del {
				delete(model, op.name)
			} else {
				model[op.name] = op.v
			}
		}
		published, err := verifyAfterCrash(dir, model, inflight)
		if err != nil {
			t.Fatalf("trial %d (kill after %d ops + %v, in flight %+v): %v", trial, killAfter, delay, inflight, err)
		}
		for name, op := range inflight {
			if !published[name] {
				inflightLost++
				continue
			}
			inflightPublished++
			if op.del {
				delete(model, name)
			} else {
				model[name] = op.v
			}
		}
	}
	if completed == 0 {
		t.Fatal("no child completed any operation: the test exercised nothing")
	}
	t.Logf("%d trials, %d operations completed before kills; in-flight at kill: %d published, %d not",
		trials, completed, inflightPublished, inflightLost)
}

// runCrashChild starts the child, waits for killAfter completed operations
// (or its exit), sleeps delay, kills it with SIGKILL and returns its lines.
func runCrashChild(dir string, seed []byte, trial, killAfter int, delay time.Duration) ([]string, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnvDir+"="+dir, crashEnvSeed+"="+hex.EncodeToString(seed),
		crashEnvTrial+"="+strconv.Itoa(trial))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var log []string
	timeout := time.After(20 * time.Second)
	for done := 0; done < killAfter; {
		select {
		case line, ok := <-lines:
			if !ok {
				done = killAfter
				break
			}
			log = append(log, line)
			if strings.HasPrefix(line, "D ") {
				done++
			}
		case <-timeout:
			done = killAfter
		}
	}
	time.Sleep(delay)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return nil, err
	}
	for line := range lines {
		log = append(log, line)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return nil, fmt.Errorf("child was not killed (wait: %v); stderr: %s", err, stderr.String())
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		return nil, fmt.Errorf("child ended with %v, not SIGKILL; output %q; stderr: %s", err, log, stderr.String())
	}
	return log, nil
}

// verifyAfterCrash reopens the store and checks it against the model;
// it reports which of the in-flight operations (by object) took effect.
func verifyAfterCrash(dir string, model map[string]uint64, inflight map[string]crashOp) (published map[string]bool, err error) {
	s, err := Open(dir, testLayout)
	if err != nil {
		return nil, fmt.Errorf("reopen: %w", err)
	}
	defer s.Close()
	list, err := s.List()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, in := range list {
		names = append(names, in.Name)
	}
	published = map[string]bool{}
	for _, name := range crashNames {
		want, live := model[name]
		visible := slices.Contains(names, name)
		var ok bool
		switch {
		case live && visible:
			ok = checkContent(s, name, want) == nil
		case !live && !visible:
			ok = true
		}
		if ok {
			continue
		}
		// Not the published state: only the in-flight operation explains it.
		op, busy := inflight[name]
		if !busy {
			return nil, fmt.Errorf("object %q: visible=%v, model has live=%v v%d, and no operation on it was in flight", name, visible, live, want)
		}
		switch {
		case op.del && !visible:
			published[name] = true
		case !op.del && visible:
			if err := checkContent(s, name, op.v); err != nil {
				return nil, fmt.Errorf("object %q is neither published v%d nor in-flight v%d: %w", name, want, op.v, err)
			}
			published[name] = true
		default:
			return nil, fmt.Errorf("object %q: visible=%v, model live=%v v%d, in flight %+v", name, visible, live, want, op)
		}
	}
	for _, n := range names {
		if !slices.Contains(crashNames, n) {
			return nil, fmt.Errorf("unexpected object %q", n)
		}
	}
	if st, err := s.GC(); err != nil || st.Reclaimed != 0 || st.Pinned != 0 {
		return nil, fmt.Errorf("GC after reopen = %+v, %v; Open should have reclaimed everything", st, err)
	}
	return published, nil
}
