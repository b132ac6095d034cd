package pcie

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/sim/eventsim"
)

// Direction of a transfer.
type Direction int

// Directions.
const (
	ToDevice Direction = iota // host -> SSD (MQSim WRITE_REQ)
	ToHost                    // SSD -> host (MQSim READ_COMP)
)

func (d Direction) String() string {
	if d == ToDevice {
		return "to-device"
	}
	return "to-host"
}

func check(cfg arch.Link) error {
	if cfg.Lanes <= 0 || cfg.MaxPayloadBytes <= 0 || cfg.GTps <= 0 || cfg.EncodingNum <= 0 || cfg.EncodingDen <= 0 ||
		cfg.TLPHeaderBytes < 0 || cfg.DLLPBytes < 0 || cfg.PHYBytes < 0 || cfg.GTps > 1e4 {
		return fmt.Errorf("pcie: invalid link %+v", cfg)
	}
	return nil
}

// WireBytes is the bytes on the wire (all lanes together) for a message of
// payload bytes, MQSim's formula.
func WireBytes(cfg arch.Link, payload int64) int64 { return cfg.WireBytes(payload) }

// ReadRequestWireBytes is the wire size of a memory-read request TLP (no
// payload; MQSim charges the overhead plus 4 bytes).
func ReadRequestWireBytes(cfg arch.Link) int64 { return int64(cfg.PacketOverheadBytes()) + 4 }

// LaneRate is one lane's post-encoding byte rate as an exact ratio: in
// 8*den microseconds a lane carries MT/s * num bytes.
func LaneRate(cfg arch.Link) (eventsim.Rate, error) {
	if err := check(cfg); err != nil {
		return eventsim.Rate{}, err
	}
	mtps := int64(cfg.GTps*1000 + 0.5)
	return eventsim.Rate{Bytes: mtps * int64(cfg.EncodingNum), Per: eventsim.Time(8*cfg.EncodingDen) * eventsim.Microsecond}, nil
}

// TransferTime is the time the link is busy for one message of payload
// bytes: ceil(WireBytes/lanes) bytes at one lane's rate.
func TransferTime(cfg arch.Link, payload int64) (eventsim.Time, error) {
	r, err := LaneRate(cfg)
	if err != nil {
		return 0, err
	}
	return r.Duration(perLane(cfg, WireBytes(cfg, payload))), nil
}

func perLane(cfg arch.Link, wire int64) int64 {
	l := int64(cfg.Lanes)
	return (wire + l - 1) / l
}

// EffectiveGBps is the payload bandwidth of long transfers: the lanes' post-
// encoding rate times the TLP efficiency MPS / (MPS + overhead).
func EffectiveGBps(cfg arch.Link) float64 { return cfg.EffectiveGBps() }

// Stats are one direction's counters.
type Stats struct {
	Messages     uint64
	PayloadBytes int64
	WireBytes    int64
	Busy         eventsim.Time
}

// Link is a full-duplex PCIe link on a simulator: one FIFO server per
// direction.
type Link struct {
	cfg  arch.Link
	sim  *eventsim.Sim
	rate eventsim.Rate
	dir  [2]*eventsim.Server
	wire [2]int64
}

// New returns a link with the given configuration.
func New(sim *eventsim.Sim, cfg arch.Link) (*Link, error) {
	r, err := LaneRate(cfg)
	if err != nil {
		return nil, err
	}
	l := &Link{cfg: cfg, sim: sim, rate: r}
	l.dir[ToDevice] = eventsim.NewServer(sim, "pcie.to-device", r)
	l.dir[ToHost] = eventsim.NewServer(sim, "pcie.to-host", r)
	return l, nil
}

// Config is the link's configuration.
func (l *Link) Config() arch.Link { return l.cfg }

// Send queues a message of payload bytes in direction d (FIFO behind earlier
// messages in that direction) and calls done when its last byte arrives. It
// returns the arrival time.
func (l *Link) Send(d Direction, payload int64, done func()) (eventsim.Time, error) {
	if d != ToDevice && d != ToHost {
		return 0, fmt.Errorf("pcie: invalid direction %d", int(d))
	}
	if payload < 0 {
		return 0, fmt.Errorf("pcie: negative payload %d", payload)
	}
	w := WireBytes(l.cfg, payload)
	l.wire[d] += w
	end := l.dir[d].Reserve(l.rate.Duration(perLane(l.cfg, w)), payload)
	if done != nil {
		l.sim.At(end, done)
	}
	return end, nil
}

// Stats returns direction d's counters.
func (l *Link) Stats(d Direction) Stats {
	st := l.dir[d].Stats()
	return Stats{Messages: st.Requests, PayloadBytes: st.Bytes, WireBytes: l.wire[d], Busy: st.Busy}
}
