package arch

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustPreset(t *testing.T, name string) *Arch {
	t.Helper()
	a, err := Preset(name)
	if err != nil {
		t.Fatalf("Preset(%q): %v", name, err)
	}
	return a
}

func TestPresetsListed(t *testing.T) {
	got := strings.Join(Presets(), ",")
	if got != "rosemary,ssd-large,ssd-medium,ssd-small" {
		t.Fatalf("Presets() = %s", got)
	}
}

// TestRosemaryPreset checks the Table IV / Methodology numbers.
func TestRosemaryPreset(t *testing.T) {
	a := mustPreset(t, "rosemary")
	if a.Engine.AUs() != 16 || a.Engine.Lanes() != 2048 || a.Engine.WordBits != 32 {
		t.Errorf("engine: %d AUs, %d lanes, %d bits; want 16, 2048, 32", a.Engine.AUs(), a.Engine.Lanes(), a.Engine.WordBits)
	}
	if a.SRAM.CapacityBytes != 32<<20 || a.EDRAM.CapacityBytes != 64<<20 || a.EDRAM.Banks != 8 {
		t.Errorf("on-chip memory: sram %d, edram %d in %d banks", a.SRAM.CapacityBytes, a.EDRAM.CapacityBytes, a.EDRAM.Banks)
	}
	if a.DRAM.CapacityBytes != 4<<30 || a.DRAM.GBps != 51.2 {
		t.Errorf("dram: %d B at %g GB/s", a.DRAM.CapacityBytes, a.DRAM.GBps)
	}
	n := a.NAND
	if n.Channels != 16 || n.ChipsPerChannel != 4 || n.DiesPerChip != 2 || n.PlanesPerDie != 2 || n.PageBytes != 32768 {
		t.Errorf("nand geometry %+v", n)
	}
	if n.Planes() != 256 || n.ChannelGBps() != 2.4 {
		t.Errorf("planes %d, channel %g GB/s; want 256, 2.4", n.Planes(), n.ChannelGBps())
	}
	// 256 planes x 1024 blocks x 1024 pages x 32 KiB = 8 TiB.
	if n.CapacityBytes() != 8<<40 {
		t.Errorf("nand capacity %d, want 8 TiB", n.CapacityBytes())
	}
	if a.Link.RawGBps() != 8 || a.Link.Lanes != 4 || a.Link.Gen != 4 {
		t.Errorf("link raw %g GB/s x%d gen %d; want 8 GB/s x4 gen 4", a.Link.RawGBps(), a.Link.Lanes, a.Link.Gen)
	}
	if math.Abs(a.Link.LaneGBps()-16.0*128/130/8) > 1e-12 {
		t.Errorf("lane rate %g", a.Link.LaneGBps())
	}
	if a.Host.WordBits != 36 || a.Host.FreqMHz != 1000 || a.Host.Lanes() != 1024 {
		t.Errorf("host %+v", a.Host)
	}
	// Table V: the components sum to the table's totals 45.6 mm2 / 16.7 W
	// (the table rounds, so 0.1 tolerance).
	if math.Abs(a.AreaMM2()-45.6) > 0.1 || math.Abs(a.PowerW()-16.7) > 0.1 {
		t.Errorf("area %g mm2, power %g W; Table V says 45.6, 16.7", a.AreaMM2(), a.PowerW())
	}
}

// TestFigure16Presets checks the scalability SSDs.
func TestFigure16Presets(t *testing.T) {
	for _, tc := range []struct {
		name     string
		channels int
		gbps     float64
		dram     string
	}{{"ssd-small", 8, 1.8, "LPDDR5"}, {"ssd-medium", 16, 2.4, "LPDDR5"}, {"ssd-large", 32, 2.4, "LPDDR6"}} {
		a := mustPreset(t, tc.name)
		if a.NAND.Channels != tc.channels || a.NAND.ChannelGBps() != tc.gbps || a.DRAM.Type != tc.dram {
			t.Errorf("%s: %d channels at %g GB/s, %s", tc.name, a.NAND.Channels, a.NAND.ChannelGBps(), a.DRAM.Type)
		}
		if a.Name != tc.name || a.Engine.AUs() != 16 || a.NAND.PageBytes != 32768 {
			t.Errorf("%s: base fields not inherited: %+v", tc.name, a)
		}
	}
	// Large: 76.8 GB/s aggregate, as Figure 16's text states.
	l := mustPreset(t, "ssd-large")
	if got := float64(l.NAND.Channels) * l.NAND.ChannelGBps(); math.Abs(got-76.8) > 1e-9 {
		t.Errorf("ssd-large aggregate %g GB/s, want 76.8", got)
	}
}

func TestEverySourceFilled(t *testing.T) {
	for _, name := range Presets() {
		a := mustPreset(t, name)
		for _, s := range []string{a.Host.Source, a.Engine.Source, a.SRAM.Source, a.EDRAM.Source, a.DRAM.Source, a.NAND.Source, a.NAND.ONFI.Source, a.Link.Source} {
			if len(s) < 10 {
				t.Errorf("%s: short source %q", name, s)
			}
		}
		for _, c := range a.Components {
			if c.Source == "" {
				t.Errorf("%s: component %s has no source", name, c.Name)
			}
		}
	}
}

func TestValidateErrors(t *testing.T) {
	base := mustPreset(t, "rosemary")
	for _, tc := range []struct {
		mutate func(a *Arch)
		want   string
	}{
		{func(a *Arch) { a.NAND.Channels = 0 }, "nand.channels is missing or zero"},
		{func(a *Arch) { a.NAND.Channels = -3 }, "nand.channels is negative"},
		{func(a *Arch) { a.DRAM.GBps = -1 }, "dram.gbps is negative"},
		{func(a *Arch) { a.Engine.LanesPerAU = 0 }, "engine.lanes_per_au is missing"},
		{func(a *Arch) { a.EDRAM.CapacityBytes = -1 }, "edram.capacity_bytes is negative"},
		{func(a *Arch) { a.EDRAM.Banks = 0 }, "edram.banks is missing"},
		{func(a *Arch) { a.Link.EncodingNum = 140 }, "exceeds 1"},
		{func(a *Arch) { a.Components = nil }, "components (Table V) are missing"},
		{func(a *Arch) { a.Components[0].Kind = "gpu" }, "is not engine|sram|edram|other"},
		{func(a *Arch) { a.NAND.ReadNS = math.NaN() }, "nand.read_ns is NaN"},
		{func(a *Arch) { a.NAND.PlanesPerDie = 8 }, "exceeds the 4 planes"},
		{func(a *Arch) { a.Engine.LWEBytesPerLane = -1 }, "engine.lwe_bytes_per_lane_cycle -1 outside [0, 64]"},
		{func(a *Arch) { a.Host.LWEBytesPerLane = 65 }, "host.lwe_bytes_per_lane_cycle 65 outside [0, 64]"},
	} {
		a := base.Clone()
		tc.mutate(a)
		err := a.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want error containing %q, got %v", tc.want, err)
		}
	}
	// No-eDRAM designs are valid.
	a := base.Clone()
	a.EDRAM.CapacityBytes, a.EDRAM.Banks = 0, 0
	if err := a.Validate(); err != nil {
		t.Errorf("zero eDRAM rejected: %v", err)
	}
}

func TestParse(t *testing.T) {
	if _, err := Parse([]byte(`{"name":"x"}`)); err == nil || !strings.Contains(err.Error(), "host.name is missing") {
		t.Errorf("empty arch: %v", err)
	}
	if _, err := Parse([]byte(`{"base":"rosemary","name":"x","nand":{"chanels":4}}`)); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Errorf("misspelt field: %v", err)
	}
	if _, err := Parse([]byte(`{"base":"nope","name":"x"}`)); err == nil || !strings.Contains(err.Error(), "unknown preset") {
		t.Errorf("unknown base: %v", err)
	}
	if _, err := Parse([]byte(`{"base":"../x","name":"x"}`)); err == nil {
		t.Error("path-like base accepted")
	}
	if _, err := Parse([]byte(`{"base":"rosemary","name":"x"} {}`)); err == nil {
		t.Error("trailing data accepted")
	}
	a, err := Parse([]byte(`{"base":"rosemary","name":"x","nand":{"channels":4}}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.NAND.Channels != 4 || a.NAND.ChipsPerChannel != 4 || a.NAND.ChannelMTps != 2400 {
		t.Errorf("overlay: %+v", a.NAND)
	}
	// Marshal -> Parse round trip.
	r := mustPreset(t, "ssd-large")
	b, err := Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(r2)
	b1, _ := json.Marshal(r)
	if string(b1) != string(b2) {
		t.Error("round trip changed the description")
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.json")
	if err := os.WriteFile(p, []byte(`{"base":"ssd-small","name":"mine"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "mine" || a.NAND.Channels != 8 {
		t.Errorf("loaded %s with %d channels", a.Name, a.NAND.Channels)
	}
	if _, err := Open(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file accepted")
	}
	if b, err := Open("rosemary"); err != nil || b.Name != "rosemary" {
		t.Errorf("Open(rosemary) = %v, %v", b, err)
	}
}

func TestWithAUs(t *testing.T) {
	base := mustPreset(t, "rosemary")
	for _, tc := range []struct{ n, rows, cols int }{{4, 2, 2}, {8, 2, 4}, {16, 4, 4}, {32, 4, 8}, {64, 8, 8}, {12, 3, 4}} {
		a, err := WithAUs(base, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		if a.Engine.AURows != tc.rows || a.Engine.AUCols != tc.cols {
			t.Errorf("%d AUs -> %dx%d, want %dx%d", tc.n, a.Engine.AURows, a.Engine.AUCols, tc.rows, tc.cols)
		}
		f := float64(tc.n) / 16
		if math.Abs(a.Components[0].PowerW-4.8*f) > 1e-9 || a.Components[3].PowerW != 3.3 {
			t.Errorf("%d AUs: NTTU power %g, SRAM power %g", tc.n, a.Components[0].PowerW, a.Components[3].PowerW)
		}
		if math.Abs(a.EDRAM.BankGBps-1024*f) > 1e-9 || math.Abs(a.SRAM.GBps-24576*f) > 1e-9 {
			t.Errorf("%d AUs: bandwidths %g %g", tc.n, a.EDRAM.BankGBps, a.SRAM.GBps)
		}
	}
	if base.Engine.AUs() != 16 || base.Components[0].PowerW != 4.8 {
		t.Error("WithAUs modified its input")
	}
	for _, n := range []int{0, 3, 65, -16} {
		if _, err := WithAUs(base, n); err == nil {
			t.Errorf("WithAUs(%d) accepted", n)
		}
	}
}

func TestWithEDRAM(t *testing.T) {
	base := mustPreset(t, "rosemary")
	for _, mb := range []int64{0, 32, 64, 96, 128} {
		a, err := WithEDRAM(base, mb<<20)
		if err != nil {
			t.Fatal(err)
		}
		if a.EDRAM.CapacityBytes != mb<<20 || a.EDRAM.Banks != 8 {
			t.Errorf("%d MB: %+v", mb, a.EDRAM)
		}
		if want := 17.4 * float64(mb) / 64; math.Abs(a.Components[4].AreaMM2-want) > 1e-9 {
			t.Errorf("%d MB: scratchpad area %g want %g", mb, a.Components[4].AreaMM2, want)
		}
	}
	for _, b := range []int64{-1, 129 << 20} {
		if _, err := WithEDRAM(base, b); err == nil {
			t.Errorf("WithEDRAM(%d) accepted", b)
		}
	}
	zero, _ := WithEDRAM(base, 0)
	if _, err := WithEDRAM(zero, 32<<20); err == nil {
		t.Error("growing a zero-size eDRAM should fail: no area to scale from")
	}
}
