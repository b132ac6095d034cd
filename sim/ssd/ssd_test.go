package ssd

import (
	"crypto/rand"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/arch"
	"github.com/rosemary-fhe/rosemary/sim/des"
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
		want des.Time
	}{
		{16, 16, 256 * des.Nanosecond},
		{16, 17, 544 * des.Nanosecond}, // 17 x 65536/2048
		{16, 12, 12 * des.Nanosecond},  // 12 x 1
		{64, 16, 64 * des.Nanosecond},  // 16 x 32768/8192
		{4, 16, 1024 * des.Nanosecond}, // 16 x 32768/512
	} {
		a, err := arch.WithAUs(rosemary(t), tc.aus)
		if err != nil {
			t.Fatal(err)
		}
		s := des.New()
		e, err := NewEngine(s, a.Engine)
		if err != nil {
			t.Fatal(err)
		}
		var at des.Time
		op := arch.Op{Kernel: arch.NTT, N: 1 << tc.logN, Count: 1}
		if _, err := e.Run([]arch.Op{op}, func() { at = s.Now() }); err != nil {
			t.Fatal(err)
		}
		if err := s.Run(); err != nil {
			t.Fatal(err)
		}
		cycles, _ := a.Engine.Datapath().Cycles(op)
		if at != tc.want || at != des.Time(cycles)*des.Time(1e6)/des.Time(a.Engine.FreqMHz) {
			t.Errorf("%d AUs N=2^%d: NTT done at %v (cycles %d), want %v", tc.aus, tc.logN, at, cycles, tc.want)
		}
	}
}

// TestChain: a key-switching-like chain on N=2^16 limbs: iNTT of 4 limbs,
// BConv 4->6, NTT of 6 limbs, MODMAC of 10 limbs against the key:
// 4x256 + 24x32 + 6x256 + 10x32 = 1024 + 768 + 1536 + 320 = 3648 cycles.
// A second chain queued behind it (FIFO) ends at 3648 + 32 ns.
func TestChain(t *testing.T) {
	s := des.New()
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
	var ends []des.Time
	e.Run(chain, func() { ends = append(ends, s.Now()) })
	e.Run([]arch.Op{{Kernel: arch.ModAdd, N: n, Count: 1}}, func() { ends = append(ends, s.Now()) })
	s.Run()
	if ends[0] != 3648*des.Nanosecond || ends[1] != 3680*des.Nanosecond {
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

func TestHierarchyPlacement(t *testing.T) {
	s := des.New()
	h, err := NewHierarchy(s, rosemary(t))
	if err != nil {
		t.Fatal(err)
	}
	mb := int64(1 << 20)
	// 32 MB SRAM, 64 MB eDRAM, 4 GB LPDDR: 20 MB -> SRAM, 20 MB -> eDRAM
	// (12 MB SRAM left), 12 MB -> SRAM, 50 MB -> LPDDR (44 MB eDRAM left).
	for i, tc := range []struct {
		n    int64
		want Tier
	}{{20 * mb, TierSRAM}, {20 * mb, TierEDRAM}, {12 * mb, TierSRAM}, {50 * mb, TierDRAM}, {44 * mb, TierEDRAM}} {
		got, err := h.PlaceIntermediate(tc.n)
		if err != nil || got != tc.want {
			t.Fatalf("step %d: %v %v, want %v", i, got, err, tc.want)
		}
	}
	if _, err := h.PlaceIntermediate(5 << 30); err == nil || !strings.Contains(err.Error(), "fits in no") {
		t.Errorf("oversize intermediate: %v", err)
	}
	// Keys: eDRAM is full, so LPDDR; a key larger than LPDDR's free space
	// stays in NAND.
	if tier, _ := h.PlaceKey(10 * mb); tier != TierDRAM {
		t.Errorf("key -> %v", tier)
	}
	if tier, _ := h.PlaceKey(5 << 30); tier != TierNAND {
		t.Errorf("huge key -> %v", tier)
	}
	if err := h.EDRAM.Release(64 * mb); err != nil {
		t.Fatal(err)
	}
	if tier, _ := h.PlaceKey(30 * mb); tier != TierEDRAM {
		t.Errorf("key after release -> %v", tier)
	}
	if err := h.SRAM.Release(33 * mb); err == nil {
		t.Error("over-release accepted")
	}
	if h.EDRAM.Peak() != 64*mb {
		t.Errorf("eDRAM peak %d", h.EDRAM.Peak())
	}
	if StoredKSKBytes(100) != 50 || StoredKSKBytes(101) != 51 || StoredKSKBytes(0) != 0 {
		t.Error("StoredKSKBytes")
	}
	// No-eDRAM design: intermediates go SRAM -> LPDDR, keys to LPDDR.
	a0, _ := arch.WithEDRAM(rosemary(t), 0)
	h0, err := NewHierarchy(s, a0)
	if err != nil {
		t.Fatal(err)
	}
	h0.PlaceIntermediate(32 * mb)
	if tier, _ := h0.PlaceIntermediate(mb); tier != TierDRAM {
		t.Errorf("no eDRAM: spill to %v", tier)
	}
}

// TestMemoryBandwidth: hand-computed access times. LPDDR5 51.2 GB/s: one
// 256 KiB limb = 262144 / 51.2e9 s = 5.12 us. eDRAM, 8 banks x 1024 GB/s,
// 8 KiB interleave: the limb spreads 32 KiB per bank = 32 ns.
func TestMemoryBandwidth(t *testing.T) {
	s := des.New()
	h, err := NewHierarchy(s, rosemary(t))
	if err != nil {
		t.Fatal(err)
	}
	if end := h.DRAM.Access(0, 262144, nil); end != 5120*des.Nanosecond {
		t.Errorf("LPDDR limb: %v", end)
	}
	if end := h.EDRAM.Access(0, 262144, nil); end != 32*des.Nanosecond {
		t.Errorf("eDRAM limb: %v", end)
	}
	// SRAM 24576 GB/s: 262144 B -> 10.666.. ns -> 10667 ps.
	if end := h.SRAM.Access(0, 262144, nil); end != 10667 {
		t.Errorf("SRAM limb: %d ps", end)
	}
}

// TestMoreEDRAMNeverSlower: fetching a working set of keys placed by the
// hierarchy (eDRAM first, then LPDDR) never gets slower as the scratchpad
// grows from 0 to 128 MB.
func TestMoreEDRAMNeverSlower(t *testing.T) {
	prev := des.Never
	for mb := int64(0); mb <= 128; mb += 8 {
		a, err := arch.WithEDRAM(rosemary(t), mb<<20)
		if err != nil {
			t.Fatal(err)
		}
		s := des.New()
		h, err := NewHierarchy(s, a)
		if err != nil {
			t.Fatal(err)
		}
		var end des.Time
		for k := 0; k < 12; k++ {
			size := StoredKSKBytes(24 << 20) // 12 MB stored per 24 MB key
			tier, err := h.PlaceKey(size)
			if err != nil {
				t.Fatal(err)
			}
			if e := h.Memory(tier).Access(int64(k)*size, size, nil); e > end {
				end = e
			}
		}
		if end > prev {
			t.Errorf("%d MB eDRAM: keys fetched by %v, slower than %v with less", mb, end, prev)
		}
		prev = end
	}
}

// TestDeviceUtilizationEnergy: an engine busy 1 us out of 2 us, nothing
// else: engine utilization 0.5 and energy = engine-kind power (NTTU 4.8 +
// MODU 2.7 + OT&KeyGen 0.063 + Interconnect 3.9 W = 11.463 W) x 1 us.
func TestDeviceUtilizationEnergy(t *testing.T) {
	s := des.New()
	d, err := NewDevice(s, rosemary(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	// 1000 cycles = NTT 2^16 x 3 (768) + ModMul 2^16 x 7 (224) + ModAdd 2^14 x 1 (8).
	d.Engine.Run([]arch.Op{{Kernel: arch.NTT, N: 1 << 16, Count: 3}, {Kernel: arch.ModMul, N: 1 << 16, Count: 7},
		{Kernel: arch.ModAdd, N: 1 << 14, Count: 1}}, nil)
	s.RunUntil(2 * des.Microsecond)
	u := d.Utilization(2 * des.Microsecond)
	if u.Engine != 0.5 || u.NAND != 0 || u.DRAM != 0 {
		t.Errorf("utilization %+v", u)
	}
	if e := d.EnergyJ(2 * des.Microsecond); math.Abs(e-11.463e-6) > 1e-12 {
		t.Errorf("energy %g J", e)
	}
	// NAND: one page read keeps one of 16 channels busy for cmd + transfer.
	d.NAND.Read(0, nil)
	s.Run()
	end := s.Now()
	u = d.Utilization(end)
	want := (290*des.Nanosecond + 13653334).Seconds() / end.Seconds() / 16
	if math.Abs(u.NAND-want) > 1e-12 {
		t.Errorf("nand utilization %g want %g", u.NAND, want)
	}
}

// TestStreamIsNANDBound composes the device: 16 x 256 pages of a PIR-like
// database stream from NAND, each page (32 KiB = 2^13 32-bit coefficients)
// multiplied-accumulated by the engine as it arrives. The engine needs
// 2^13/2048 = 4 ns per page against ~0.85 us of flash time per page, so the
// run ends within 1% of the flash-only time and the engine is almost idle:
// the NAND-bound behaviour Figure 13 reports for PIR.
func TestStreamIsNANDBound(t *testing.T) {
	a := rosemary(t)
	const pages = 16 * 256
	s := des.New()
	d, err := NewDevice(s, a, nil)
	if err != nil {
		t.Fatal(err)
	}
	chain := []arch.Op{{Kernel: arch.ModMAC, N: 1 << 13, Count: 1}}
	for p := int64(0); p < pages; p++ {
		if err := d.NAND.Read(p, func(int64) {
			d.Mem.EDRAM.Access(0, 32768, nil)
			if _, err := d.Engine.Run(chain, nil); err != nil {
				t.Error(err)
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	end := s.Now()
	flash, err := readOnly(t, a, pages)
	if err != nil {
		t.Fatal(err)
	}
	if float64(end-flash)/float64(flash) > 0.01 || end < flash {
		t.Errorf("stream took %v, flash alone %v", end, flash)
	}
	u := d.Utilization(end)
	if u.NAND < 0.95 || u.Engine > 0.01 || d.Engine.Stats().Cycles != 4*pages {
		t.Errorf("utilization %+v, engine cycles %d", u, d.Engine.Stats().Cycles)
	}
	t.Logf("%d pages in %v: NAND %.3f, engine %.5f, eDRAM %.5f", pages, end, u.NAND, u.Engine, u.EDRAM)
}

func readOnly(t *testing.T, a *arch.Arch, pages int64) (des.Time, error) {
	t.Helper()
	s := des.New()
	d, err := NewDevice(s, a, nil)
	if err != nil {
		t.Fatal(err)
	}
	for p := int64(0); p < pages; p++ {
		d.NAND.Read(p, nil)
	}
	err = s.Run()
	return s.Now(), err
}

// TestFetch: hand-computed fetches. LPDDR -> eDRAM of a 256 KiB limb: LPDDR
// (5.12 us) is slower than eDRAM (32 ns), so 5.12 us. One NAND page into
// eDRAM: cmd_1 290 ns + tR 75 us + 13653.334 ns out + 32 KiB over 4 banks of
// 1024 GB/s (8 KiB each = 8 ns).
func TestFetch(t *testing.T) {
	s := des.New()
	d, err := NewDevice(s, rosemary(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var at []des.Time
	rec := func() { at = append(at, s.Now()) }
	if err := d.Fetch(TierDRAM, TierEDRAM, 0, 262144, rec); err != nil {
		t.Fatal(err)
	}
	s.Run()
	if err := d.Fetch(TierNAND, TierEDRAM, 0, 32768, rec); err != nil {
		t.Fatal(err)
	}
	start := s.Now()
	s.Run()
	want1 := start + 290*des.Nanosecond + 75*des.Microsecond + 13653334 + 8*des.Nanosecond
	if len(at) != 2 || at[0] != 5120*des.Nanosecond || at[1] != want1 {
		t.Errorf("fetches done at %v, want [5.12us %v]", at, want1)
	}
	// 3 pages spanning bytes [1000, 1000+65536): pages 0..2.
	before := d.NAND.Stats().PagesRead
	done := false
	d.Fetch(TierNAND, TierSRAM, 1000, 65536, func() { done = true })
	s.Run()
	if !done || d.NAND.Stats().PagesRead-before != 3 {
		t.Errorf("done %v, pages %d", done, d.NAND.Stats().PagesRead-before)
	}
	if err := d.Fetch(TierDRAM, TierNAND, 0, 1, nil); err == nil {
		t.Error("fetch into NAND accepted")
	}
	a0, _ := arch.WithEDRAM(rosemary(t), 0)
	d0, _ := NewDevice(des.New(), a0, nil)
	if err := d0.Fetch(TierDRAM, TierEDRAM, 0, 1, nil); err == nil {
		t.Error("fetch into a missing eDRAM accepted")
	}
}
