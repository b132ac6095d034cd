package chaos

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// DeviceSpec is what a device process is started with.
type DeviceSpec struct {
	ID    string
	Store string   // its store directory (created if absent)
	Etcd  []string // the etcd cluster's client endpoints
	// PKI is the run's certificate directory: PKI/ID.crt and PKI/ID.key
	// (a device certificate), PKI/ca.crt.
	PKI       string
	Scrub     time.Duration // its scrub interval
	Plaintext bool          // serve plaintext (loopback) instead of mutual TLS
	Metrics   string        // serve Prometheus metrics here (host:port; "": none)
}

// device is one device process of a run and what the faults do to it.
type device struct {
	spec DeviceSpec
	dir  string // its filesystem: the mount point when limitedMount
	log  *deviceLog

	limitedMount bool // dir is a size-limited filesystem of its own

	fault sync.Mutex // held by the fault injected into it

	mu       sync.Mutex
	cmd      *exec.Cmd // nil while down
	addr     string
	expected bool          // the run ended the process (a kill, a wipe, the end)
	paused   bool          // SIGSTOPped
	exited   chan struct{} // closed when cmd ends
}

// startDevice starts d's process and waits until it listens. A process
// that ends without the run ending it is started again (by watch).
func (r *run) startDevice(d *device) error {
	cmd := r.cfg.Device(d.spec)
	dieWithParent(cmd)
	cmd.Stderr = d.log
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("chaos: start device %s: %w", d.spec.ID, err)
	}
	exited := make(chan struct{})
	d.mu.Lock()
	d.cmd, d.expected, d.paused, d.exited = cmd, false, false, exited
	d.mu.Unlock()
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- l
		io.Copy(io.Discard, out)
	}()
	go r.watch(d, cmd, exited)
	select {
	case l := <-line:
		if !strings.HasPrefix(l, "listening ") {
			return fmt.Errorf("chaos: device %s did not start (its log: %s)", d.spec.ID, d.log.path)
		}
		d.mu.Lock()
		d.addr = strings.TrimSpace(strings.TrimPrefix(l, "listening "))
		d.mu.Unlock()
		return nil
	case <-time.After(time.Minute):
		return fmt.Errorf("chaos: device %s did not listen within a minute", d.spec.ID)
	}
}

// watch waits for d's process to end. An end the run did not cause is
// counted — an anomaly unless etcd was faulted moments before (a device
// that cannot reach etcd at its start ends, by design) — and the device is
// started again.
func (r *run) watch(d *device, cmd *exec.Cmd, exited chan struct{}) {
	err := cmd.Wait()
	close(exited)
	d.mu.Lock()
	expected := d.expected
	if d.cmd == cmd {
		d.cmd = nil
	}
	d.mu.Unlock()
	if expected || r.ending.Load() {
		return
	}
	if r.etcdFaultedWithin(20 * time.Second) {
		r.count(&r.rep.DeviceExitsNearEtcdFaults)
	} else {
		r.anomaly("device %s ended on its own: %v (its log: %s)", d.spec.ID, err, d.log.path)
	}
	for !r.ending.Load() {
		time.Sleep(500 * time.Millisecond)
		if err := r.startDevice(d); err == nil {
			return
		}
	}
}

// kill SIGKILLs d's process and waits until it ended (the caller reads
// its counters first: scrapeDevice).
func (d *device) kill() {
	d.mu.Lock()
	cmd, exited := d.cmd, d.exited
	d.expected = true
	d.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGCONT) // a paused process dies only once it runs
	cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

// signal sends sig to d's process (if it runs); pause records a SIGSTOP.
func (d *device) signal(sig syscall.Signal) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cmd == nil {
		return
	}
	d.cmd.Process.Signal(sig)
	d.paused = sig == syscall.SIGSTOP
}

// stop ends d's process gracefully (SIGTERM), killing it after grace.
func (d *device) stop(grace time.Duration) {
	d.mu.Lock()
	cmd, exited := d.cmd, d.exited
	d.expected = true
	d.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGCONT)
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(grace):
		cmd.Process.Signal(syscall.SIGKILL)
		<-exited
	}
}

func (d *device) address() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.addr
}

// fill writes zeros into a file on d's filesystem until it is full; the
// caller removes the file (free).
func (d *device) fill() (int64, error) {
	f, err := os.OpenFile(d.fillPath(), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	var n int64
	for {
		k, err := f.Write(buf)
		n += int64(k)
		if errors.Is(err, syscall.ENOSPC) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if k < len(buf) {
			return n, nil
		}
	}
}

func (d *device) free() error      { return os.Remove(d.fillPath()) }
func (d *device) fillPath() string { return filepath.Join(d.dir, "filler") }

// flipPage XORs one bit of a random byte in one of d's channel files
// (wherever it lands: a live object's page, or a free one no read sees).
func (d *device) flipPage(pick func(n int64) int64) error {
	files, err := filepath.Glob(filepath.Join(d.spec.Store, "ch*"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no channel files in %s: %v", d.spec.Store, err)
	}
	f, err := os.OpenFile(files[pick(int64(len(files)))], os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() == 0 {
		return nil
	}
	off := pick(fi.Size())
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		return err
	}
	b[0] ^= 1 << pick(8)
	_, err = f.WriteAt(b, off)
	return err
}

// deviceLog appends a device's stderr to its log file and counts its
// scrubs' quarantines.
type deviceLog struct {
	path        string
	mu          sync.Mutex
	f           *os.File
	quarantines *atomic.Int64
}

func (l *deviceLog) Write(p []byte) (int, error) {
	l.quarantines.Add(int64(bytes.Count(p, []byte("scrub quarantined corrupt objects"))))
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Write(p)
}
