// Command rvencrypt is the edge encryptor as a stand-alone program, built
// for GOARCH=riscv64 and run under qemu-riscv64 by edge's TestRISCV: it reads
// a public key, encrypts the frame-codec packing of synthetic QQVGA frame 0
// (ciphertext 0) and writes the ciphertext.
//
//	rvencrypt N PUBLIC.key OUT.ct
package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/rosemary-fhe/rosemary/rise/edge"
	"github.com/rosemary-fhe/rosemary/rise/video"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "rvencrypt:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("usage: rvencrypt N PUBLIC.key OUT.ct")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil {
		return err
	}
	p, err := edge.Preset(n)
	if err != nil {
		return err
	}
	ctx, err := edge.NewContext(p)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(args[1])
	if err != nil {
		return err
	}
	pk, err := ctx.UnmarshalPublicKey(b)
	if err != nil {
		return err
	}
	enc, err := edge.NewEncryptor(ctx, pk)
	if err != nil {
		return err
	}
	codec, err := video.NewCodec(p)
	if err != nil {
		return err
	}
	slots := make([]float64, codec.Slots)
	if err := codec.Pack(video.SyntheticFrame(video.QQVGAWidth, video.QQVGAHeight, 0), 0, slots); err != nil {
		return err
	}
	ct := ctx.NewCiphertext()
	if err := enc.Encrypt(slots, codec.Scale, ct); err != nil {
		return err
	}
	out, err := ctx.MarshalCiphertext(ct)
	if err != nil {
		return err
	}
	return os.WriteFile(args[2], out, 0o644)
}
