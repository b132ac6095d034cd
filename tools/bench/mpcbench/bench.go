package mpcbench

import (
	"fmt"
	"time"

	"github.com/rosemary-fhe/rosemary/internal/timing"
	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
	"github.com/rosemary-fhe/rosemary/optiprime/infer"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/link"
	"github.com/rosemary-fhe/rosemary/optiprime/share"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// Kinds of rows.
const (
	Measured  = "measured"  // run for real here, traffic counted on a transport
	Projected = "projected" // counters from the real plan, time from measured unit costs
)

// Row is the cost of one linear layer (or a network total) under one
// protocol.
type Row struct {
	Kind     string `json:"kind"`
	Network  string `json:"network"`
	Protocol string `json:"protocol"`
	Layer    string `json:"layer"`
	LogN     int    `json:"log_n"`
	Count    int    `json:"count,omitempty"` // repetitions summed into the row
	// The plan's counters, with the bytes as measured on measured rows;
	// embedded, so that the JSON fields stay flat (output_cts … bytes_s2c).
	linear.Counters
	Flights int64   `json:"flights"`
	CPUS    float64 `json:"cpu_s"`
	LANS    float64 `json:"lan_s"`
	WANS    float64 `json:"wan_s"`
	// Measured rows only.
	WallS      float64 `json:"wall_s,omitempty"`          // wall time of the same work (≥ cpu_s on a loaded machine)
	PrepS      float64 `json:"prep_s,omitempty"`          // weight encoding (offline), not in cpu_s
	ProjectedS float64 `json:"projected_cpu_s,omitempty"` // the unit-cost model for the same layer
	Verified   bool    `json:"verified,omitempty"`        // output shares add up to the plaintext convolution
}

func (r *Row) project(compute time.Duration) error {
	t := link.Traffic{BytesC2S: uint64(r.BytesC2S), BytesS2C: uint64(r.BytesS2C), Flights: uint64(r.Flights)}
	lan, err := link.LAN.Project(t, compute)
	if err != nil {
		return err
	}
	wan, err := link.WAN.Project(t, compute)
	if err != nil {
		return err
	}
	r.LANS, r.WANS = lan.TotalS, wan.TotalS
	return nil
}

// addTraffic adds part's flights, HE counters and bytes to r, a total row.
func (r *Row) addTraffic(part Row) {
	r.Flights += part.Flights
	r.Counters.Add(part.Counters)
}

// ConvMod is the plaintext reference: conv(x; w) mod 2^logT (CHW input,
// OIHW weights, values mod 2^logT; grouped convolutions included).
func ConvMod(s linear.ConvShape, w, x []uint64, logT int) []uint64 {
	mask := uint64(1)<<logT - 1
	g := max(s.Groups, 1)
	cig, cog := s.Ci/g, s.Co/g
	oh, ow := s.OutH(), s.OutW()
	out := make([]uint64, s.OutputLen())
	for o := 0; o < s.Co; o++ {
		grp := o / cog
		for y := 0; y < oh; y++ {
			for xx := 0; xx < ow; xx++ {
				var acc uint64
				for c := 0; c < cig; c++ {
					ci := grp*cig + c
					for ky := 0; ky < s.Kh; ky++ {
						iy := y*s.Stride + ky - s.Pad
						if iy < 0 || iy >= s.H {
							continue
						}
						for kx := 0; kx < s.Kw; kx++ {
							ix := xx*s.Stride + kx - s.Pad
							if ix < 0 || ix >= s.W {
								continue
							}
							acc += w[((o*cig+c)*s.Kh+ky)*s.Kw+kx] * x[(ci*s.H+iy)*s.W+ix]
						}
					}
				}
				out[(o*oh+y)*ow+xx] = acc & mask
			}
		}
	}
	return out
}

// MeasureLayer runs one layer for real: random weights within the public
// bound and random shares of a random input, the client's messages and the
// server's replies through a transport pipe (so bytes and flights are
// counted as on TCP), and checks that the output shares add up to the
// plaintext convolution. cpu_s is the single-threaded CPU time (thread
// CPU clock on Linux, else wall time) of the client's encryption, the
// server's evaluation and the client's decryption, wall_s the wall time of
// the same; the weight encoding, done once offline, is prep_s.
func MeasureLayer(network, layer string, proto linear.Protocol, params cheetah.Parameters, s linear.ConvShape, opt linear.Options, units *Units) (Row, error) {
	pl, err := linear.NewPlan(proto, params, s, opt)
	if err != nil {
		return Row{}, err
	}
	ring, err := share.NewRing(opt.LogT)
	if err != nil {
		return Row{}, err
	}
	prg, err := share.NewPRG()
	if err != nil {
		return Row{}, err
	}
	wb := opt.WeightBits
	if wb == 0 {
		wb = opt.LogT
	}
	w := make([]uint64, s.WeightLen())
	for i := range w { // centered values in [-2^(wb-1), 2^(wb-1))
		w[i] = ring.FromSigned(int64(prg.Uint64()>>(64-wb)) - int64(1)<<(wb-1))
	}
	x := prg.Uniform(ring, s.InputLen())
	xs, xc := ring.Split(prg, x)

	client := linear.NewClient(params)
	gks, err := client.GaloisKeys(pl)
	if err != nil {
		return Row{}, err
	}
	ev := cheetah.NewEvaluator(params, client.Keys.PK, gks)
	t0 := time.Now()
	ws, err := pl.PrepareWeights(ev, w)
	if err != nil {
		return Row{}, err
	}
	prep := time.Since(t0)

	cc, sc := transport.Pipe()
	defer cc.Close()
	defer sc.Close()
	const (
		typeIn  = 0x48 // frame types of this measurement (infer's range)
		typeOut = 0x49
	)
	// The timed part: both parties' online work, in this goroutine.
	var ys []uint64
	online := func() ([]uint64, error) {
		up, err := pl.EncryptInput(client, xc)
		if err != nil {
			return nil, err
		}
		if err := cc.Send(typeIn, infer.EncodeMessages(up)); err != nil {
			return nil, err
		}
		b, err := sc.RecvType(typeIn)
		if err != nil {
			return nil, err
		}
		in, err := infer.DecodeMessages(b)
		if err != nil {
			return nil, err
		}
		var down [][]byte
		down, ys, err = pl.EvaluatePrepared(ev, ws, nil, xs, in)
		if err != nil {
			return nil, err
		}
		if err := sc.Send(typeOut, infer.EncodeMessages(down)); err != nil {
			return nil, err
		}
		if b, err = cc.RecvType(typeOut); err != nil {
			return nil, err
		}
		if down, err = infer.DecodeMessages(b); err != nil {
			return nil, err
		}
		return pl.DecryptOutput(client, down)
	}
	var yc []uint64
	sample, err := timing.Batch(1, func() (err error) { yc, err = online(); return err })
	cpu, wall := sample.CPUOrWall(), sample.Wall
	if err != nil {
		return Row{}, err
	}

	got, err := ring.Reconstruct(yc, ys)
	if err != nil {
		return Row{}, err
	}
	want := ConvMod(s, w, x, opt.LogT)
	for i := range want {
		if got[i] != want[i] {
			return Row{}, fmt.Errorf("bench: %s %v: output %d is %d, plaintext convolution %d", layer, proto, i, got[i], want[i])
		}
	}
	st := cc.Stats()
	r := Row{Kind: Measured, Network: network, Protocol: proto.String(), Layer: layer, LogN: params.LogN(), Count: 1, Counters: pl.Counters,
		Flights: int64(st.Flights), CPUS: cpu.Seconds(), WallS: wall.Seconds(), PrepS: prep.Seconds(), Verified: true}
	r.BytesC2S, r.BytesS2C = int64(st.BytesC2S), int64(st.BytesS2C) // as sent, framing included
	if units != nil {
		r.ProjectedS = units.Compute(pl.Counters).Seconds()
	}
	return r, r.project(cpu)
}
