package pcie

import (
	"math"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/sim/eventsim"
)

func link(t *testing.T) arch.Link {
	t.Helper()
	a, err := arch.Preset("rosemary")
	if err != nil {
		t.Fatal(err)
	}
	return a.Link
}

// mqsimNS is MQSim's estimate_transfer_time, transcribed as arithmetic in
// float64 nanoseconds without its truncation, for comparison.
func mqsimNS(payload, mps, ovh, lanes int64, laneGBps float64) float64 {
	total := payload/mps*(mps+ovh) + func() int64 {
		if payload%mps == 0 {
			return 0
		}
		return payload%mps + ovh
	}()
	perLane := total / lanes
	if total%lanes != 0 {
		perLane++
	}
	return float64(perLane) / laneGBps
}

// Hand-computed: PCIe 4.0 x4, 16 GT/s, 128b/130b => 1.9692307 GB/s per lane
// = 507.8125 ps per byte; MPS 128 B, overhead 20+6+2 = 28 B.
func TestHandComputed(t *testing.T) {
	cfg := link(t)
	for _, tc := range []struct {
		payload, wire int64
		ps            eventsim.Time
	}{
		{0, 0, 0},
		// 100 B: one TLP of 128 wire bytes, 32 per lane, 32 x 507.8125 = 16250 ps.
		{100, 128, 16250},
		// 128 B: 156 wire bytes, 39 per lane = 19804.6875 -> 19805 ps.
		{128, 156, 19805},
		// 129 B: 156 + (1+28) = 185, ceil(185/4) = 47 -> 23867.1875 -> 23868 ps.
		{129, 185, 23868},
		// 4096 B: 32 TLPs x 156 = 4992, 1248 per lane -> 633750 ps.
		{4096, 4992, 633750},
		// one 2^16-coefficient 32-bit limb (256 KiB): 2048 TLPs x 156 =
		// 319488 wire bytes, 79872 per lane -> 40560000 ps = 40.56 us.
		{262144, 319488, 40560000},
	} {
		if w := WireBytes(cfg, tc.payload); w != tc.wire {
			t.Errorf("WireBytes(%d) = %d, want %d", tc.payload, w, tc.wire)
		}
		got, err := TransferTime(cfg, tc.payload)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.ps {
			t.Errorf("TransferTime(%d) = %d ps, want %d", tc.payload, got, tc.ps)
		}
		// MQSim's formula (in ns) agrees to within the picosecond rounding.
		ns := mqsimNS(tc.payload, 128, 28, 4, cfg.LaneGBps())
		if math.Abs(float64(got)/1000-ns) > 0.001 {
			t.Errorf("payload %d: %d ps vs MQSim formula %g ns", tc.payload, got, ns)
		}
	}
	if ReadRequestWireBytes(cfg) != 32 {
		t.Errorf("read request %d bytes", ReadRequestWireBytes(cfg))
	}
	// Long-transfer payload rate: 7.877 GB/s x 128/156 = 6.463 GB/s.
	if g := EffectiveGBps(cfg); math.Abs(g-16.0*128/130/8*4*128/156) > 1e-12 {
		t.Errorf("effective %g GB/s", g)
	}
}

// TestMatchesMQSimRandom checks the formula over many sizes and link shapes.
func TestMatchesMQSimRandom(t *testing.T) {
	cfg := link(t)
	for _, lanes := range []int{1, 2, 4, 8, 16} {
		for _, mps := range []int{128, 256, 512} {
			c := cfg
			c.Lanes, c.MaxPayloadBytes = lanes, mps
			for p := int64(1); p < 1<<20; p = p*3 + 7 {
				got, err := TransferTime(c, p)
				if err != nil {
					t.Fatal(err)
				}
				ns := mqsimNS(p, int64(mps), 28, int64(lanes), c.LaneGBps())
				if d := float64(got)/1000 - ns; d < -1e-6*ns || d > 0.001+1e-9*ns {
					t.Fatalf("lanes %d mps %d payload %d: %d ps vs %g ns", lanes, mps, p, got, ns)
				}
			}
		}
	}
}

func TestLinkFIFOAndDuplex(t *testing.T) {
	cfg := link(t)
	s := eventsim.New()
	l, err := New(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var arrivals []eventsim.Time
	rec := func() { arrivals = append(arrivals, s.Now()) }
	if _, err := l.Send(ToDevice, 4096, rec); err != nil {
		t.Fatal(err)
	}
	l.Send(ToDevice, 100, rec) // queued behind the first: 633750 + 16250
	l.Send(ToHost, 100, rec)   // other direction: independent, 16250
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	want := []eventsim.Time{16250, 633750, 650000}
	for i := range want {
		if arrivals[i] != want[i] {
			t.Fatalf("arrivals %v want %v", arrivals, want)
		}
	}
	st := l.Stats(ToDevice)
	if st.Messages != 2 || st.PayloadBytes != 4196 || st.WireBytes != 4992+128 || st.Busy != 650000 {
		t.Errorf("stats %+v", st)
	}
	if _, err := l.Send(Direction(7), 1, nil); err == nil {
		t.Error("bad direction accepted")
	}
	if _, err := l.Send(ToHost, -1, nil); err == nil {
		t.Error("negative payload accepted")
	}
	bad := cfg
	bad.Lanes = 0
	if _, err := New(s, bad); err == nil {
		t.Error("zero lanes accepted")
	}
}

// The compiler's cost model uses arch.Link.TransferSeconds; it must agree
// with the simulator's link to the picosecond.
func TestArchTransferSecondsMatchesSimulator(t *testing.T) {
	cfg := link(t)
	for _, n := range []int64{1, 127, 128, 4096, 1 << 20, 123457} {
		tt, err := TransferTime(cfg, n)
		if err != nil {
			t.Fatal(err)
		}
		if d := cfg.TransferSeconds(n)*1e12 - float64(tt); d > 1 || d < -1 {
			t.Fatalf("%d bytes: arch %.1f ps, sim %d ps", n, cfg.TransferSeconds(n)*1e12, tt)
		}
	}
}
