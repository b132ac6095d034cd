package ssd

import (
	"crypto/rand"
	"encoding/binary"
	"math"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/sim/eventsim"
)

func rosemary(t testing.TB) *arch.Arch {
	t.Helper()
	a, err := arch.Preset("rosemary")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestNTTLatency: one NTT's latency equals its computed cycle count divided
// by the clock: N = 2^16 on 2048 lanes = 16 stages x 16 = 256 cycles at
// 1 GHz = 256 ns.
func TestNTTLatency(t *testing.T) {
	for _, tc := range []struct {
		aus  int
		logN int
		want eventsim.Time
	}{
		{16, 16, 256 * eventsim.Nanosecond},
		{16, 17, 544 * eventsim.Nanosecond},
		{16, 12, 12 * eventsim.Nanosecond},
		{64, 16, 64 * eventsim.Nanosecond},
		{4, 16, 1024 * eventsim.Nanosecond},
	} {
		a, err := arch.WithAUs(rosemary(t), tc.aus)
		if err != nil {
			t.Fatal(err)
		}
		s := eventsim.New()
		e, err := NewEngine(s, a.Engine)
		if err != nil {
			t.Fatal(err)
		}
		var at eventsim.Time
		op := arch.Op{Kernel: arch.NTT, N: 1 << tc.logN, Count: 1}
		if _, err := e.Run([]arch.Op{op}, func() { at = s.Now() }); err != nil {
			t.Fatal(err)
		}
		if err := s.Run(); err != nil {
			t.Fatal(err)
		}
		cycles, _ := a.Engine.Datapath().Cycles(op)
		if at != tc.want || at != eventsim.Time(cycles)*eventsim.Time(1e6)/eventsim.Time(a.Engine.FreqMHz) {
			t.Errorf("%d AUs N=2^%d: NTT done at %v (cycles %d), want %v", tc.aus, tc.logN, at, cycles, tc.want)
		}
	}
}

// TestChain: a key-switching-like chain on N=2^16 limbs: iNTT of 4 limbs,
// BConv 4->6, NTT of 6 limbs, MODMAC of 10 limbs against the key:
// 4x256 + 24x32 + 6x256 + 10x32 = 1024 + 768 + 1536 + 320 = 3648 cycles.
// A second chain queued behind it (FIFO) ends at 3648 + 32 ns.
func TestChain(t *testing.T) {
	s := eventsim.New()
	e, err := NewEngine(s, rosemary(t).Engine)
	if err != nil {
		t.Fatal(err)
	}
	n := 1 << 16
	chain := []arch.Op{
		{Kernel: arch.INTT, N: n, Count: 4},
		{Kernel: arch.BConv, N: n, Count: arch.BConvCount(4, 6)},
		{Kernel: arch.NTT, N: n, Count: 6},
		{Kernel: arch.Load, N: n, Count: 10},
		{Kernel: arch.ModMAC, N: n, Count: 10},
	}
	if c, _ := ChainCycles(e.Datapath(), chain); c != 3648 {
		t.Fatalf("chain cycles %d", c)
	}
	var ends []eventsim.Time
	e.Run(chain, func() { ends = append(ends, s.Now()) })
	e.Run([]arch.Op{{Kernel: arch.ModAdd, N: n, Count: 1}}, func() { ends = append(ends, s.Now()) })
	s.Run()
	if ends[0] != 3648*eventsim.Nanosecond || ends[1] != 3680*eventsim.Nanosecond {
		t.Errorf("ends %v", ends)
	}
	st := e.Stats()
	if st.Cycles != 3680 || st.PerKernel[arch.NTT] != 1536 || st.PerKernel[arch.BConv] != 768 || st.Chains != 2 {
		t.Errorf("stats %+v", st)
	}
	if _, err := e.Run([]arch.Op{{Kernel: arch.NTT, N: 1000, Count: 1}}, nil); err == nil {
		t.Error("bad N accepted")
	}
}

// TestMoreAUsNeverSlower: property over random kernel chains: the chain's
// engine time never grows with the AU count (4..64).
func TestMoreAUsNeverSlower(t *testing.T) {
	base := rosemary(t)
	buf := make([]byte, 8*200)
	if _, err := rand.Read(buf); err != nil {
		t.Fatal(err)
	}
	ks := arch.Kernels()
	var chain []arch.Op
	for i := 0; i < 200; i++ {
		x := binary.LittleEndian.Uint64(buf[8*i:])
		chain = append(chain, arch.Op{Kernel: ks[x%uint64(len(ks))], N: 1 << (10 + x>>8%8), Count: int(x>>16%40) + 1})
	}
	prev := int64(math.MaxInt64)
	for n := arch.MinAUs; n <= arch.MaxAUs; n++ {
		a, err := arch.WithAUs(base, n)
		if err != nil {
			t.Fatal(err)
		}
		dp := a.Engine.Datapath()
		c, err := ChainCycles(dp, chain)
		if err != nil {
			t.Fatal(err)
		}
		ps := dp.Picoseconds(c)
		if ps > prev {
			t.Errorf("%d AUs: %d ps > %d ps with fewer AUs", n, ps, prev)
		}
		prev = ps
	}
}

// TestDeviceMemories: hand-computed transfer times on the rosemary preset.
// LPDDR5 51.2 GB/s: one 256 KiB limb = 262144 / 51.2e9 s = 5.12 us. eDRAM,
// 8 banks x 1024 GB/s as one server: 32 ns. SRAM 24576 GB/s: 10.666.. ns ->
// 10667 ps. Without eDRAM the device has none.
func TestDeviceMemories(t *testing.T) {
	s := eventsim.New()
	d, err := NewDevice(s, rosemary(t))
	if err != nil {
		t.Fatal(err)
	}
	if end := d.DRAM.Transfer(262144, nil); end != 5120*eventsim.Nanosecond {
		t.Errorf("LPDDR limb: %v", end)
	}
	if end := d.EDRAM.Transfer(262144, nil); end != 32*eventsim.Nanosecond {
		t.Errorf("eDRAM limb: %v", end)
	}
	if end := d.SRAM.Transfer(262144, nil); end != 10667 {
		t.Errorf("SRAM limb: %d ps", end)
	}
	a0, err := arch.WithEDRAM(rosemary(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	d0, err := NewDevice(eventsim.New(), a0)
	if err != nil {
		t.Fatal(err)
	}
	if d0.EDRAM != nil || d0.EDRAMBusy() != 0 {
		t.Errorf("a design without eDRAM has an eDRAM server")
	}
	if StoredKSKBytes(100) != 50 || StoredKSKBytes(101) != 51 || StoredKSKBytes(0) != 0 {
		t.Error("StoredKSKBytes")
	}
	bad := rosemary(t).Clone()
	bad.NAND.Channels = 0
	if _, err := NewDevice(eventsim.New(), bad); err == nil {
		t.Error("a device without flash channels was built")
	}
}

// TestDeviceEnergy: an engine busy 1 us of a 2 us run, nothing else: the
// energy is the engine-kind power (NTTU 4.8 + MODU 2.7 + OT&KeyGen 0.063 +
// Interconnect 3.9 W = 11.463 W) x 1 us plus every "other" component's
// power x 2 us.
func TestDeviceEnergy(t *testing.T) {
	s := eventsim.New()
	a := rosemary(t)
	d, err := NewDevice(s, a)
	if err != nil {
		t.Fatal(err)
	}
	// 1000 cycles = NTT 2^16 x 3 (768) + ModMul 2^16 x 7 (224) + ModAdd 2^14 x 1 (8).
	d.Engine.Run([]arch.Op{{Kernel: arch.NTT, N: 1 << 16, Count: 3}, {Kernel: arch.ModMul, N: 1 << 16, Count: 7},
		{Kernel: arch.ModAdd, N: 1 << 14, Count: 1}}, nil)
	s.RunUntil(2 * eventsim.Microsecond)
	other := 0.0
	for _, c := range a.Components {
		switch c.Kind {
		case arch.KindEngine, arch.KindSRAM, arch.KindEDRAM:
		default:
			other += c.PowerW
		}
	}
	want := 11.463e-6 + other*2e-6
	if e := d.EnergyJ(2 * eventsim.Microsecond); math.Abs(e-want) > 1e-12 {
		t.Errorf("energy %g J, want %g", e, want)
	}
}
