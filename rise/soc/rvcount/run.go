package rvcount

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// Qemu runs riscv64 programs under qemu-riscv64 with the counting plugin.
type Qemu struct {
	Path   string // qemu-riscv64
	Plugin string // from BuildPlugin
	Dir    string // scratch directory for the plugin's log
}

// Run executes bin with args and returns the plugin's log and the
// program's standard output. A failing program is an error: counts of a
// run that did not finish correctly are not reported.
func (q Qemu) Run(ctx context.Context, bin string, args ...string) (Log, string, error) {
	logFile := filepath.Join(q.Dir, filepath.Base(bin)+".marks")
	plugin := q.Plugin + ",mark=" + strconv.Itoa(MarkSyscall) + ",out=" + logFile
	cmd := exec.CommandContext(ctx, q.Path, append([]string{"-plugin", plugin, bin}, args...)...)
	// One P, no collector and no preemption signals: the measured thread's
	// count is its own work (a SIGURG handled on it adds thousands of
	// instructions to whichever phase it lands in).
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "GOGC=off", "GODEBUG=asyncpreemptoff=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return Log{}, stdout.String(), fmt.Errorf("rvcount: %s %v: %v\n%s", filepath.Base(bin), args, err, stderr.String())
	}
	f, err := os.Open(logFile)
	if err != nil {
		return Log{}, stdout.String(), fmt.Errorf("rvcount: the plugin wrote no log: %w", err)
	}
	defer f.Close()
	l, err := ParseLog(f)
	return l, stdout.String(), err
}
