package ssd

import (
	"fmt"
	"math"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/sim/eventsim"
	"github.com/rosemary-fhe/rosemary/sim/ssd/nand"
)

// Flash is the bulk model of long sequential flash reads the simulator
// uses instead of one event per page: every channel is a FIFO server that
// moves a batch of pages at the steady-state per-page time of
// nand.PeakReadGBps (the analytic bound the page-level nand.Array reaches
// on long scans: a k-plane command per die cycle, die- or channel-bound),
// plus, when the channel was idle, the pipeline fill of one read command
// and tR before its first page can leave. A batch completes when its last
// channel does. The page-level model and this one agree on long scans
// (TestFlashMatchesPageLevel).
//
// Pages are located by the store/layout channel-interleaving rule
// (RuleStripe): page n of an object lives on channel n mod C. A counted
// stored value (Count instances of one shape) is laid out as one striped
// object whose instances follow each other, so instance i's pages are the
// object pages i*P ... i*P+P-1 (P = layout.PagesPerObject of one instance).
type Flash struct {
	// OnBusy, if set, is told every channel booking [start, end) (the
	// simulator's timeline).
	OnBusy func(start, end eventsim.Time)

	sim      *eventsim.Sim
	g        arch.NAND
	lay      layout.Layout
	channels []*eventsim.Server
	perPage  eventsim.Time
	fill     eventsim.Time
	pages    int64
}

// NewFlash builds the flash array of g on sim.
func NewFlash(sim *eventsim.Sim, g arch.NAND) (*Flash, error) {
	t, err := nand.TimingOf(g)
	if err != nil {
		return nil, fmt.Errorf("ssd: %w", err)
	}
	peak, err := nand.PeakReadGBps(g)
	if err != nil {
		return nil, fmt.Errorf("ssd: %w", err)
	}
	perChannel := peak / float64(g.Channels) // GB/s = bytes per ns
	lay := layout.Layout{Channels: g.Channels, PageSize: g.PageBytes}
	if err := lay.Validate(); err != nil {
		return nil, fmt.Errorf("ssd: flash layout: %w", err)
	}
	f := &Flash{sim: sim, g: g, lay: lay,
		perPage: eventsim.Time(math.Round(float64(g.PageBytes) / perChannel * 1000)),
		fill:    t.ReadCommand[g.PlanesPerDie] + t.TR}
	for c := 0; c < g.Channels; c++ {
		f.channels = append(f.channels, eventsim.NewServer(sim, fmt.Sprintf("nand.ch%d", c), eventsim.Rate{}))
	}
	return f, nil
}

// PagesPerInstance is the pages one instance of shape s occupies under the
// layout rule (each limb rounded up to whole pages).
func (f *Flash) PagesPerInstance(s layout.Shape) (int64, error) {
	if err := s.Validate(); err != nil {
		return 0, fmt.Errorf("ssd: stored shape: %w", err)
	}
	return f.lay.PagesPerObject(s), nil
}

// channelPages returns how many of the object pages [first, first+n) lie
// on each channel under the stripe rule (page p on channel p mod C).
func channelPages(channels int, first, n int64) []int64 {
	c := int64(channels)
	out := make([]int64, channels)
	if n <= 0 {
		return out
	}
	full := n / c
	for i := range out {
		out[i] = full
	}
	for p := first + full*c; p < first+n; p++ {
		out[p%c]++
	}
	return out
}

// Read books the object pages [first, first+n) on their channels, starting
// now, and returns when the last of them has crossed its channel.
func (f *Flash) Read(first, n int64) eventsim.Time {
	end := f.sim.Now()
	for ch, cnt := range channelPages(len(f.channels), first, n) {
		if cnt == 0 {
			continue
		}
		srv := f.channels[ch]
		d := eventsim.Time(cnt) * f.perPage
		if srv.Stats().Requests == 0 || srv.BusyUntil() < f.sim.Now() {
			d += f.fill
		}
		e := srv.Reserve(d, cnt*int64(f.g.PageBytes))
		if f.OnBusy != nil {
			f.OnBusy(e-d, e)
		}
		end = max(end, e)
	}
	f.pages += n
	return end
}

// Pages is the number of pages read so far.
func (f *Flash) Pages() int64 { return f.pages }

// Busy is the mean busy time per channel.
func (f *Flash) Busy() eventsim.Time {
	// The mean per channel, summed in float64: a sum of channel busy times
	// in picoseconds overflows int64 on week-long runs.
	var b float64
	for _, c := range f.channels {
		b += float64(c.Stats().Busy)
	}
	return eventsim.Time(b / float64(max(len(f.channels), 1)))
}
