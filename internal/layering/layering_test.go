package layering

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the module root, relative to this package's directory.
const root = "../.."

// goCmd runs the go command at the module root without the network: go
// list needs only the module cache.
func goCmd(t *testing.T, args ...string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command: %v", err)
	}
	cmd := exec.Command(goBin, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOPROXY=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// readmeOrder reads the Layout section's order from README.md: the names
// in backquotes between arrows, a rank per arrow-separated part (names
// sharing a part are peers, which may not import each other).
func readmeOrder(readme string) ([][]string, error) {
	start := strings.Index(readme, "\n## Layout\n")
	if start < 0 {
		return nil, fmt.Errorf("README.md has no Layout section")
	}
	section := readme[start+len("\n## Layout\n"):]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var list []string
	for _, line := range strings.Split(section, "\n") {
		if strings.Contains(line, "→") {
			list = append(list, line)
		}
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("the Layout section states no order (no →)")
	}
	text := strings.Join(list, " ")
	text = text[strings.Index(text, "`"):] // the prose before the first name
	name := regexp.MustCompile("`([^`]+)`")
	var ranks [][]string
	for _, part := range strings.Split(text, "→") {
		var rank []string
		for _, m := range name.FindAllStringSubmatch(part, -1) {
			rank = append(rank, m[1])
		}
		if len(rank) == 0 {
			return nil, fmt.Errorf("an arrow with no package after it in %q", text)
		}
		ranks = append(ranks, rank)
	}
	return ranks, nil
}

// imports is the module's import graph: each package (by its path inside
// the module) to the module packages it imports, test files excluded.
func imports(t *testing.T, module string) map[string][]string {
	t.Helper()
	g := map[string][]string{}
	out := goCmd(t, "list", "-e", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], module+"/")
		g[pkg] = nil
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, module+"/") {
				g[pkg] = append(g[pkg], strings.TrimPrefix(imp, module+"/"))
			}
		}
	}
	return g
}

// violations lists every import that does not flow down the order: a
// package whose group (the longest listed name that is the package or a
// parent of it) is not listed, and an import of a package in another group
// of the same or a later rank.
func violations(ranks [][]string, graph map[string][]string) []string {
	rank := map[string]int{}
	for i, r := range ranks {
		for _, name := range r {
			rank[name] = i
		}
	}
	group := func(pkg string) (string, bool) {
		best := ""
		for name := range rank {
			if (pkg == name || strings.HasPrefix(pkg, name+"/")) && len(name) > len(best) {
				best = name
			}
		}
		return best, best != ""
	}
	var bad []string
	pkgs := make([]string, 0, len(graph))
	for p := range graph {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	for _, p := range pkgs {
		gp, ok := group(p)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s is in no group of the order", p))
			continue
		}
		for _, imp := range graph[p] {
			gi, ok := group(imp)
			if !ok || gi == gp {
				continue // reported as a package of its own, or within a group
			}
			if rank[gi] >= rank[gp] {
				bad = append(bad, fmt.Sprintf("%s imports %s: %s is not before %s", p, imp, gi, gp))
			}
		}
	}
	return bad
}

// TestImportsFollowREADMEOrder checks the whole module against the order
// README.md states, and that every name in the order is a package.
func TestImportsFollowREADMEOrder(t *testing.T) {
	readme, err := os.ReadFile(root + "/README.md")
	if err != nil {
		t.Fatal(err)
	}
	ranks, err := readmeOrder(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	module := strings.TrimSpace(goCmd(t, "list", "-m"))
	graph := imports(t, module)
	for _, bad := range violations(ranks, graph) {
		t.Error(bad)
	}
	for _, r := range ranks {
		for _, name := range r {
			found := false
			for p := range graph {
				found = found || p == name || strings.HasPrefix(p, name+"/")
			}
			if !found {
				t.Errorf("the order names %s, which is no package of the module", name)
			}
		}
	}
	if t.Failed() {
		t.Logf("order: %v", ranks)
	}
}

// planner is the planning side of the compiler tree: the packages the
// executors must not reach. The compiler tree's other packages (ir, isa,
// arch, lower) are what the executors run, so they may.
var planner = []string{"compiler", "compiler/tdap", "compiler/workload", "compiler/bootconst"}

// TestExecutorsNeedNoPlanner: engine and device run lowered code; they
// import code generation (compiler/lower) and nothing of the planner,
// not even indirectly.
func TestExecutorsNeedNoPlanner(t *testing.T) {
	module := strings.TrimSpace(goCmd(t, "list", "-m"))
	deps := strings.Fields(goCmd(t, "list", "-deps", "./engine", "./device"))
	for _, want := range []string{"compiler/lower", "engine", "device"} {
		if !slices.Contains(deps, module+"/"+want) {
			t.Errorf("go list -deps ./engine ./device lacks %s: %v", want, deps)
		}
	}
	for _, d := range deps {
		if slices.Contains(planner, strings.TrimPrefix(d, module+"/")) {
			t.Errorf("engine or device depends on the planning package %s", d)
		}
	}
}

// TestViolationsCatchUpwardImports shows the check fails on what it must:
// an upward import, an import between peers, a package outside the order,
// and, in the real graph, engine importing the planner.
func TestViolationsCatchUpwardImports(t *testing.T) {
	ranks := [][]string{{"a"}, {"b"}, {"c", "d"}}
	for _, tc := range []struct {
		graph map[string][]string
		want  []string
	}{
		{map[string][]string{"a": nil, "b": {"a"}, "c": {"a", "b", "c/x"}, "c/x": {"a"}, "d": {"b"}}, nil},
		{map[string][]string{"a": {"b"}, "b": nil}, []string{"a imports b: b is not before a"}},
		{map[string][]string{"c": {"d/y"}, "d/y": nil}, []string{"c imports d/y: d is not before c"}},
		{map[string][]string{"e": {"a"}, "a": nil}, []string{"e is in no group of the order"}},
	} {
		if got := violations(ranks, tc.graph); !slices.Equal(got, tc.want) {
			t.Errorf("violations(%v) = %q, want %q", tc.graph, got, tc.want)
		}
	}

	readme, err := os.ReadFile(root + "/README.md")
	if err != nil {
		t.Fatal(err)
	}
	real, err := readmeOrder(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	graph := imports(t, strings.TrimSpace(goCmd(t, "list", "-m")))
	graph["engine"] = append(slices.Clone(graph["engine"]), "compiler")
	want := "engine imports compiler: compiler is not before engine"
	if got := violations(real, graph); !slices.Contains(got, want) {
		t.Errorf("engine importing the planner gave %q, want it to include %q", got, want)
	}
}

func TestReadmeOrderParsesRanks(t *testing.T) {
	got, err := readmeOrder("# x\n\n## Layout\n\nImports flow down: `a` → `b`, `c` →\n`d/e` → `f`.\nOther text.\n\n## Next\n`z` → `y`\n")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"a"}, {"b", "c"}, {"d/e"}, {"f"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("readmeOrder = %q, want %q", got, want)
	}
	if _, err := readmeOrder("## Layout\nno order here\n"); err == nil {
		t.Fatal("a Layout section without arrows was accepted")
	}
}

// TestApplicationsLinkNoDevice: the client library and the cluster speak
// to devices through the contract (device/api) and the gRPC client
// (device/remote) only; the store, its bbolt catalog and the device
// itself stay out of every application's binary.
func TestApplicationsLinkNoDevice(t *testing.T) {
	module := strings.TrimSpace(goCmd(t, "list", "-m"))
	deps := strings.Fields(goCmd(t, "list", "-deps", "./client", "./cluster"))
	for _, want := range []string{module + "/device/api", module + "/device/remote"} {
		if !slices.Contains(deps, want) {
			t.Errorf("go list -deps ./client ./cluster lacks %s", want)
		}
	}
	for _, d := range deps {
		switch {
		case d == module+"/device/store" || strings.HasPrefix(d, module+"/device/store/"):
			t.Errorf("client or cluster depends on the store package %s", d)
		case d == "go.etcd.io/bbolt" || strings.HasPrefix(d, "go.etcd.io/bbolt/"):
			t.Errorf("client or cluster depends on bbolt (%s)", d)
		case d == module+"/device":
			t.Errorf("client or cluster depends on the device server %s", d)
		case d == module+"/compiler" || strings.HasPrefix(d, module+"/compiler/") || d == module+"/engine":
			// The planner, the code generator and the interpreter: a query
			// is typed (QueryLWE) or its program comes from client/programs,
			// which an application links only if it serves compiled kinds.
			t.Errorf("client or cluster depends on %s", d)
		case d == module+"/device/authz" || d == module+"/device/guard" || d == module+"/device/admit" || d == module+"/device/pirserver":
			// The server's access control, call guard and admission: an
			// application needs the contract's errors, not these.
			t.Errorf("client or cluster depends on the server package %s", d)
		}
	}
}

// TestKernelsAreLeaves: the hot kernels (fhe/rns, fhe/matvec) and the
// memory-bandwidth probe (internal/membw) import no package of the module,
// so every scheme, executor and benchmark may use them; the kernels'
// only dependency outside the standard library is golang.org/x/sys/cpu.
func TestKernelsAreLeaves(t *testing.T) {
	module := strings.TrimSpace(goCmd(t, "list", "-m"))
	for _, pkg := range []string{"fhe/rns", "fhe/matvec", "internal/membw"} {
		deps := strings.Fields(goCmd(t, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./"+pkg))
		for _, d := range deps {
			if d != module+"/"+pkg && d != "golang.org/x/sys/cpu" {
				t.Errorf("%s depends on %s", pkg, d)
			}
		}
	}
}
