package e2e

import (
	"time"

	"github.com/rosemary-fhe/rosemary/optiprime/graph"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// Class splits the cost: HE linear layers, OT nonlinear layers, local
// share arithmetic.
const (
	ClassLinear    = "linear"
	ClassNonlinear = "nonlinear"
	ClassLocal     = "local"
)

// class is op i's class; a truncation deferred past a ReLU, and a ReLU
// run after its max-pool (fuse.go), are local here and their costs count
// under the operation that runs them.
func (s *session) class(i int, op graph.Op) string {
	switch {
	case op.Kind == graph.Conv:
		return ClassLinear
	case op.Kind == graph.Add, op.Kind == graph.Trunc && s.owed[i+1] != 0, op.Kind == graph.ReLU && s.pooled[i]:
		return ClassLocal
	}
	return ClassNonlinear
}

// OpStats are one operation's costs.
type OpStats struct {
	Op         string           `json:"op"`
	Kind       string           `json:"kind"`
	Class      string           `json:"class"`
	Elements   int              `json:"elements"` // output entries
	WallS      float64          `json:"wall_s"`   // client's wall clock, peer waits included
	ServerS    float64          `json:"server_wall_s"`
	ServerCPUS float64          `json:"server_cpu_s"`
	ClientCPUS float64          `json:"client_cpu_s"`
	PrepS      float64          `json:"server_prep_s,omitempty"`     // weight encoding (server wall, inside server_wall_s)
	PrepCPUS   float64          `json:"server_prep_cpu_s,omitempty"` // ... its CPU time (inside server_cpu_s)
	BytesC2S   uint64           `json:"bytes_c2s"`
	BytesS2C   uint64           `json:"bytes_s2c"`
	Flights    uint64           `json:"flights"`
	Rounds     uint64           `json:"rounds"`
	HE         *linear.Counters `json:"he,omitempty"`      // plan counters (convolutions)
	Variant    string           `json:"variant,omitempty"` // the layout a convolution ran (linear.Plan.Variant)
}

// serverOp is what the server reports per operation.
type serverOp struct {
	WallS    float64 `json:"wall_s"`
	CPUS     float64 `json:"cpu_s"`
	PrepS    float64 `json:"prep_s"`
	PrepCPUS float64 `json:"prep_cpu_s"`
}

// serverReport is the server's closing frame.
type serverReport struct {
	SetupCPUS float64        `json:"setup_cpu_s"`
	Ops       []serverOp     `json:"ops"`
	CPUS      float64        `json:"cpu_s"`
	Profile   PartyBreakdown `json:"profile"`
	AheadCPUS float64        `json:"prepared_ahead_cpu_s,omitempty"`
	Streamed  int64          `json:"weights_streamed_bytes,omitempty"`
}

// Part sums a class of operations.
type Part struct {
	WallS      float64 `json:"wall_s"`
	PrepS      float64 `json:"server_prep_s,omitempty"`     // weight encoding (linear; input-independent)
	PrepCPUS   float64 `json:"server_prep_cpu_s,omitempty"` // ... its server CPU time
	ServerCPUS float64 `json:"server_cpu_s"`
	ClientCPUS float64 `json:"client_cpu_s"`
	Bytes      uint64  `json:"bytes"`
	Rounds     uint64  `json:"rounds"`
}

// Report is a session's outcome.
type Report struct {
	Net        string  `json:"net"`
	Protocol   string  `json:"protocol"`
	LogN       int     `json:"log_n"`
	LogT       int     `json:"log_t"`
	Correct    bool    `json:"correct"`    // output = plaintext reference, every entry
	Mismatches int     `json:"mismatches"` // entries that differ
	Outputs    int     `json:"outputs"`
	TotalBytes uint64  `json:"total_bytes"` // setup included
	BytesC2S   uint64  `json:"bytes_c2s"`
	BytesS2C   uint64  `json:"bytes_s2c"`
	WallS      float64 `json:"wall_s"` // client wall clock, setup included
	Rounds     uint64  `json:"rounds"` // ⌈flights/2⌉, setup included
	Flights    uint64  `json:"flights"`
	LinearS    float64 `json:"linear_s"`    // wall time in HE layers
	NonlinearS float64 `json:"nonlinear_s"` // wall time in OT layers
	LocalS     float64 `json:"local_s"`
	SetupS     float64 `json:"setup_s"` // hello, keys, OT base OTs (wall)
	SetupBytes uint64  `json:"setup_bytes"`
	ServerCPUS float64 `json:"server_cpu_s"` // whole session
	// ServerAheadCPUS is the server's weight encoding for this choice done
	// before the session (Server.Prepare; offline, not in server_cpu_s).
	ServerAheadCPUS float64 `json:"server_prepared_ahead_cpu_s,omitempty"`
	// ServerWeightsStreamed is the bytes of weight files the server read
	// during the session (Server.PrepareDir: encoded ahead, on disk, read
	// one layer ahead); 0 when the weights were held or encoded in session.
	ServerWeightsStreamed int64   `json:"server_weights_streamed_bytes,omitempty"`
	ClientCPUS            float64 `json:"client_cpu_s"`
	Linear                Part    `json:"linear"`
	Nonlinear             Part    `json:"nonlinear"`
	// HE is the sum of the convolutions' plan counters.
	HE linear.Counters `json:"he"`
	// Profile is where each party's time went, by kind (profile.go).
	Profile Breakdown `json:"profile"`
	Layers  []OpStats `json:"layers"`
}

// watch measures one step on one party: wall time, process CPU time and
// connection traffic.
type watch struct {
	conn *transport.Conn
	t0   time.Time
	cpu0 time.Duration
	s0   transport.Stats
}

func startWatch(conn *transport.Conn) watch {
	cpu, _ := processCPU()
	return watch{conn: conn, t0: time.Now(), cpu0: cpu, s0: conn.Stats()}
}

func (w watch) stop() (wall, cpu float64, st transport.Stats) {
	c, _ := processCPU()
	return time.Since(w.t0).Seconds(), (c - w.cpu0).Seconds(), w.conn.Stats().Sub(w.s0)
}

// finish fills the totals from the layers.
func (r *Report) finish() {
	r.Linear, r.Nonlinear = Part{}, Part{}
	r.HE = linear.Counters{}
	r.LinearS, r.NonlinearS, r.LocalS = 0, 0, 0
	for _, l := range r.Layers {
		var p *Part
		switch l.Class {
		case ClassLinear:
			p = &r.Linear
			r.LinearS += l.WallS
			if l.HE != nil {
				r.HE.Add(*l.HE)
			}
		case ClassNonlinear:
			p = &r.Nonlinear
			r.NonlinearS += l.WallS
		default:
			r.LocalS += l.WallS
			continue
		}
		p.WallS += l.WallS
		p.PrepS += l.PrepS
		p.PrepCPUS += l.PrepCPUS
		p.ServerCPUS += l.ServerCPUS
		p.ClientCPUS += l.ClientCPUS
		p.Bytes += l.BytesC2S + l.BytesS2C
		p.Rounds += l.Rounds
	}
}
