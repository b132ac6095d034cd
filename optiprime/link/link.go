package link

import (
	"fmt"
	"math"
	"time"

	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// Link is a network between the two parties.
type Link struct {
	Name      string        `json:"name"`
	Bandwidth float64       `json:"bandwidth_Bps"` // bytes per second
	RTT       time.Duration `json:"rtt_ns"`
}

// Presets quoted from issue 8 / the OptiPrime evaluation (see package doc).
var (
	LAN = Link{Name: "LAN", Bandwidth: 3e9 / 8, RTT: 300 * time.Microsecond}
	WAN = Link{Name: "WAN", Bandwidth: 400e6 / 8, RTT: 40 * time.Millisecond}
)

// Validate reports a non-positive or non-finite bandwidth or a negative RTT.
func (l Link) Validate() error {
	if !(l.Bandwidth > 0) || math.IsInf(l.Bandwidth, 0) {
		return fmt.Errorf("link %q: bandwidth %v B/s must be positive and finite", l.Name, l.Bandwidth)
	}
	if l.RTT < 0 {
		return fmt.Errorf("link %q: negative RTT %v", l.Name, l.RTT)
	}
	return nil
}

// Traffic is what a protocol run put on the wire.
type Traffic struct {
	BytesC2S uint64 `json:"bytes_c2s"`
	BytesS2C uint64 `json:"bytes_s2c"`
	Flights  uint64 `json:"flights"`
}

// FromStats takes the counters of a transport.Conn.
func FromStats(s transport.Stats) Traffic {
	return Traffic{BytesC2S: s.BytesC2S, BytesS2C: s.BytesS2C, Flights: s.Flights}
}

// Rounds returns round trips, ⌈flights/2⌉.
func (t Traffic) Rounds() uint64 { return (t.Flights + 1) / 2 }

// Projection is the projected time of a run on a link, in seconds.
type Projection struct {
	Link        string  `json:"link"`
	BandwidthMB float64 `json:"bandwidth_MBps"`
	RTTms       float64 `json:"rtt_ms"`
	ComputeS    float64 `json:"compute_s"`
	PropagateS  float64 `json:"propagate_s"` // flights · RTT/2
	TransferS   float64 `json:"transfer_s"`  // bytes / bandwidth
	TotalS      float64 `json:"total_s"`
}

// Project applies the model to one run; compute is the measured (or
// otherwise projected) computation time, added as is.
func (l Link) Project(t Traffic, compute time.Duration) (Projection, error) {
	if err := l.Validate(); err != nil {
		return Projection{}, err
	}
	if compute < 0 {
		return Projection{}, fmt.Errorf("link: negative compute time %v", compute)
	}
	p := Projection{
		Link:        l.Name,
		BandwidthMB: l.Bandwidth / 1e6,
		RTTms:       l.RTT.Seconds() * 1e3,
		ComputeS:    compute.Seconds(),
		PropagateS:  float64(t.Flights) * l.RTT.Seconds() / 2,
		TransferS:   (float64(t.BytesC2S) + float64(t.BytesS2C)) / l.Bandwidth,
	}
	p.TotalS = p.ComputeS + p.PropagateS + p.TransferS
	return p, nil
}

// SweepBandwidths are the sweep's bandwidths in bytes per second
// (10 MB/s … 1 GB/s).
var SweepBandwidths = []float64{10e6, 20e6, 50e6, 100e6, 200e6, 500e6, 1e9}

// SweepRTTs are the sweep's round-trip times (1 ms … 300 ms).
var SweepRTTs = []time.Duration{
	1 * time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond,
	20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond,
}

// Sweep projects the run on every combination of bandwidth and RTT, in
// bandwidth-major order.
func Sweep(t Traffic, compute time.Duration, bandwidths []float64, rtts []time.Duration) ([]Projection, error) {
	out := make([]Projection, 0, len(bandwidths)*len(rtts))
	for _, bw := range bandwidths {
		for _, rtt := range rtts {
			l := Link{Name: fmt.Sprintf("%gMB/s,%v", bw/1e6, rtt), Bandwidth: bw, RTT: rtt}
			p, err := l.Project(t, compute)
			if err != nil {
				return nil, fmt.Errorf("link: sweep: %w", err)
			}
			out = append(out, p)
		}
	}
	return out, nil
}
