package link

import (
	"math"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

// Hand-computed: 1,000,000 B up, 500,000 B down, 12 flights.
//
//	LAN: 12·0.15 ms = 1.8 ms;  1.5e6 B / 375e6 B/s = 4 ms;  total 5.8 ms (+ compute).
//	WAN: 12·20 ms = 240 ms;    1.5e6 B / 50e6 B/s = 30 ms;  total 270 ms.
func TestProjectHandComputed(t *testing.T) {
	tr := Traffic{BytesC2S: 1_000_000, BytesS2C: 500_000, Flights: 12}
	cases := []struct {
		l                      Link
		compute                time.Duration
		prop, xfer, total, rtt float64
	}{
		{LAN, 0, 1.8e-3, 4e-3, 5.8e-3, 0.3},
		{LAN, 10 * time.Millisecond, 1.8e-3, 4e-3, 15.8e-3, 0.3},
		{WAN, 0, 0.240, 0.030, 0.270, 40},
		{Link{"1ms,10MB/s", 10e6, time.Millisecond}, 0, 6e-3, 0.15, 0.156, 1},
	}
	for _, c := range cases {
		p, err := c.l.Project(tr, c.compute)
		if err != nil {
			t.Fatal(err)
		}
		if !near(p.PropagateS, c.prop) || !near(p.TransferS, c.xfer) || !near(p.TotalS, c.total) || !near(p.RTTms, c.rtt) {
			t.Errorf("%s: got %+v, want prop %v xfer %v total %v", c.l.Name, p, c.prop, c.xfer, c.total)
		}
	}
	if tr.Rounds() != 6 || (Traffic{Flights: 3}).Rounds() != 2 {
		t.Error("Rounds wrong")
	}
}

func TestPresets(t *testing.T) {
	if LAN.Bandwidth != 375e6 || LAN.RTT != 300*time.Microsecond {
		t.Errorf("LAN preset %+v", LAN)
	}
	if WAN.Bandwidth != 50e6 || WAN.RTT != 40*time.Millisecond {
		t.Errorf("WAN preset %+v", WAN)
	}
}

func TestValidate(t *testing.T) {
	bad := []Link{{"zero", 0, 0}, {"neg", -1, 0}, {"nan", math.NaN(), 0}, {"inf", math.Inf(1), 0}, {"rtt", 1, -time.Millisecond}}
	for _, l := range bad {
		if _, err := l.Project(Traffic{}, 0); err == nil {
			t.Errorf("%s accepted", l.Name)
		}
	}
	if _, err := LAN.Project(Traffic{}, -time.Second); err == nil {
		t.Error("negative compute accepted")
	}
}

func TestSweep(t *testing.T) {
	tr := FromStats(transport.Stats{BytesC2S: 3_000_000, BytesS2C: 1_000_000, Flights: 10})
	ps, err := Sweep(tr, 0, SweepBandwidths, SweepRTTs)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != len(SweepBandwidths)*len(SweepRTTs) {
		t.Fatalf("%d points", len(ps))
	}
	if SweepBandwidths[0] != 10e6 || SweepBandwidths[len(SweepBandwidths)-1] != 1e9 ||
		SweepRTTs[0] != time.Millisecond || SweepRTTs[len(SweepRTTs)-1] != 300*time.Millisecond {
		t.Error("sweep range differs from the paper's 10 MB/s–1 GB/s, 1–300 ms")
	}
	// Corner: 10 MB/s, 1 ms: 4e6/10e6 = 0.4 s + 10·0.5 ms = 0.405 s.
	if !near(ps[0].TotalS, 0.405) {
		t.Errorf("first point %+v", ps[0])
	}
	// Corner: 1 GB/s, 300 ms: 4 ms + 1.5 s.
	if last := ps[len(ps)-1]; !near(last.TotalS, 1.504) {
		t.Errorf("last point %+v", last)
	}
	if _, err := Sweep(tr, 0, []float64{0}, SweepRTTs); err == nil {
		t.Error("zero bandwidth accepted in sweep")
	}
}
