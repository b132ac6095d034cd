package eventsim

import (
	"fmt"
	"math"
	"math/bits"
)

// Rate is a bandwidth: Bytes bytes every Per of simulated time. It is kept
// as a ratio of integers so durations are exact (no float rounding).
type Rate struct {
	Bytes int64
	Per   Time
}

// GBps is a rate of g GB/s (10^9 B/s), exact to 1 byte per millisecond.
func GBps(g float64) (Rate, error) {
	if g != g || g <= 0 || g > 1e9 {
		return Rate{}, fmt.Errorf("des: bandwidth %g GB/s must be positive and finite", g)
	}
	return Rate{Bytes: int64(math.Round(g * 1e6)), Per: Millisecond}, nil
}

// Valid reports whether r is a usable (positive) rate.
func (r Rate) Valid() bool { return r.Bytes > 0 && r.Per > 0 }

// GBps converts r back to GB/s.
func (r Rate) GBps() float64 { return float64(r.Bytes) / r.Per.Seconds() / 1e9 }

// Duration is the time to move n bytes, rounded up to a whole picosecond.
// It saturates at Never for absurd sizes instead of overflowing.
func (r Rate) Duration(n int64) Time {
	if n <= 0 || !r.Valid() {
		return 0
	}
	hi, lo := bits.Mul64(uint64(n), uint64(r.Per))
	if hi >= uint64(r.Bytes) {
		return Never
	}
	q, rem := bits.Div64(hi, lo, uint64(r.Bytes))
	if rem != 0 {
		q++
	}
	if q > uint64(Never) {
		return Never
	}
	return Time(q)
}

// Stats are the counters every resource keeps.
type Stats struct {
	Requests uint64
	Bytes    int64
	Busy     Time // total time the resource was serving a request
}

// Utilization is Busy / over (0 when over <= 0).
func (st Stats) Utilization(over Time) float64 {
	if over <= 0 {
		return 0
	}
	return float64(st.Busy) / float64(over)
}

// Server is a FIFO resource serving one request at a time. A request
// submitted at Now starts when every earlier request has finished.
type Server struct {
	sim       *Sim
	name      string
	rate      Rate
	busyUntil Time
	st        Stats
}

// NewServer returns a server; rate may be the zero Rate for a server used
// only with durations (Occupy).
func NewServer(sim *Sim, name string, rate Rate) *Server {
	return &Server{sim: sim, name: name, rate: rate}
}

// Name is the server's name.
func (v *Server) Name() string { return v.name }

// Rate is the server's bandwidth.
func (v *Server) Rate() Rate { return v.rate }

// Stats returns the server's counters.
func (v *Server) Stats() Stats { return v.st }

// BusyUntil is when the last accepted request finishes.
func (v *Server) BusyUntil() Time { return v.busyUntil }

// Reserve books the server for d starting no earlier than Now and returns
// the completion time, without scheduling an event.
func (v *Server) Reserve(d Time, bytes int64) Time {
	if d < 0 {
		v.sim.Fail(fmt.Errorf("des: %s: negative service time %d ps", v.name, d))
		d = 0
	}
	start := v.sim.now
	if v.busyUntil > start {
		start = v.busyUntil
	}
	end := start + d
	if d > Never-start {
		v.sim.Fail(fmt.Errorf("des: %s: service time %d ps overflows simulated time", v.name, d))
		end = Never
	}
	v.busyUntil = end
	v.st.Requests++
	v.st.Bytes += bytes
	v.st.Busy += end - start
	return end
}

// Occupy books the server for d and calls done (if not nil) at completion.
// It returns the completion time.
func (v *Server) Occupy(d Time, done func()) Time {
	end := v.Reserve(d, 0)
	if done != nil {
		v.sim.At(end, done)
	}
	return end
}

// Transfer books the server for n bytes at its rate and calls done (if not
// nil) at completion. It returns the completion time.
func (v *Server) Transfer(n int64, done func()) Time {
	if !v.rate.Valid() {
		v.sim.Fail(fmt.Errorf("des: %s: transfer on a server without a rate", v.name))
		return v.sim.now
	}
	if n < 0 {
		v.sim.Fail(fmt.Errorf("des: %s: negative transfer size %d", v.name, n))
		n = 0
	}
	end := v.Reserve(v.rate.Duration(n), n)
	if done != nil {
		v.sim.At(end, done)
	}
	return end
}

// Pipe delays every message by a fixed latency, with unlimited concurrency.
type Pipe struct {
	sim     *Sim
	latency Time
	st      Stats
}

// NewPipe returns a pipe with the given latency (negative is treated as 0
// and recorded as a model error).
func NewPipe(sim *Sim, latency Time) *Pipe {
	if latency < 0 {
		sim.Fail(fmt.Errorf("des: negative pipe latency %d ps", latency))
		latency = 0
	}
	return &Pipe{sim: sim, latency: latency}
}

// Latency is the pipe's delay.
func (p *Pipe) Latency() Time { return p.latency }

// Stats returns the pipe's counters (Busy is the summed in-flight time).
func (p *Pipe) Stats() Stats { return p.st }

// Send delivers a message of n bytes after the latency, calling done then.
// It returns the delivery time.
func (p *Pipe) Send(n int64, done func()) Time {
	t := p.sim.now + p.latency
	p.st.Requests++
	p.st.Bytes += n
	p.st.Busy += p.latency
	if done != nil {
		p.sim.At(t, done)
	}
	return t
}

// Banked is a memory of N banks, each a bandwidth Server. Addresses are
// interleaved across banks every Interleave bytes: bank = (addr /
// Interleave) mod N.
type Banked struct {
	sim        *Sim
	banks      []*Server
	interleave int64
}

// NewBanked returns a banked memory of n banks of the given per-bank rate.
func NewBanked(sim *Sim, name string, n int, perBank Rate, interleave int64) (*Banked, error) {
	if n <= 0 || n > 1<<16 {
		return nil, fmt.Errorf("des: %s: bank count %d out of range", name, n)
	}
	if !perBank.Valid() {
		return nil, fmt.Errorf("des: %s: per-bank rate %+v is not positive", name, perBank)
	}
	if interleave <= 0 {
		return nil, fmt.Errorf("des: %s: interleave %d must be positive", name, interleave)
	}
	b := &Banked{sim: sim, interleave: interleave}
	for i := 0; i < n; i++ {
		b.banks = append(b.banks, NewServer(sim, fmt.Sprintf("%s.bank%d", name, i), perBank))
	}
	return b, nil
}

// Banks is the number of banks.
func (b *Banked) Banks() int { return len(b.banks) }

// Bank returns bank i.
func (b *Banked) Bank(i int) *Server { return b.banks[i] }

// Access moves n bytes at address addr: the range is split at interleave
// boundaries, each piece is queued on its bank, and done is called once,
// when the last piece completes. It returns that completion time. Work is
// O(min(pieces, banks)), independent of the byte count.
func (b *Banked) Access(addr, n int64, done func()) Time {
	if addr < 0 || n < 0 {
		b.sim.Fail(fmt.Errorf("des: banked access at %d of %d bytes", addr, n))
		return b.sim.now
	}
	nb := int64(len(b.banks))
	// Bytes per bank for the range [addr, addr+n).
	per := make([]int64, nb)
	if n > 0 {
		first := addr / b.interleave
		last := (addr + n - 1) / b.interleave
		chunks := last - first + 1
		// Full rounds of nb chunks give every bank the same number of chunks.
		rounds := chunks / nb
		for i := range per {
			per[i] = rounds * b.interleave
		}
		for c := first + rounds*nb; c <= last; c++ {
			per[c%nb] += b.interleave
		}
		// Trim the partial first and last chunks.
		per[first%nb] -= addr - first*b.interleave
		per[last%nb] -= (last+1)*b.interleave - (addr + n)
	}
	end := b.sim.now
	for i, x := range per {
		if x == 0 {
			continue
		}
		bank := b.banks[i]
		if t := bank.Reserve(bank.rate.Duration(x), x); t > end {
			end = t
		}
	}
	if done != nil {
		b.sim.At(end, done)
	}
	return end
}

// AccessBank moves n bytes on one bank.
func (b *Banked) AccessBank(bank int, n int64, done func()) (Time, error) {
	if bank < 0 || bank >= len(b.banks) {
		return 0, fmt.Errorf("des: bank %d out of range 0..%d", bank, len(b.banks)-1)
	}
	return b.banks[bank].Transfer(n, done), nil
}

// Stats sums the banks' counters (Busy is summed bank-time; divide by Banks
// for an average utilization).
func (b *Banked) Stats() Stats {
	var s Stats
	for _, k := range b.banks {
		s.Requests += k.st.Requests
		s.Bytes += k.st.Bytes
		s.Busy += k.st.Busy
	}
	return s
}
