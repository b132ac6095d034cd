package chaos

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// mountLimited mounts a tmpfs of size bytes at dir (created if absent): a
// filesystem that fills up. It needs CAP_SYS_ADMIN (root).
func mountLimited(dir string, size int64) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		return fmt.Errorf("mount a %d-byte tmpfs at %s: %w", size, dir, err)
	}
	return nil
}

// unmount detaches what mountLimited mounted.
func unmount(dir string) error { return syscall.Unmount(dir, syscall.MNT_DETACH) }

// dieWithParent makes the kernel kill a device process when the run's
// process dies (a device must not outlive the run that faults it).
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
