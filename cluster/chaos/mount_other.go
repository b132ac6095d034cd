//go:build !linux

package chaos

import (
	"errors"
	"os/exec"
)

func mountLimited(dir string, size int64) error {
	return errors.New("a size-limited filesystem needs Linux's tmpfs")
}

func unmount(dir string) error { return nil }

func dieWithParent(cmd *exec.Cmd) {}
