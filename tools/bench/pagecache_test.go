package bench

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// cachedBytes sees what dropping the cache leaves: a file just read is
// cached whole, dropped it is not, and pages another mapping holds (a
// device's kept mappings) stay cached through the drop — the case a
// "cold" query must be labelled warm in.
func TestCachedBytesSeesMappedPagesSurviveTheDrop(t *testing.T) {
	dir := t.TempDir()
	const size = 64<<10 + 100
	name := filepath.Join(dir, "ch00")
	if err := os.WriteFile(name, make([]byte, size), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(name); err != nil {
		t.Fatal(err)
	}
	cached, total, err := cachedBytes(dir)
	if err != nil {
		t.Fatal(err)
	}
	if total != size || cached != size {
		t.Fatalf("a file just read: %d of %d bytes cached, want all %d", cached, total, size)
	}
	if err := dropPageCache(dir); err != nil {
		t.Fatal(err)
	}
	if cached, _, _ = cachedBytes(dir); cached != 0 {
		t.Skipf("this file system keeps %d bytes cached through FADV_DONTNEED (tmpfs?)", cached)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	var sum byte
	for i := 0; i < size; i += 4096 {
		sum += m[i]
	}
	if err := dropPageCache(dir); err != nil {
		t.Fatal(err)
	}
	if cached, _, _ = cachedBytes(dir); cached != size {
		t.Fatalf("mapped and touched (%d), then dropped: %d of %d bytes cached, want all", sum, cached, size)
	}
}
