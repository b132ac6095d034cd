package reproduce

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestBuildCommitOrder checks the fallback order: the build's revision,
// then the checkout's HEAD, then "unknown", and that the checkout is asked
// only when the build has no revision.
func TestBuildCommitOrder(t *testing.T) {
	const built, head = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	info := func(settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) { return &debug.BuildInfo{Settings: settings}, true }
	}
	noInfo := func() (*debug.BuildInfo, bool) { return nil, false }
	asked := false
	checkout := func(rev string, ok bool) func() (string, bool) {
		return func() (string, bool) { asked = true; return rev, ok }
	}
	for _, c := range []struct {
		name     string
		info     func() (*debug.BuildInfo, bool)
		checkout func() (string, bool)
		want     string
		asked    bool
	}{
		{"build revision", info(debug.BuildSetting{Key: "vcs.revision", Value: built}), checkout(head, true), built, false},
		{"build revision, modified", info(debug.BuildSetting{Key: "vcs.revision", Value: built}, debug.BuildSetting{Key: "vcs.modified", Value: "true"}), checkout(head, true), built + "+modified", false},
		{"build revision, clean", info(debug.BuildSetting{Key: "vcs.modified", Value: "false"}, debug.BuildSetting{Key: "vcs.revision", Value: built}), checkout(head, true), built, false},
		{"-buildvcs=false, in a checkout", info(debug.BuildSetting{Key: "GOOS", Value: "linux"}), checkout(head, true), head, true},
		{"no build info, in a checkout", noInfo, checkout(head+"+modified", true), head + "+modified", true},
		{"no revision, no checkout", info(), checkout("", false), "unknown", true},
		{"no build info, no checkout", noInfo, checkout("", false), "unknown", true},
	} {
		asked = false
		if got := buildCommit(c.info, c.checkout); got != c.want || asked != c.asked {
			t.Errorf("%s: %q (checkout asked: %v), want %q (%v)", c.name, got, asked, c.want, c.asked)
		}
	}
}

// TestCheckoutCommit runs git on scratch repositories: a checkout of this
// module gives its HEAD (marked when a tracked file changed), a checkout of
// another module or no checkout gives nothing.
func TestCheckoutCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ctx := context.Background()
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	repo := func(module string) string {
		dir := t.TempDir()
		git(dir, "init", "-q")
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+module+"\n\ngo 1.26\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		git(dir, "add", "go.mod")
		git(dir, "commit", "-q", "-m", "c")
		return dir
	}

	ours := repo(modulePath)
	head := git(ours, "rev-parse", "HEAD")
	if got, ok := checkoutCommit(ctx, filepath.Join(ours, "sub")); !ok || got != head {
		t.Fatalf("our checkout: %q, %v; want %q", got, ok, head)
	}
	if err := os.WriteFile(filepath.Join(ours, "untracked.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := checkoutCommit(ctx, ours); got != head {
		t.Fatalf("an untracked file marked the checkout: %q", got)
	}
	if err := os.WriteFile(filepath.Join(ours, "go.mod"), []byte("module "+modulePath+"\n\ngo 1.26\n// changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := checkoutCommit(ctx, ours); !ok || got != head+"+modified" {
		t.Fatalf("modified checkout: %q, %v; want %q", got, ok, head+"+modified")
	}

	if got, ok := checkoutCommit(ctx, repo("example.org/other")); ok {
		t.Fatalf("a checkout of another module gave %q", got)
	}
	if got, ok := checkoutCommit(ctx, t.TempDir()); ok {
		t.Fatalf("a directory outside any checkout gave %q", got)
	}
}
