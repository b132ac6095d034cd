package mpcbench

import (
	"fmt"
	"time"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
	"github.com/rosemary-fhe/rosemary/optiprime/infer"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/model"
	"github.com/rosemary-fhe/rosemary/optiprime/nets"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// ProjectNetwork counts every linear layer of a network under a protocol
// with the real plans (package nets) and projects its time: computation
// from the unit costs, transfer and propagation from the link model with
// one upload and one download flight per layer instance. The last row is
// the network total. Nonlinear layers are not included.
func ProjectNetwork(n nets.Network, proto linear.Protocol, params cheetah.Parameters, opt linear.Options, u Units) ([]Row, error) {
	_, layers, err := nets.Count(n, proto, params, opt)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", n.Name, err)
	}
	total := Row{Kind: Projected, Network: n.Name, Protocol: proto.String(), Layer: "total", LogN: params.LogN()}
	var rows []Row
	var totalCompute time.Duration
	for _, lc := range layers {
		r := Row{Kind: Projected, Network: n.Name, Protocol: proto.String(), Layer: lc.Layer, LogN: params.LogN(),
			Count: lc.Count, Counters: lc.Counters, Flights: 2 * int64(lc.Count)}
		compute := u.Compute(lc.Counters)
		r.CPUS = compute.Seconds()
		if err := r.project(compute); err != nil {
			return nil, err
		}
		rows = append(rows, r)
		total.Count += lc.Count
		total.addTraffic(r)
		totalCompute += compute
	}
	total.CPUS = totalCompute.Seconds()
	if err := total.project(totalCompute); err != nil {
		return nil, err
	}
	return append(rows, total), nil
}

// MNISTRows turns a private-inference session's per-layer measurements
// into rows, per image: the HE linear layer (plan counters, traffic as
// measured, the client's wall time, which in an in-process run includes
// the server's computation) and, separately, the truncation/ReLU (or the
// final reveal) that follows it; then the total.
func MNISTRows(st infer.Stats) []Row {
	if st.Images == 0 {
		return nil
	}
	n := float64(st.Images)
	per := func(v uint64) int64 { return int64(float64(v)/n + 0.5) }
	total := Row{Kind: Measured, Network: "mnist-cnn", Protocol: st.Protocol, Layer: "total", LogN: st.LogN, Count: 1}
	var rows []Row
	var totalS float64
	for i, l := range st.Layers {
		lin := Row{Kind: Measured, Network: "mnist-cnn", Protocol: st.Protocol, Layer: l.Layer, LogN: st.LogN, Count: 1,
			Counters: l.Plan, Flights: per(l.Linear.Flights), CPUS: l.LinearS / n}
		lin.BytesC2S, lin.BytesS2C = per(l.Linear.BytesC2S), per(l.Linear.BytesS2C)
		name := l.Layer + "/trunc+relu"
		if i == len(st.Layers)-1 {
			name = l.Layer + "/reveal"
		}
		nl := Row{Kind: Measured, Network: "mnist-cnn", Protocol: st.Protocol, Layer: name, LogN: st.LogN, Count: 1,
			Flights: per(l.Nonlinear.Flights), CPUS: l.NonlinS / n}
		nl.BytesC2S, nl.BytesS2C = per(l.Nonlinear.BytesC2S), per(l.Nonlinear.BytesS2C)
		for _, r := range []*Row{&lin, &nl} {
			_ = r.project(time.Duration(r.CPUS * float64(time.Second)))
			rows = append(rows, *r)
			total.addTraffic(*r)
			totalS += r.CPUS
		}
	}
	total.CPUS = totalS
	_ = total.project(time.Duration(totalS * float64(time.Second)))
	return append(rows, total)
}

// Config selects what Run measures.
type Config struct {
	Protocols   []linear.Protocol
	PaperLayer  bool // run the ResNet-18 paper layer for real (N = 8192)
	Networks    []nets.Network
	MNISTImages int // private inference on this many test images per protocol (0: skip)
	UnitRounds  int
	Progress    func(msg string)
}

// Report is everything `rosemary mpc bench` prints.
type Report struct {
	Units   Units           `json:"units"`
	Options linear.Options  `json:"options"`
	Rows    []Row           `json:"rows"`
	MNIST   []*infer.Report `json:"mnist,omitempty"`
}

// Run measures and projects as configured. The paper layer and the
// networks use N = 8192 and nets.PaperOptions (ℓ = 21, 8-bit weights);
// the MNIST runs use the committed model and infer.DefaultLogN.
func Run(cfg Config) (*Report, error) {
	say := cfg.Progress
	if say == nil {
		say = func(string) {}
	}
	if len(cfg.Protocols) == 0 {
		cfg.Protocols = linear.Protocols
	}
	params, err := cheetah.NewParameters(cheetah.PN13)
	if err != nil {
		return nil, err
	}
	opt := nets.PaperOptions
	rounds := max(cfg.UnitRounds, 1)
	say("unit costs")
	u, err := MeasureUnits(params, opt.LogT+5, rounds)
	if err != nil {
		return nil, err
	}
	rep := &Report{Units: u, Options: opt}
	if cfg.PaperLayer {
		pl := nets.PaperLayer()
		for _, p := range cfg.Protocols {
			say("paper layer, " + p.String())
			r, err := MeasureLayer("resnet18", pl.Name, p, params, pl.Shape, opt, &u)
			if err != nil {
				return nil, err
			}
			rep.Rows = append(rep.Rows, r)
		}
	}
	for _, n := range cfg.Networks {
		for _, p := range cfg.Protocols {
			say(n.Name + ", " + p.String())
			rows, err := ProjectNetwork(n, p, params, opt, u)
			if err != nil {
				return nil, err
			}
			rep.Rows = append(rep.Rows, rows...)
		}
	}
	if cfg.MNISTImages > 0 {
		q, err := model.Default()
		if err != nil {
			return nil, err
		}
		d, err := model.TestSubset()
		if err != nil {
			return nil, err
		}
		d = d.Subset(cfg.MNISTImages)
		for _, p := range cfg.Protocols {
			say("MNIST private inference, " + p.String())
			r, err := mnistRun(q, d, p)
			if err != nil {
				return nil, err
			}
			rep.MNIST = append(rep.MNIST, r)
			rep.Rows = append(rep.Rows, MNISTRows(r.Stats)...)
		}
	}
	return rep, nil
}

// mnistRun runs a session in-process over a pipe.
func mnistRun(q *model.Quantized, d model.Dataset, p linear.Protocol) (*infer.Report, error) {
	cc, sc := transport.Pipe()
	done := make(chan error, 1)
	go func() { _, err := infer.Serve(sc, q); done <- err }()
	r, err := infer.Evaluate(cc, infer.Config{Protocol: p}, d, q, nil)
	if err != nil {
		sc.Close()
		<-done
		return nil, err
	}
	if err := <-done; err != nil {
		return nil, fmt.Errorf("bench: server: %w", err)
	}
	return r, nil
}
