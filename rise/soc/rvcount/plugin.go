package rvcount

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

//go:embed csrc/insncount.c
var pluginSource []byte

// BuildPlugin compiles the counting plugin with the host C compiler cc
// into dir and returns the shared object's path.
func BuildPlugin(ctx context.Context, cc, dir string) (string, error) {
	src := filepath.Join(dir, "insncount.c")
	so := filepath.Join(dir, "insncount.so")
	if err := os.WriteFile(src, pluginSource, 0o644); err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, cc, "-shared", "-fPIC", "-O2", "-o", so, src).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("rvcount: building the qemu plugin with %s: %v\n%s", cc, err, out)
	}
	return so, nil
}
