package device

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
)

// A device whose filesystem fills up refuses the write that does not fit
// with ResourceExhausted (api.ErrDiskFull at the client, reason DISK_FULL:
// a full disk, neither a bad request nor a busy device), keeps every object it stored before exactly, serves on,
// and takes writes again once space is freed. The store sits on a 2 MiB
// tmpfs (the test needs root to mount one, and skips without).
func TestFullDiskIsResourceExhausted(t *testing.T) {
	fs := filepath.Join(t.TempDir(), "fs")
	if err := mountTmpfs(fs, 2<<20); err != nil {
		t.Skipf("no size-limited filesystem here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(fs, syscall.MNT_DETACH) })
	st, err := store.Open(fs, layout.Layout{Channels: 4, PageSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c, _, err := InProcess(st, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	tc := newTestClient(c)
	ctx := context.Background()
	q := []uint64{0x7fffffffe0001, 0x7ffffffe40001}
	var stored []string
	var full error
	for i := range 100 { // 64 KiB each: the 2 MiB fill up well before
		name := fmt.Sprintf("o%d", i)
		if _, err := tc.put(ctx, name, object.KindCiphertext, 2, 2, limbsOf(q, 2, uint64(i))); err != nil {
			full = err
			break
		}
		stored = append(stored, name)
	}
	if full == nil {
		t.Fatal("100 objects of 64 KiB fit a 2 MiB filesystem")
	}
	if !errors.Is(full, api.ErrDiskFull) || errors.Is(full, api.ErrBusy) || errors.Is(full, api.ErrExhausted) || code(full) != codes.ResourceExhausted {
		t.Fatalf("a write to a full disk: %v (code %v), want ResourceExhausted", full, code(full))
	}
	for i, name := range stored {
		got, err := tc.get(ctx, name)
		if err != nil {
			t.Fatalf("%s after the disk filled: %v", name, err)
		}
		want := limbsOf(q, 2, uint64(i))
		if !slices.EqualFunc(got.Data, want, slices.Equal) {
			t.Fatalf("%s changed after the disk filled", name)
		}
	}
	for _, name := range stored[:len(stored)/2] {
		if err := tc.del(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tc.put(ctx, "after", object.KindCiphertext, 2, 2, limbsOf(q, 2, 999)); err != nil {
		t.Fatalf("a write once space was freed: %v", err)
	}
}

// mountTmpfs mounts a tmpfs of size bytes at dir.
func mountTmpfs(dir string, size int64) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, fmt.Sprintf("size=%d", size))
}
