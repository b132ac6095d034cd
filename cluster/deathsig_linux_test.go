package cluster_test

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill a device process when the test
// binary that started it dies (a timeout's SIGQUIT would otherwise leave
// it serving, and using the CPU, after the test run).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
