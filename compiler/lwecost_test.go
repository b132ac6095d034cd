package compiler_test

import (
	"math"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
)

// The cost of pir-lwe's scan (64 blocks of 8192 rows × 8192 bytes) on the
// Rosemary engine, by hand: 64 × 2048 LWEMACs of 16 cycles (4·8192 bytes
// over 2048 lanes) = 2,097,152 cycles at 1 GHz; 4 GiB from flash at 16 ×
// 2.4 GB/s; the 2 MiB query and the 32 KiB accumulator written once, both
// on chip (SRAM, 24,576 GB/s).
func TestLWEScanCost(t *testing.T) {
	a, err := arch.Preset("rosemary")
	if err != nil {
		t.Fatal(err)
	}
	b := ir.NewBuilder("scan", "lwepir-hint")
	b.Output("column", b.LWEScan(b.LWEQuery("query", 64), b.StoredLWEMatrix("database", 13, 64)))
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	cm := &compiler.CostModel{Arch: a, Prof: lower.NewProfiler()}
	c, err := cm.Cost(p, p.Nodes[2])
	if err != nil {
		t.Fatal(err)
	}
	want := 2097152e-9 + 4294967296/38.4e9 + (2097152+32768)/24576e9
	if math.Abs(c.SSD-want) > 1e-9*want {
		t.Errorf("SSD cost %.9g s, want %.9g s", c.SSD, want)
	}
}
