package nand

import (
	"errors"
	"fmt"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/sim/eventsim"
)

// Addr is a page's physical location.
type Addr struct {
	Channel, Chip, Die, Plane int
}

// Layout maps a logical page number to its physical location.
type Layout func(page int64) Addr

// RoundRobin deals consecutive pages channel first, then chip (way), then
// die, then plane — MQSim's CWDP allocation order — so any run of
// Channels x ChipsPerChannel x DiesPerChip x PlanesPerDie consecutive pages
// touches every plane once.
func RoundRobin(g arch.NAND) Layout {
	c, w, d, p := int64(g.Channels), int64(g.ChipsPerChannel), int64(g.DiesPerChip), int64(g.PlanesPerDie)
	return func(page int64) Addr {
		x := page
		ch := x % c
		x /= c
		chip := x % w
		x /= w
		die := x % d
		x /= d
		return Addr{Channel: int(ch), Chip: int(chip), Die: int(die), Plane: int(x % p)}
	}
}

// ChannelRow adapts a channel-interleaving rule that gives each page a
// channel and a row (its page index within the channel, as store/layout
// does) to a Layout: rows are dealt over the channel's chips, then dies,
// then planes, so consecutive rows of one channel hit different dies.
func ChannelRow(g arch.NAND, rule func(page int64) (channel int, row int64)) Layout {
	w, d, p := int64(g.ChipsPerChannel), int64(g.DiesPerChip), int64(g.PlanesPerDie)
	return func(page int64) Addr {
		ch, row := rule(page)
		chip := row % w
		row /= w
		die := row % d
		row /= d
		return Addr{Channel: ch, Chip: int(chip), Die: int(die), Plane: int(row % p)}
	}
}

// Timing is the derived per-operation timing of one configuration.
type Timing struct {
	ReadCommand [5]eventsim.Time // index = planes in the command (1..4)
	TR          eventsim.Time
	PageOut     eventsim.Time // one page over the channel
	ChannelRate eventsim.Rate
}

// TimingOf derives the timing of g (MQSim's ONFI_Channel_NVDDR2 formulas).
func TimingOf(g arch.NAND) (Timing, error) {
	var t Timing
	if g.ChannelWidthBytes <= 0 || g.ChannelMTps <= 0 || g.PageBytes <= 0 || g.PlanesPerDie <= 0 || g.PlanesPerDie > 4 {
		return t, fmt.Errorf("nand: invalid channel/page/plane parameters %d B x %d MT/s, page %d, %d planes",
			g.ChannelWidthBytes, g.ChannelMTps, g.PageBytes, g.PlanesPerDie)
	}
	ns := func(name string, v float64) (eventsim.Time, error) {
		x, ok := eventsim.FromNanoseconds(v)
		if !ok {
			return 0, fmt.Errorf("nand: %s = %g ns is not a valid time", name, v)
		}
		return x, nil
	}
	o := g.ONFI
	var cs, wc, dbsy, wb, rr eventsim.Time
	var err error
	for _, f := range []struct {
		name string
		v    float64
		dst  *eventsim.Time
	}{{"t_cs", o.TCS, &cs}, {"t_wc", o.TWC, &wc}, {"t_dbsy", o.TDBSY, &dbsy}, {"t_wb", o.TWB, &wb}, {"t_rr", o.TRR, &rr}} {
		if *f.dst, err = ns(f.name, f.v); err != nil {
			return t, err
		}
	}
	for k := 1; k <= 4; k++ {
		t.ReadCommand[k] = cs + eventsim.Time(k)*6*wc + eventsim.Time(k-1)*dbsy + wb + rr
	}
	if t.TR, err = ns("read", g.ReadNS); err != nil {
		return t, err
	}
	if t.TR == 0 {
		return t, errors.New("nand: tR is zero")
	}
	// width bytes per transfer, MT/s mega-transfers per second:
	// width x MT/s bytes per microsecond.
	t.ChannelRate = eventsim.Rate{Bytes: int64(g.ChannelWidthBytes) * int64(g.ChannelMTps), Per: eventsim.Microsecond}
	t.PageOut = t.ChannelRate.Duration(int64(g.PageBytes))
	return t, nil
}

// Stats are the flash array's counters.
type Stats struct {
	PagesRead     int64
	BytesRead     int64
	Commands      int64 // read commands issued (a k-plane read is one)
	PlaneSlots    int64 // sum over commands of planes used (PlaneSlots/Commands = mean multi-plane width)
	ChannelBusy   eventsim.Time
	DieBusy       eventsim.Time // summed over dies: command issue to last page out
	LastDelivered eventsim.Time
}

// Channel arbitration classes.
const (
	classCommand = 0
	classData    = 1
)

type request struct {
	page  int64
	plane int
	done  func(page int64)
}

type die struct {
	busy    bool                      // a command is scheduled or in flight
	planes  [4]eventsim.FIFO[request] // one queue per plane
	started eventsim.Time
}

// Array is the flash back end of one SSD.
type Array struct {
	g        arch.NAND
	t        Timing
	sim      *eventsim.Sim
	layout   Layout
	channels []*eventsim.Arbiter
	dies     []die // index ((channel*chips)+chip)*dies + die
	st       Stats
}

// New builds a flash array of geometry g on sim; layout may be nil for
// RoundRobin.
func New(sim *eventsim.Sim, g arch.NAND, layout Layout) (*Array, error) {
	if g.Channels <= 0 || g.ChipsPerChannel <= 0 || g.DiesPerChip <= 0 || g.Channels > 4096 || g.ChipsPerChannel > 256 || g.DiesPerChip > 64 {
		return nil, fmt.Errorf("nand: invalid geometry %d x %d x %d", g.Channels, g.ChipsPerChannel, g.DiesPerChip)
	}
	t, err := TimingOf(g)
	if err != nil {
		return nil, err
	}
	if layout == nil {
		layout = RoundRobin(g)
	}
	a := &Array{g: g, t: t, sim: sim, layout: layout}
	for c := 0; c < g.Channels; c++ {
		a.channels = append(a.channels, eventsim.NewArbiter(sim, fmt.Sprintf("nand.ch%d", c), 2, t.ChannelRate))
	}
	a.dies = make([]die, g.Channels*g.ChipsPerChannel*g.DiesPerChip)
	return a, nil
}

// Timing is the array's derived timing.
func (a *Array) Timing() Timing { return a.t }

// Geometry is the array's configuration.
func (a *Array) Geometry() arch.NAND { return a.g }

// Stats returns the counters; ChannelBusy sums the channels.
func (a *Array) Stats() Stats {
	st := a.st
	st.ChannelBusy = 0
	for _, c := range a.channels {
		st.ChannelBusy += c.Stats().Busy
	}
	return st
}

// Channel returns channel i's arbiter (for per-channel utilization).
func (a *Array) Channel(i int) *eventsim.Arbiter { return a.channels[i] }

// Read queues a read of logical page `page`; done is called (with the page
// number) when the page has crossed the channel into the controller.
func (a *Array) Read(page int64, done func(page int64)) error {
	if page < 0 {
		return fmt.Errorf("nand: negative page %d", page)
	}
	ad := a.layout(page)
	g := a.g
	if ad.Channel < 0 || ad.Channel >= g.Channels || ad.Chip < 0 || ad.Chip >= g.ChipsPerChannel ||
		ad.Die < 0 || ad.Die >= g.DiesPerChip || ad.Plane < 0 || ad.Plane >= g.PlanesPerDie {
		return fmt.Errorf("nand: layout put page %d at %+v, outside %dx%dx%dx%d", page, ad,
			g.Channels, g.ChipsPerChannel, g.DiesPerChip, g.PlanesPerDie)
	}
	di := (ad.Channel*g.ChipsPerChannel+ad.Chip)*g.DiesPerChip + ad.Die
	d := &a.dies[di]
	d.planes[ad.Plane].Push(request{page: page, plane: ad.Plane, done: done})
	if !d.busy {
		// Issue at the end of the current instant, so that every read queued
		// at the same time can join one multi-plane command.
		d.busy = true
		ch := ad.Channel
		a.sim.After(0, func() { a.issue(di, ch) })
	}
	return nil
}

// issue starts the next (multi-plane) read on die di: the oldest queued
// request of every plane that has one, as one k-plane command.
func (a *Array) issue(di, ch int) {
	d := &a.dies[di]
	batch := make([]request, 0, a.g.PlanesPerDie)
	for p := 0; p < a.g.PlanesPerDie; p++ {
		if !d.planes[p].Empty() {
			batch = append(batch, d.planes[p].Pop())
		}
	}
	if len(batch) == 0 {
		d.busy = false
		return
	}
	d.busy = true
	d.started = a.sim.Now()
	a.st.Commands++
	a.st.PlaneSlots += int64(len(batch))
	channel := a.channels[ch]
	k := len(batch)
	// Commands (class 0) overtake queued data transfers (class 1) so that
	// idle dies start sensing as early as possible.
	channel.Submit(classCommand, a.t.ReadCommand[k], 0, func() {
		a.sim.After(a.t.TR, func() {
			// Pages leave one by one, FIFO behind other dies' data.
			remaining := k
			for _, r := range batch {
				r := r
				channel.SubmitBytes(classData, int64(a.g.PageBytes), func() {
					a.st.PagesRead++
					a.st.BytesRead += int64(a.g.PageBytes)
					a.st.LastDelivered = a.sim.Now()
					if r.done != nil {
						r.done(r.page)
					}
					remaining--
					if remaining == 0 {
						a.st.DieBusy += a.sim.Now() - d.started
						a.issue(di, ch)
					}
				})
			}
		})
	})
}
