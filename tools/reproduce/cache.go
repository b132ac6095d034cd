package reproduce

import (
	"bufio"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/sim/system"
)

// cacheFormat versions the layout and encoding of the files below; a
// change to either must change it.
const cacheFormat = "reproduce-cache-v1"

// Cache keeps compiled plans and simulation reports on disk, so that a
// second run starts warm. Entries are gob files named by their content key
// under a directory named by the cache format and a version key: the code
// that compiled and simulated them (BinaryVersion), so a rebuilt binary
// never reads what an older compiler or simulator wrote. Entries of other
// versions are left in place, not deleted.
type Cache struct {
	dir string
}

// BinaryVersion is the version key of this program: the SHA-256 of its
// executable, which changes with any change to the compiler or simulator
// linked into it.
func BinaryVersion() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("reproduce: cache version: %w", err)
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", fmt.Errorf("reproduce: cache version: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reproduce: cache version: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// OpenCache opens (creating) the cache under dir for entries written by
// code of the given version key.
func OpenCache(dir, version string) (*Cache, error) {
	if version == "" {
		return nil, errors.New("reproduce: cache without a version key")
	}
	if len(version) > 16 {
		version = version[:16]
	}
	d := filepath.Join(dir, cacheFormat+"-"+version)
	for _, sub := range []string{"plans", "reports"} {
		if err := os.MkdirAll(filepath.Join(d, sub), 0o755); err != nil {
			return nil, fmt.Errorf("reproduce: cache: %w", err)
		}
	}
	return &Cache{dir: d}, nil
}

// storedReport is a simulation's outcome: its report, or the simulator's
// error (a run whose simulated time overflows fails the same way again).
type storedReport struct {
	Report system.Report
	Err    string
}

func (c *Cache) path(kind string, k contentKey) string {
	return filepath.Join(c.dir, kind, string(k)+".gob")
}

// load decodes the entry k of kind into v; found is false when there is no
// such entry or it does not decode (a torn or foreign file: it is
// recomputed and overwritten).
func (c *Cache) load(kind string, k contentKey, v any) (found bool, err error) {
	f, err := os.Open(c.path(kind, k))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reproduce: cache: %w", err)
	}
	defer f.Close()
	if err := gob.NewDecoder(bufio.NewReader(f)).Decode(v); err != nil {
		return false, nil
	}
	return true, nil
}

// store writes v as entry k of kind: to a temporary file renamed into
// place, so a reader never sees a partial entry.
func (c *Cache) store(kind string, k contentKey, v any) error {
	final := c.path(kind, k)
	f, err := os.CreateTemp(filepath.Dir(final), ".tmp-*")
	if err != nil {
		return fmt.Errorf("reproduce: cache: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = gob.NewEncoder(w).Encode(v)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), final)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("reproduce: cache: store %s %s: %w", kind, k, err)
	}
	return nil
}

func (c *Cache) loadPlan(k contentKey) (*compiler.Plan, bool, error) {
	var p compiler.Plan
	ok, err := c.load("plans", k, &p)
	if !ok || err != nil || p.Program == nil {
		return nil, false, err
	}
	return &p, true, nil
}

func (c *Cache) storePlan(k contentKey, p *compiler.Plan) error { return c.store("plans", k, p) }

func (c *Cache) loadReport(k contentKey) (storedReport, bool, error) {
	var s storedReport
	ok, err := c.load("reports", k, &s)
	return s, ok, err
}

func (c *Cache) storeReport(k contentKey, s storedReport) error { return c.store("reports", k, s) }
