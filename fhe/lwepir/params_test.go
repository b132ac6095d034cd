package lwepir

import (
	"errors"
	"fmt"
	"math/big"
	"testing"
)

func TestHintModulusIsNTTFriendlyPrime(t *testing.T) {
	for _, p := range []Params{Default(), Test()} {
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		if !new(big.Int).SetUint64(p.HintT).ProbablyPrime(40) {
			t.Fatalf("t = %d is not prime", p.HintT)
		}
		// |H·s| ≤ 2^31·N, centred: t must exceed twice that.
		if p.HintT <= uint64(1)<<(32+p.LogN) {
			t.Fatalf("t = %d too small for N = %d", p.HintT, p.N())
		}
		if _, err := p.hintParams(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDefaultSecurity checks the default parameters against the figures the
// papers and the HE standard quote for 128-bit security: YPIR's first layer
// (N = 2048, q = 2^32, width 16.04) and the standard's bounds on log q.
func TestDefaultSecurity(t *testing.T) {
	p := Default()
	if p.Insecure {
		t.Fatal("default marked insecure")
	}
	if p.N() != 2048 {
		t.Fatalf("LWE dimension %d, YPIR's is 2048", p.N())
	}
	// σ = sqrt(η/2); YPIR's Gaussian width 16.042421 = σ·sqrt(2π).
	sigma2 := float64(p.Eta) / 2
	if w := sigma2 * 2 * 3.141592653589793; w < 16.04*16.04*0.99 {
		t.Fatalf("error width² %.1f below YPIR's 16.04²", w)
	}
	// HE standard (2018), 128-bit classical, ternary secret: N=2048 → log q ≤ 54;
	// N=8192 → log QP ≤ 218.
	if heStandardLogQ[p.LogN] < 32 {
		t.Fatalf("q = 2^32 exceeds the standard's log q ≤ %d at N = %d", heStandardLogQ[p.LogN], p.N())
	}
	logQP := 0
	for _, b := range append(append([]int{}, p.HintLogQ...), p.HintLogP...) {
		logQP += b
	}
	if p.HintLogN != 13 || logQP > 218 {
		t.Fatalf("ring stage N=2^%d log QP %d exceeds the standard's 218 at 8192", p.HintLogN, logQP)
	}
	bp, err := p.hintParams()
	if err != nil {
		t.Fatal(err)
	}
	if got := bp.LogQP(); got > 218 {
		t.Fatalf("log QP %.1f > 218", got)
	}
}

// heStandardLogQ is the HE standard's (Albrecht et al., 2018) largest log q at
// 128-bit classical security for a ternary secret, by log N.
var heStandardLogQ = map[int]int{10: 27, 11: 54, 12: 109, 13: 218, 14: 438, 15: 881}

func TestShape(t *testing.T) {
	p := Default()
	cases := []struct {
		records, size int
		rows, colsMin int
	}{
		{1 << 24, 256, 8192, 1 << 19}, // 4 GiB
		{1000, 32, 32, 2048},
		{1 << 20, 1024, 2048, 1 << 19}, // 1 GiB
		{262144, 92, 128, 196608},      // 24 MiB
	}
	for _, c := range cases {
		s, err := NewShape(p, c.records, c.size)
		if err != nil {
			t.Fatal(err)
		}
		if s.Rows != c.rows || s.Cols < c.colsMin || s.Cols%p.N() != 0 || s.Records() < c.records {
			t.Fatalf("%d×%dB: shape %+v", c.records, c.size, s)
		}
		if err := s.Validate(p); err != nil {
			t.Fatal(err)
		}
		col, row := s.Locate(c.records - 1)
		if col >= s.Cols || row+c.size > s.Rows {
			t.Fatalf("last record at column %d row %d outside %+v", col, row, s)
		}
	}
	if _, err := NewShape(p, 1<<30, 4096); err == nil {
		t.Fatal("4 TiB accepted")
	}
	if _, err := NewShape(p, 10, 1<<20); err == nil {
		t.Fatal("1 MiB record accepted")
	}
}

// TestLayout checks the evaluation layout against hand-computed cases: a
// 4 GiB database (one output, N diagonals, two keys) and a small one (few
// diagonals, a rotate-and-sum).
func TestLayout(t *testing.T) {
	p := Default()
	big := Shape{Rows: 8192, Cols: 1 << 19, RecordSize: 256}.Layout(p)
	if big != (Layout{N: 2048, Slots: 8192, Groups: 4, R: 2048, Outputs: 1, B1: 64, B2: 32}) {
		t.Fatalf("4 GiB layout %+v", big)
	}
	if r := big.Rotations(); fmt.Sprint(r) != "[1 64]" {
		t.Fatalf("4 GiB rotations %v", r)
	}
	small := Shape{Rows: 256, Cols: 2048, RecordSize: 32}.Layout(p)
	if small != (Layout{N: 2048, Slots: 8192, Groups: 4, R: 64, Outputs: 1, B1: 8, B2: 8}) || small.Diagonals() != 64 {
		t.Fatalf("small layout %+v", small)
	}
	if r := small.Rotations(); fmt.Sprint(r) != "[1 8 64 128 256 512 1024]" {
		t.Fatalf("small rotations %v", r)
	}
	// The fewest rows: one diagonal (R = 1) or two (R = 2, no giant
	// step); the rotate-and-sum needs every power of two, each key once.
	one := Shape{Rows: 4, Cols: 2048, RecordSize: 1}.Layout(p)
	two := Shape{Rows: 8, Cols: 2048, RecordSize: 8}.Layout(p)
	if one != (Layout{N: 2048, Slots: 8192, Groups: 4, R: 1, Outputs: 1, B1: 1, B2: 1}) || two.R != 2 || two.B1 != 2 || two.B2 != 1 {
		t.Fatalf("layouts of 4 and 8 rows %+v, %+v", one, two)
	}
	for _, l := range []Layout{one, two} {
		if r := l.Rotations(); fmt.Sprint(r) != "[1 2 4 8 16 32 64 128 256 512 1024]" {
			t.Fatalf("R = %d rotations %v", l.R, r)
		}
	}
	// Every row has exactly one result slot, and slotRow inverts it.
	for _, l := range []Layout{big, small, one, two} {
		seen := map[[2]int]bool{}
		for i := 0; i < l.Outputs*l.Groups*l.R; i++ {
			o, v := l.resultSlot(i)
			if seen[[2]int{o, v}] || l.slotRow(o, v) != i {
				t.Fatalf("%+v: row %d at (%d, %d), slotRow %d", l, i, o, v, l.slotRow(o, v))
			}
			seen[[2]int{o, v}] = true
		}
	}
}

// A lower column target makes the 1 GiB layout taller: 2^17 columns of
// 8192 rows, a quarter of the query; targets outside 2^LogN … 2^20 are
// refused.
func TestShapeCols(t *testing.T) {
	p := Default()
	for _, c := range []struct{ logCols, rows, cols int }{{19, 2048, 1 << 19}, {18, 4096, 1 << 18}, {17, 8192, 1 << 17}} {
		s, err := NewShapeCols(p, 1<<22, 256, c.logCols)
		if err != nil {
			t.Fatal(err)
		}
		if s.Rows != c.rows || s.Cols != c.cols || s.Records() != 1<<22 {
			t.Fatalf("2^%d columns: %+v, want %d × %d", c.logCols, s, c.rows, c.cols)
		}
	}
	for _, logCols := range []int{10, 21} {
		if _, err := NewShapeCols(p, 1<<22, 256, logCols); !errors.Is(err, ErrParams) {
			t.Errorf("a target of 2^%d columns: %v", logCols, err)
		}
	}
	// 8 GiB: 8192 rows of 2^20 columns under the hint's slots, 16,384 of
	// 2^19 for a packed-only generation; bounds outside 8192 … 16384 refused.
	for _, c := range []struct{ maxRows, rows, cols int }{{8192, 8192, 1 << 20}, {16384, 16384, 1 << 19}} {
		s, err := NewShapeRows(p, 1<<25, 256, TargetLogCols, c.maxRows)
		if err != nil || s.Rows != c.rows || s.Cols != c.cols || s.Validate(p) != nil {
			t.Fatalf("8 GiB, at most %d rows: %+v, %v; want %d × %d", c.maxRows, s, err, c.rows, c.cols)
		}
	}
	for _, maxRows := range []int{4096, 12288, 32768} {
		if _, err := NewShapeRows(p, 1<<25, 256, TargetLogCols, maxRows); !errors.Is(err, ErrParams) {
			t.Errorf("at most %d rows: %v", maxRows, err)
		}
	}
}
