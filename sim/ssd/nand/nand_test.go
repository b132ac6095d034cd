package nand

import (
	"crypto/rand"
	"encoding/binary"
	"math"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/sim/eventsim"
)

func preset(t testing.TB, name string) arch.NAND {
	t.Helper()
	a, err := arch.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return a.NAND
}

// readAll reads pages [0, n) all queued at time 0 and returns the time the
// last page arrived and the stats.
func readAll(t testing.TB, g arch.NAND, n int64) (eventsim.Time, Stats) {
	t.Helper()
	s := eventsim.New()
	a, err := New(s, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := int64(0)
	for p := int64(0); p < n; p++ {
		if err := a.Read(p, func(int64) { got++ }); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	if got != n {
		t.Fatalf("%d of %d pages delivered", got, n)
	}
	return s.Now(), a.Stats()
}

// TestTimingMQSim: hand-computed MQSim NV-DDR2 figures for Table IV.
func TestTimingMQSim(t *testing.T) {
	tm, err := TimingOf(preset(t, "rosemary"))
	if err != nil {
		t.Fatal(err)
	}
	// ReadCommandTime[1] = t_CS + 6 t_WC + t_WB + t_RR = 20+150+100+20 = 290 ns.
	// ReadCommandTime[2] = 20 + 6*25 + 500 + 6*25 + 100 + 20 = 940 ns.
	if tm.ReadCommand[1] != 290*eventsim.Nanosecond || tm.ReadCommand[2] != 940*eventsim.Nanosecond ||
		tm.ReadCommand[4] != (20+24*25+3*500+120)*eventsim.Nanosecond {
		t.Errorf("command times %v", tm.ReadCommand)
	}
	// 32768 B over 1 B x 2400 MT/s = 13653.33 ns -> 13653334 ps.
	if tm.PageOut != 13653334 {
		t.Errorf("page out %d ps", tm.PageOut)
	}
	if tm.TR != 75*eventsim.Microsecond {
		t.Errorf("tR %v", tm.TR)
	}
}

// TestSequentialThroughputBound: many pages over every plane reach the
// analytic bound within 1%.
func TestSequentialThroughputBound(t *testing.T) {
	zero := func(g arch.NAND) arch.NAND { g.ONFI = arch.ONFI{Source: "zeroed"}; return g }
	rosemary := preset(t, "rosemary")
	type tc struct {
		name  string
		g     arch.NAND
		pages int64
		issue float64 // the issue's formula, or 0 where it does not apply
	}
	var cases []tc
	// 1. Table IV as is: channel bound (with command overhead).
	cases = append(cases, tc{"rosemary", rosemary, 16 * 16 * 64, 0})
	// 2. Table IV, zero command time: the issue's formula,
	//    min(channels x rate, planes x page/(tR+xfer)) = 16 x 2.4 GB/s.
	g := zero(rosemary)
	cases = append(cases, tc{"rosemary-nocmd", g, 16 * 16 * 64, 16 * 2.4})
	// 3. Die bound, one plane per die, zero command time: 2 dies per channel,
	//    the issue's plane term 2 planes x 32 KiB / (75 us + 13.65 us) per channel.
	g = zero(rosemary)
	g.ChipsPerChannel, g.DiesPerChip, g.PlanesPerDie = 1, 2, 1
	xfer := 32768 / 2.4e9
	cases = append(cases, tc{"die-bound-1plane", g, 16 * 2 * 200, 16 * 2 * 32768 / (75e-6 + xfer) / 1e9})
	// 4. Die bound with 2-plane commands and command overhead.
	g = rosemary
	g.ChipsPerChannel, g.DiesPerChip = 1, 1
	cases = append(cases, tc{"die-bound-2plane", g, 16 * 2 * 200, 0})
	// 5. Figure 16 small / large.
	cases = append(cases, tc{"ssd-small", preset(t, "ssd-small"), 8 * 16 * 64, 0})
	cases = append(cases, tc{"ssd-large", preset(t, "ssd-large"), 32 * 16 * 64, 0})
	for _, c := range cases {
		end, st := readAll(t, c.g, c.pages)
		got := float64(c.pages*int64(c.g.PageBytes)) / end.Seconds() / 1e9
		bound, err := PeakReadGBps(c.g)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-bound)/bound > 0.01 {
			t.Errorf("%s: %.4f GB/s, bound %.4f GB/s", c.name, got, bound)
		}
		if got > bound*1.0001 {
			t.Errorf("%s: %.4f GB/s exceeds the bound %.4f", c.name, got, bound)
		}
		if c.issue != 0 && math.Abs(bound-c.issue)/c.issue > 1e-6 {
			t.Errorf("%s: bound %.6f != issue formula %.6f", c.name, bound, c.issue)
		}
		// Every command used all planes of its die (reads were spread evenly).
		if st.PlaneSlots != int64(c.g.PlanesPerDie)*st.Commands {
			t.Errorf("%s: %d plane slots over %d commands", c.name, st.PlaneSlots, st.Commands)
		}
		t.Logf("%s: %.3f GB/s (bound %.3f), %d commands", c.name, got, bound, st.Commands)
	}
}

// TestSinglePageLatency: one page costs cmd_1 + tR + xfer exactly.
func TestSinglePageLatency(t *testing.T) {
	g := preset(t, "rosemary")
	end, st := readAll(t, g, 1)
	want := 290*eventsim.Nanosecond + 75*eventsim.Microsecond + 13653334
	if end != want {
		t.Errorf("one page: %d ps, want %d", end, want)
	}
	if st.ChannelBusy != 290*eventsim.Nanosecond+13653334 || st.BytesRead != 32768 {
		t.Errorf("stats %+v", st)
	}
	// Two pages on the two planes of one die: one 2-plane command, then
	// two transfers back to back.
	s := eventsim.New()
	a, _ := New(s, g, func(p int64) Addr { return Addr{Plane: int(p)} })
	var at []eventsim.Time
	for p := int64(0); p < 2; p++ {
		a.Read(p, func(int64) { at = append(at, s.Now()) })
	}
	s.Run()
	base := 940*eventsim.Nanosecond + 75*eventsim.Microsecond
	if at[0] != base+13653334 || at[1] != base+2*13653334 {
		t.Errorf("2-plane read: %v", at)
	}
}

func TestLayoutErrors(t *testing.T) {
	g := preset(t, "rosemary")
	s := eventsim.New()
	a, _ := New(s, g, func(p int64) Addr { return Addr{Channel: int(p)} })
	if err := a.Read(16, nil); err == nil {
		t.Error("channel out of range accepted")
	}
	if err := a.Read(-1, nil); err == nil {
		t.Error("negative page accepted")
	}
	bad := g
	bad.PlanesPerDie = 5
	if _, err := New(s, bad, nil); err == nil {
		t.Error("5 planes accepted")
	}
}

// TestRoundRobinCoversPlanes: one full sweep touches every plane once.
func TestRoundRobinCoversPlanes(t *testing.T) {
	g := preset(t, "rosemary")
	l := RoundRobin(g)
	seen := map[Addr]bool{}
	for p := int64(0); p < int64(g.Planes()); p++ {
		seen[l(p)] = true
	}
	if len(seen) != g.Planes() {
		t.Errorf("%d distinct planes of %d", len(seen), g.Planes())
	}
	// ChannelRow with a simple rule (page n -> channel n%C, row n/C)
	// matches RoundRobin.
	cr := ChannelRow(g, func(p int64) (int, int64) { return int(p % 16), p / 16 })
	for p := int64(0); p < 5000; p++ {
		if cr(p) != l(p) {
			t.Fatalf("page %d: %+v vs %+v", p, cr(p), l(p))
		}
	}
}

// TestMoreChannelsNeverSlower: a property test over random configurations:
// for a fixed read stream, going from C to C+1 and to 2C channels never
// increases the time to read it.
func TestMoreChannelsNeverSlower(t *testing.T) {
	buf := make([]byte, 8*40)
	if _, err := rand.Read(buf); err != nil {
		t.Fatal(err)
	}
	base := preset(t, "rosemary")
	for i := 0; i < 40; i++ {
		x := binary.LittleEndian.Uint64(buf[8*i:])
		g := base
		g.Channels = int(x%12) + 1
		g.ChipsPerChannel = int(x>>4%4) + 1
		g.DiesPerChip = int(x>>6%2) + 1
		g.PlanesPerDie = int(x>>7%4) + 1
		g.ChannelMTps = []int{800, 1200, 1800, 2400}[x>>9%4]
		g.ReadNS = float64(20000 + x>>11%100000)
		pages := int64(x>>28%3000) + 1
		t0, _ := readAll(t, g, pages)
		for _, c := range []int{g.Channels + 1, 2 * g.Channels} {
			h := g
			h.Channels = c
			t1, _ := readAll(t, h, pages)
			if t1 > t0 {
				t.Errorf("%+v: %d pages take %v on %d channels but %v on %d", g, pages, t0, g.Channels, t1, c)
			}
		}
	}
}
