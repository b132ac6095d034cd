package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/tools/crosscheck"
)

func init() {
	register(command{name: "isa", summary: "mProgram tools: asm, dis, verify (bit-exactness vs Lattigo)", run: runISA})
}

func runISA(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: rosemary isa asm|dis|verify [flags]")
	}
	switch args[0] {
	case "asm":
		return isaAsm(args[1:])
	case "dis":
		return isaDis(args[1:])
	case "verify":
		return isaVerify(args[1:])
	}
	return fmt.Errorf("unknown isa subcommand %q (asm, dis, verify)", args[0])
}

func readInput(path string) ([]byte, error) {
	if path == "" || path == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(path)
}

// isaAsm assembles text to the binary encoding.
func isaAsm(args []string) error {
	fs := flag.NewFlagSet("isa asm", flag.ContinueOnError)
	out := fs.String("o", "", "output file (default stdout)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	src, err := readInput(fs.Arg(0))
	if err != nil {
		return err
	}
	p, err := isa.Assemble(bytes.NewReader(src))
	if err != nil {
		return err
	}
	b, err := p.MarshalBinary()
	if err != nil {
		return err
	}
	if *out == "" {
		_, err = os.Stdout.Write(b)
		return err
	}
	return os.WriteFile(*out, b, 0o644)
}

// isaDis disassembles a binary mProgram.
func isaDis(args []string) error {
	fs := flag.NewFlagSet("isa dis", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	b, err := readInput(fs.Arg(0))
	if err != nil {
		return err
	}
	var p isa.Program
	if err := p.UnmarshalBinary(b); err != nil {
		return err
	}
	return isa.Disassemble(os.Stdout, &p)
}

type verifyReport struct {
	AllBitExact bool                `json:"all_bitexact"`
	AllDecrypt  bool                `json:"all_decrypt"`
	Ops         []crosscheck.Result `json:"ops"`
}

// isaVerify lowers every operation, interprets it and compares with Lattigo.
func isaVerify(args []string) error {
	fs := flag.NewFlagSet("isa verify", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	presets := fs.String("presets", "insecure-test,insecure-test-bgv,ckks-14,bgv-14", "comma-separated parameter presets")
	full := fs.Bool("full", false, "also the large presets: ckks-16 (logN 16, behind the whole-operation speed figures) and bgv-13")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *full {
		*presets += ",ckks-16,bgv-13"
	}
	rep := verifyReport{AllBitExact: true, AllDecrypt: true}
	add := func(r crosscheck.Result) {
		rep.Ops = append(rep.Ops, r)
		rep.AllBitExact = rep.AllBitExact && r.BitExact && r.Error == ""
		rep.AllDecrypt = rep.AllDecrypt && r.Decrypts && r.Error == ""
	}
	for _, name := range strings.Split(*presets, ",") {
		env, err := crosscheck.NewEnv(strings.TrimSpace(name))
		if err != nil {
			return err
		}
		for _, op := range env.Ops() {
			add(env.Check(op))
		}
	}
	// A whole bootstrapping (Lattigo's default circuit) on the interpreter
	// against Lattigo's Evaluate: full and sparse slots; logN 12 with --full.
	boots := [][2]int{{10, 9}, {10, 6}, {11, 10}}
	if *full {
		boots = append(boots, [2]int{12, 11})
	}
	for _, b := range boots {
		add(crosscheck.CheckBootstrap(b[0], b[1]))
	}
	if *asJSON {
		if err := printJSON(rep); err != nil {
			return err
		}
	} else {
		fmt.Printf("%-18s %-5s %-18s %5s %4s %9s %9s %9s\n", "op", "scheme", "preset", "logN", "dnum", "bitexact", "decrypts", "micro_ops")
		for _, r := range rep.Ops {
			fmt.Printf("%-18s %-5s %-18s %5d %4d %9v %9v %9d %s\n", r.Op, r.Scheme, r.Preset, r.LogN, r.DNum, r.BitExact, r.Decrypts, r.MicroOps, r.Error)
		}
		fmt.Printf("all bit-exact: %v, all decrypt: %v\n", rep.AllBitExact, rep.AllDecrypt)
	}
	if !rep.AllBitExact || !rep.AllDecrypt {
		return fmt.Errorf("verification failed")
	}
	return nil
}
