package main

import (
	"fmt"
	"time"

	"github.com/rosemary-fhe/rosemary/optiprime/link"
)

// sweepPoint is one link of `mpc bench --e2e --sweep`: a session's time
// projected onto it from what the LAN session measured.
type sweepPoint struct {
	BandwidthMBps float64 `json:"bandwidth_MBps"`
	RTTms         float64 `json:"rtt_ms"`
	TotalS        float64 `json:"total_s"`
	// Ratio is this session's TotalS over the first protocol's (the
	// baseline, normally cheetah) at the same link.
	Ratio float64 `json:"ratio_vs_first,omitempty"`
}

// sweepMethod labels the sweep's figures wherever they are printed.
const sweepMethod = "projected, not shaped: measured LAN wall (compute) + bytes / bandwidth + flights × RTT/2 (link.Project)"

// addSweep projects every run onto the sweep's grid (link.SweepBandwidths
// × link.SweepRTTs) and sets each point's ratio to the first run's. The
// runs must be LAN sessions: their wall time is the compute term.
func addSweep(runs []e2eRun) error {
	for i := range runs {
		r := &runs[i]
		tr := link.Traffic{BytesC2S: r.BytesC2S, BytesS2C: r.BytesS2C, Flights: r.Flights}
		ps, err := link.Sweep(tr, time.Duration(r.WallS*float64(time.Second)), link.SweepBandwidths, link.SweepRTTs)
		if err != nil {
			return err
		}
		r.Sweep = make([]sweepPoint, len(ps))
		for j, p := range ps {
			r.Sweep[j] = sweepPoint{BandwidthMBps: p.BandwidthMB, RTTms: p.RTTms, TotalS: p.TotalS}
			if i > 0 {
				r.Sweep[j].Ratio = p.TotalS / runs[0].Sweep[j].TotalS
			}
		}
	}
	return nil
}

// sweepLine is the JSON line of --sweep --json: the method, and per
// session its protocol and points.
type sweepLine struct {
	Net    string         `json:"net"`
	Method string         `json:"sweep_method"`
	Runs   []sweepLineRun `json:"sweep"`
}

type sweepLineRun struct {
	Protocol string       `json:"protocol"`
	Points   []sweepPoint `json:"points"`
}

func sweepJSON(runs []e2eRun) sweepLine {
	l := sweepLine{Method: sweepMethod}
	for _, r := range runs {
		l.Net = r.Net
		l.Runs = append(l.Runs, sweepLineRun{Protocol: r.Protocol, Points: r.Sweep})
	}
	return l
}

// printSweep prints, per bandwidth and RTT, each protocol's projected time
// and its ratio to the first protocol's.
func printSweep(runs []e2eRun) {
	if len(runs) == 0 || len(runs[0].Sweep) == 0 {
		return
	}
	fmt.Printf("%s sweep (%s); ratio = protocol / %s\n", runs[0].Net, sweepMethod, runs[0].Protocol)
	fmt.Printf("  %8s %7s", "MB/s", "RTT_ms")
	for i, r := range runs {
		fmt.Printf(" %14s", r.Protocol+"_s")
		if i > 0 {
			fmt.Printf(" %7s", "ratio")
		}
	}
	fmt.Println()
	for j, p := range runs[0].Sweep {
		fmt.Printf("  %8.0f %7.0f", p.BandwidthMBps, p.RTTms)
		for i, r := range runs {
			fmt.Printf(" %14.1f", r.Sweep[j].TotalS)
			if i > 0 {
				fmt.Printf(" %7.3f", r.Sweep[j].Ratio)
			}
		}
		fmt.Println()
	}
}
