package arch

import (
	"testing"
)

func TestKernelNames(t *testing.T) {
	for _, k := range Kernels() {
		p, err := ParseKernel(k.String())
		if err != nil || p != k {
			t.Errorf("round trip %v: %v %v", k, p, err)
		}
	}
	if Kernel(0).Valid() || Kernel(12).Valid() || !LWEMAC.Valid() || LWEMAC.Unit() != UnitEW {
		t.Error("out-of-range kernels valid")
	}
	if _, err := ParseKernel("FFT"); err == nil {
		t.Error("unknown kernel parsed")
	}
	if NTT.Unit() != UnitNTT || BConv.Unit() != UnitBConv || ModMAC.Unit() != UnitEW || Automorph.Unit() != UnitAuto || Load.Unit() != UnitNone {
		t.Error("unit classes")
	}
}

// Hand-computed cycle counts for the Rosemary engine (2048 lanes, GC-NTT)
// and the SHARP-class host (1024 lanes, pipelined NTT).
func TestCyclesHandComputed(t *testing.T) {
	a := mustPreset(t, "rosemary")
	eng, host := a.Engine.Datapath(), a.Host.Datapath()
	for _, tc := range []struct {
		d    Datapath
		op   Op
		want int64
	}{
		// N=2^16: 16 stages x (32768 butterflies / 2048 lanes = 16) = 256.
		{eng, Op{NTT, 1 << 16, 1}, 256},
		{eng, Op{INTT, 1 << 16, 3}, 768},
		// N=2^12: 12 stages x ceil(2048/2048) = 12.
		{eng, Op{NTT, 1 << 12, 1}, 12},
		// N=2^10: each stage has only 512 butterflies for 2048 lanes: 1 cycle
		// per stage, 10 stages (stage barrier of GC-NTT).
		{eng, Op{NTT, 1 << 10, 1}, 10},
		// N=2^17: 17 x 65536/2048 = 17 x 32 = 544.
		{eng, Op{NTT, 1 << 17, 1}, 544},
		// element-wise: 2^16/2048 = 32 per limb.
		{eng, Op{ModMul, 1 << 16, 1}, 32},
		{eng, Op{ModAdd, 1 << 16, 10}, 320},
		{eng, Op{ModSub, 1 << 12, 5}, 10},
		{eng, Op{ModMAC, 1 << 13, 2}, 8},
		{eng, Op{Automorph, 1 << 16, 2}, 64},
		// BConv from 3 to 5 limbs: 15 limb-pairs x 32 = 480.
		{eng, Op{BConv, 1 << 16, BConvCount(3, 5)}, 480},
		{eng, Op{Load, 1 << 16, 7}, 0},
		{eng, Op{Store, 1 << 16, 7}, 0},
		// LWEMAC at N=2^13: 4 x 8192 bytes over 2048 lanes, one byte per
		// lane per cycle = 16 cycles; 3 limbs = 48.
		{eng, Op{LWEMAC, 1 << 13, 3}, 48},
		// two bytes per lane per cycle halve it.
		{Datapath{Name: "eng2", Lanes: 2048, FreqMHz: 1000, WordBits: 32, LWEBytesPerLane: 2}, Op{LWEMAC, 1 << 13, 1}, 8},
		// SHARP's element-wise unit: 4 x 2^13 / 2048 = 16.
		{host, Op{LWEMAC, 1 << 13, 1}, 16},
		// host, pipelined NTT: 2^16 / 1024 = 64 per limb; SHARP's
		// element-wise unit takes 2048 words a cycle (2^16 / 2048 = 32) and
		// its BConv unit 16384 (15 limb-pairs x 2^16 / 16384 = 60).
		{host, Op{NTT, 1 << 16, 2}, 128},
		{host, Op{ModMul, 1 << 16, 1}, 32},
		{host, Op{BConv, 1 << 16, BConvCount(3, 5)}, 60},
		// tiny N on many lanes still costs one cycle.
		{host, Op{ModAdd, 1 << 8, 1}, 1},
		{eng, Op{NTT, 1 << 16, 0}, 0},
	} {
		got, err := tc.d.Cycles(tc.op)
		if err != nil {
			t.Fatalf("%s %v: %v", tc.d.Name, tc.op, err)
		}
		if got != tc.want {
			t.Errorf("%s %v N=%d x%d: %d cycles, want %d", tc.d.Name, tc.op.Kernel, tc.op.N, tc.op.Count, got, tc.want)
		}
	}
}

func TestCyclesErrors(t *testing.T) {
	d := Datapath{Name: "d", Lanes: 8, FreqMHz: 1000, WordBits: 32}
	for _, op := range []Op{{NTT, 1000, 1}, {NTT, 0, 1}, {ModAdd, -4, 1}, {Kernel(0), 16, 1}, {Kernel(99), 16, 1}, {ModAdd, 16, -1}} {
		if _, err := d.Cycles(op); err == nil {
			t.Errorf("Cycles(%+v) accepted", op)
		}
	}
	if _, err := (Datapath{Lanes: 0, FreqMHz: 1, WordBits: 32}).Cycles(Op{NTT, 16, 1}); err == nil {
		t.Error("zero lanes accepted")
	}
}

func TestBytesAndTime(t *testing.T) {
	a := mustPreset(t, "rosemary")
	eng, host := a.Engine.Datapath(), a.Host.Datapath()
	if b, _ := eng.BytesPerLimb(1 << 16); b != 262144 { // 2^16 x 4 B = 256 KiB (the paper's "256 KB" polynomial limb)
		t.Errorf("engine limb %d bytes", b)
	}
	if b, _ := host.BytesPerLimb(1 << 16); b != 294912 { // 2^16 x 36 / 8
		t.Errorf("host limb %d bytes", b)
	}
	if b, _ := eng.Bytes(Op{Load, 1 << 12, 3}); b != 3*16384 {
		t.Errorf("load bytes %d", b)
	}
	if ps := eng.Picoseconds(256); ps != 256000 {
		t.Errorf("256 cycles at 1 GHz = %d ps", ps)
	}
	odd := Datapath{Lanes: 1, FreqMHz: 3, WordBits: 32}
	if ps := odd.Picoseconds(1); ps != 333334 { // 1/3 us rounded up
		t.Errorf("1 cycle at 3 MHz = %d ps", ps)
	}
	if s := eng.Seconds(1000); s != 1e-6 {
		t.Errorf("seconds %g", s)
	}
}

// TestUnitThroughputs: where a host accelerator's BConv and element-wise
// units are wider than its lanes (SHARP: 16384 and 2048 words/ns beside a
// 1024-word NTT), their kernels take proportionally fewer cycles; the
// others keep one word per lane.
func TestUnitThroughputs(t *testing.T) {
	d := Datapath{Name: "sharp", Lanes: 1024, FreqMHz: 1000, WordBits: 36, NTTPipelined: true, BConvLanes: 16384, EWLanes: 2048}
	const n = 1 << 16
	for k, want := range map[Kernel]int64{NTT: 64, INTT: 64, BConv: 4, ModMul: 32, ModMAC: 32, ModAdd: 32, Automorph: 64} {
		got, err := d.LimbCycles(k, n)
		if err != nil || got != want {
			t.Errorf("%v: %d cycles (%v), want %d", k, got, err, want)
		}
	}
	d.BConvLanes, d.EWLanes = 0, 0
	for _, k := range []Kernel{BConv, ModMul} {
		if got, _ := d.LimbCycles(k, n); got != 64 {
			t.Errorf("%v without a unit width: %d cycles, want 64", k, got)
		}
	}
}
