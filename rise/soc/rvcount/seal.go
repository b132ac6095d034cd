package rvcount

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rosemary-fhe/rosemary/rise/edge"
)

//go:embed csrc/sealdriver.c
var sealDriverSource []byte

// SEALRecipe describes how BuildSEAL builds SEAL-Embedded, for the
// benchmark notes.
const SEALRecipe = "riscv64-linux-gnu-gcc -O3 -DNDEBUG -static -DSE_DATA_PATH='\".\"' -DSE_DATA_PATH_LEN=1 " +
	"-I device/lib -I device/lib/shake256 device/lib/*.c (without network.c) device/lib/shake256/fips202.c " +
	"device/lib/shake256/keccakf1600.c sealdriver.c -lm — the library's shipped configuration (device/lib/user_defines.h: " +
	"SE_USE_MALLOC, on-the-fly IFFT, one-shot NTT roots, 32-bit words, float values), CMake's Release flags"

// BuildSEAL compiles SEAL-Embedded's device library from the checkout
// (a clone of microsoft/SEAL-Embedded) with the driver csrc/sealdriver.c,
// statically for riscv64, into dir.
func BuildSEAL(ctx context.Context, t Tools, checkout, dir string) (string, error) {
	lib := filepath.Join(checkout, "device", "lib")
	if _, err := os.Stat(filepath.Join(lib, "ckks_asym.c")); err != nil {
		return "", fmt.Errorf("rvcount: %s is not a SEAL-Embedded checkout (no device/lib/ckks_asym.c)", checkout)
	}
	srcs, err := filepath.Glob(filepath.Join(lib, "*.c"))
	if err != nil {
		return "", err
	}
	var files []string
	for _, s := range srcs {
		if filepath.Base(s) != "network.c" { // sockets; not part of encryption
			files = append(files, s)
		}
	}
	files = append(files, filepath.Join(lib, "shake256", "fips202.c"), filepath.Join(lib, "shake256", "keccakf1600.c"))
	drv := filepath.Join(dir, "sealdriver.c")
	if err := os.WriteFile(drv, sealDriverSource, 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "sealdriver")
	args := []string{"-O3", "-DNDEBUG", "-static", `-DSE_DATA_PATH="."`, "-DSE_DATA_PATH_LEN=1",
		"-I", lib, "-I", filepath.Join(lib, "shake256"), "-o", bin}
	args = append(append(args, files...), drv, "-lm")
	if out, err := exec.CommandContext(ctx, t.Cross, args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("rvcount: building SEAL-Embedded: %v\n%s", err, out)
	}
	return bin, nil
}

// sealPhases maps the driver's marker ids to phase names (edge.Phase
// numbering; 255 is unmeasured work).
func sealPhase(id uint64) (string, bool) {
	switch id {
	case 1, 2, 3, 4, 5:
		return edge.Phase(id).String(), true
	case 255:
		return "", false
	}
	return "?", false
}

// MeasureSEAL runs the SEAL-Embedded driver at ring degree n with the
// preset's number of primes (SEAL-Embedded's own parameter sets). It
// measures encryption only: SEAL-Embedded has no decryptor.
func MeasureSEAL(ctx context.Context, q Qemu, bin string, n int) (Measurement, error) {
	p, err := edge.Preset(n)
	if err != nil {
		return Measurement{}, err
	}
	l, out, err := q.Run(ctx, bin, strconv.Itoa(n), strconv.Itoa(len(p.Q)), strconv.Itoa(MarkSyscall))
	if err != nil {
		return Measurement{}, err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n") // the library prints its memory layout first
	if !strings.HasPrefix(lines[len(lines)-1], "ok ") {
		return Measurement{}, fmt.Errorf("rvcount: sealdriver N=%d did not report success: %q", n, out)
	}
	return SEALMeasurement(l, n, len(p.Q))
}

// SEALMeasurement names the phases of a sealdriver log.
func SEALMeasurement(l Log, n, limbs int) (Measurement, error) {
	ph, err := l.Phases()
	if err != nil {
		return Measurement{}, err
	}
	m := Measurement{Software: "seal-embedded", N: n, Limbs: limbs, Phases: map[string]uint64{}, Total: l.Total}
	for id, c := range ph {
		name, ok := sealPhase(id)
		if name == "?" {
			return Measurement{}, fmt.Errorf("rvcount: sealdriver marked unknown phase %d", id)
		}
		if ok {
			m.Phases[name] = c
		}
	}
	for id := uint64(1); id <= 5; id++ {
		if _, ok := m.Phases[edge.Phase(id).String()]; !ok {
			return Measurement{}, fmt.Errorf("rvcount: N=%d: SEAL-Embedded phase %s was not marked", n, edge.Phase(id))
		}
	}
	return m, nil
}
