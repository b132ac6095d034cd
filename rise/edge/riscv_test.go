package edge_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/rise/edge"
	"github.com/rosemary-fhe/rosemary/rise/video"
)

func goTool(t *testing.T) string {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		if goBin, err = exec.LookPath("go"); err != nil {
			t.Skip("go tool not found")
		}
	}
	return goBin
}

// The edge package (and the riscv64 encryptor) must not need Lattigo at run
// time: no Lattigo package among their non-test dependencies.
func TestNoLattigoDependency(t *testing.T) {
	out, err := exec.Command(goTool(t), "list", "-deps", ".", "./internal/rvencrypt").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "lattigo") {
			t.Fatalf("edge depends on %s at run time", line)
		}
	}
}

// The encryptor built for GOARCH=riscv64 runs under qemu-riscv64 and its
// ciphertext decrypts on the host to the exact frame bytes. Skipped only
// where qemu-riscv64 is absent (.ci/run installs Debian's qemu-user).
func TestRISCV(t *testing.T) {
	qemu, err := exec.LookPath("qemu-riscv64")
	if err != nil {
		t.Skip("qemu-riscv64 not installed")
	}
	if testing.Short() {
		t.Skip("cross build skipped in -short mode")
	}
	goBin := goTool(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "rvencrypt")
	build := exec.Command(goBin, "build", "-o", bin, "./internal/rvencrypt")
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=riscv64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("riscv64 build: %v\n%s", err, out)
	}
	p, _ := edge.Preset(4096)
	ctx, _ := edge.NewContext(p)
	sk, pk, err := ctx.GenKeys()
	if err != nil {
		t.Fatal(err)
	}
	pkFile, ctFile := filepath.Join(dir, "public.key"), filepath.Join(dir, "out.ct")
	if err := os.WriteFile(pkFile, ctx.MarshalPublicKey(pk), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(qemu, bin, "4096", pkFile, ctFile).CombinedOutput(); err != nil {
		t.Fatalf("qemu-riscv64: %v\n%s", err, out)
	}
	b, err := os.ReadFile(ctFile)
	if err != nil {
		t.Fatal(err)
	}
	ct, err := ctx.UnmarshalCiphertext(b)
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := edge.NewDecryptor(ctx, sk)
	codec, _ := video.NewCodec(p)
	slots := make([]float64, codec.Slots)
	if err := dec.Decrypt(ct, slots); err != nil {
		t.Fatal(err)
	}
	want := video.SyntheticFrame(video.QQVGAWidth, video.QQVGAHeight, 0)
	got := video.Frame{W: want.W, H: want.H, Pix: make([]byte, len(want.Pix))}
	if err := codec.Unpack(slots, 0, got); err != nil {
		t.Fatal(err)
	}
	n := codec.BitsPerCiphertext() / 8
	if !bytes.Equal(got.Pix[:n], want.Pix[:n]) {
		t.Fatal("riscv64 ciphertext does not decrypt to the frame bytes")
	}
}
