package reproduce

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"
)

// modulePath is this module's path: a checkout whose go.mod declares it is
// a checkout of this program.
const modulePath = "github.com/rosemary-fhe/rosemary"

// BuildCommit is the commit the page names as having produced it, the
// first of:
//
//  1. the VCS revision the binary was built from (debug.ReadBuildInfo's
//     vcs.revision, "+modified" when the tree had changes);
//  2. the HEAD of the git checkout of this module the program runs in
//     (`git rev-parse HEAD`, "+modified" likewise), which is what `go run`
//     and builds with -buildvcs=false run: they record no revision;
//  3. "unknown".
func BuildCommit() string {
	return buildCommit(debug.ReadBuildInfo, func() (string, bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return checkoutCommit(ctx, ".")
	})
}

// buildCommit is BuildCommit with its two sources as parameters (tests
// replace them); checkout is asked only when the build info has no
// revision.
func buildCommit(info func() (*debug.BuildInfo, bool), checkout func() (string, bool)) string {
	if bi, ok := info(); ok {
		if rev := vcsRevision(bi); rev != "" {
			return rev
		}
	}
	if rev, ok := checkout(); ok {
		return rev
	}
	return "unknown"
}

// vcsRevision is the build's recorded revision, or "".
func vcsRevision(bi *debug.BuildInfo) string {
	rev, modified := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev != "" && modified {
		rev += "+modified"
	}
	return rev
}

// checkoutCommit is the HEAD commit of the git checkout containing dir, if
// git runs, dir is in a checkout and that checkout is of this module (the
// working directory may be any other repository).
func checkoutCommit(ctx context.Context, dir string) (string, bool) {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--show-toplevel", "HEAD").Output()
	if err != nil {
		return "", false
	}
	lines := strings.Fields(string(out))
	if len(lines) != 2 || !isCommitHash(lines[1]) || !declaresModule(filepath.Join(lines[0], "go.mod")) {
		return "", false
	}
	rev := lines[1]
	// Changes to tracked files mark the revision as a build's vcs.modified
	// does; untracked files (outputs, caches) do not.
	status, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
	if err != nil {
		return "", false
	}
	if len(bytes.TrimSpace(status)) > 0 {
		rev += "+modified"
	}
	return rev, true
}

// isCommitHash reports whether s is a full SHA-1 or SHA-256 commit id.
func isCommitHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// declaresModule reports whether the go.mod at path declares modulePath.
func declaresModule(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`) == modulePath
		}
	}
	return false
}
