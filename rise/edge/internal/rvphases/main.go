// Command rvphases runs one encryption and one decryption of the edge
// encryptor phase by phase, for counting the instructions of each phase
// under qemu-riscv64 (rise/soc/rvcount). It is built for GOARCH=riscv64.
//
//	rvphases -n N -mark SYSCALL
//
// Between phases it makes the system call numbered SYSCALL with the phase
// (edge.Phase) as its argument: the kernel has no such call and returns
// ENOSYS, while rvcount's qemu plugin records the executing thread's
// instruction count at each such call. Mark 0 opens the measured region.
// Keys are generated and one unmarked encryption and decryption run first
// (warm-up), so the measured pair runs the steady-state code path. The
// frame decrypted from the measured ciphertext must equal the frame's
// bytes, or the program fails: the counts belong to a correct encryption.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"runtime"
	"syscall"

	"github.com/rosemary-fhe/rosemary/rise/edge"
	"github.com/rosemary-fhe/rosemary/rise/video"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "rvphases:", err)
		os.Exit(1)
	}
}

func run() error {
	n := flag.Int("n", 4096, "ring degree (an edge preset)")
	mark := flag.Uint("mark", 0, "system call number of the phase marker (required)")
	flag.Parse()
	if *mark == 0 {
		return fmt.Errorf("-mark is required")
	}
	// The plugin counts per thread: keep the measured work on this one.
	runtime.LockOSThread()
	p, err := edge.Preset(*n)
	if err != nil {
		return err
	}
	ctx, err := edge.NewContext(p, edge.WithPath(edge.PathFly))
	if err != nil {
		return err
	}
	sk, pk, err := ctx.GenKeys()
	if err != nil {
		return err
	}
	enc, err := edge.NewEncryptor(ctx, pk)
	if err != nil {
		return err
	}
	dec, err := edge.NewDecryptor(ctx, sk)
	if err != nil {
		return err
	}
	codec, err := video.NewCodec(p)
	if err != nil {
		return err
	}
	frame := video.SyntheticFrame(video.QQVGAWidth, video.QQVGAHeight, 0)
	slots := make([]float64, codec.Slots)
	if err := codec.Pack(frame, 0, slots); err != nil {
		return err
	}
	out := make([]float64, codec.Slots)
	ct := ctx.NewCiphertext()
	nop := func(edge.Phase) {}
	if err := enc.EncryptPhased(slots, codec.Scale, ct, nop); err != nil {
		return err
	}
	if err := dec.DecryptPhased(ct, out, nop); err != nil {
		return err
	}
	marker := func(ph edge.Phase) { syscall.RawSyscall(uintptr(*mark), uintptr(ph), 0, 0) }
	marker(0)
	if err := enc.EncryptPhased(slots, codec.Scale, ct, marker); err != nil {
		return err
	}
	if err := dec.DecryptPhased(ct, out, marker); err != nil {
		return err
	}
	got := video.Frame{W: frame.W, H: frame.H, Pix: make([]byte, len(frame.Pix))}
	if err := codec.Unpack(out, 0, got); err != nil {
		return err
	}
	k := min(codec.BitsPerCiphertext()/8, len(frame.Pix)) // the bytes ciphertext 0 carries
	if !bytes.Equal(got.Pix[:k], frame.Pix[:k]) {
		return fmt.Errorf("N=%d: the measured ciphertext does not decrypt to the frame bytes", *n)
	}
	fmt.Printf("ok N=%d limbs=%d\n", p.N, len(p.Q))
	return nil
}
