package fpga

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/nets"
)

// LayerResult compares the two dataflows on one layer.
type LayerResult struct {
	// Provenance labels every figure of the comparison ("simulated").
	Provenance string           `json:"provenance"`
	Network    string           `json:"network,omitempty"`
	Layer      string           `json:"layer"`
	Count      int              `json:"count"` // repetitions in the network
	Shape      linear.ConvShape `json:"shape"`
	PlanBaby   int              `json:"plan_baby"` // B the optiprime/linear plan chose (0: no BSGS)
	Workload   Workload         `json:"workload"`  // at the computation-efficient B both dataflows use
	Split      Result           `json:"bsgs_split"`
	Flow       Result           `json:"optiflow"`
	// TrafficRatio = OptiFlow HBM bytes / BSGS split HBM bytes;
	// SpeedUp = BSGS split latency / OptiFlow latency.
	TrafficRatio float64 `json:"traffic_ratio"`
	SpeedUp      float64 `json:"speedup"`
}

// CompareWorkload runs both dataflows on w re-split at the
// computation-efficient baby-step count.
func CompareWorkload(w Workload, c Config) (LayerResult, error) {
	ce, err := ComputeEfficient(w, c)
	if err != nil {
		return LayerResult{}, err
	}
	split, err := RunBSGSSplit(ce, c)
	if err != nil {
		return LayerResult{}, err
	}
	flow, err := RunOptiFlow(ce, c)
	if err != nil {
		return LayerResult{}, err
	}
	return LayerResult{Provenance: "simulated", PlanBaby: w.PlanBaby(), Workload: ce, Split: split, Flow: flow,
		TrafficRatio: flow.HBMBytes / split.HBMBytes, SpeedUp: split.LatencyS / flow.LatencyS}, nil
}

// CompareLayer plans a layer under OptiEncode-BSGS and compares the
// dataflows.
func CompareLayer(l nets.Layer, params cheetah.Parameters, opt linear.Options, c Config) (LayerResult, error) {
	pl, err := linear.NewPlan(linear.OptiEncodeBSGS, params, l.Shape, opt)
	if err != nil {
		return LayerResult{}, fmt.Errorf("fpga: %s: %w", l.Name, err)
	}
	w, err := FromPlan(pl)
	if err != nil {
		return LayerResult{}, fmt.Errorf("fpga: %s: %w", l.Name, err)
	}
	r, err := CompareWorkload(w, c)
	if err != nil {
		return LayerResult{}, fmt.Errorf("fpga: %s: %w", l.Name, err)
	}
	r.Layer, r.Count, r.Shape = l.Name, l.Count, l.Shape
	return r, nil
}

// NetworkResult sums a network's convolution layers.
type NetworkResult struct {
	Network string `json:"network"`
	// Provenance labels every modeled figure below ("simulated").
	Provenance    string        `json:"provenance"`
	Layers        []LayerResult `json:"layers"`
	SplitHBMBytes float64       `json:"bsgs_split_hbm_bytes"`
	FlowHBMBytes  float64       `json:"optiflow_hbm_bytes"`
	SplitLatencyS float64       `json:"bsgs_split_latency_s"`
	FlowLatencyS  float64       `json:"optiflow_latency_s"`
	TrafficRatio  float64       `json:"traffic_ratio"`
	SpeedUp       float64       `json:"speedup"`
	SkippedLayers []string      `json:"skipped_layers,omitempty"` // fully-connected layers (not convolutions)
	// Paper is the OptiPrime paper's own figure for the network, quoted
	// (not modeled), when it gives one.
	Paper *PaperFigure `json:"paper,omitempty"`
}

// PaperFigure is a figure quoted from the OptiPrime paper beside the model.
type PaperFigure struct {
	// EndToEndS is the paper's whole private inference with its FPGA:
	// ResNet-18 2.9 s, ResNet-50 14.6 s (§I). It includes both parties'
	// CPU work (encryption, the nonlinear MPC layers) and the network; the
	// model covers only the accelerator's HE convolutions, and the paper
	// does not report that part alone.
	EndToEndS float64 `json:"end_to_end_s"`
	// LinearShare is the modeled OptiFlow latency over EndToEndS: the
	// fraction of the paper's inference the accelerator's linear layers
	// would take on the modeled device.
	LinearShare float64 `json:"modeled_linear_share"`
	Note        string  `json:"note"`
}

// paperEndToEnd are the paper's whole-inference latencies with its FPGA (§I).
var paperEndToEnd = map[string]float64{"resnet18": 2.9, "resnet50": 14.6}

// isFC matches linear.FCShape (a 1×1 convolution on a 1×1 image).
func isFC(s linear.ConvShape) bool { return s.H == 1 && s.W == 1 && s.Kh == 1 && s.Kw == 1 }

// netLayer is one convolution of a network with its plan's workload.
type netLayer struct {
	layer nets.Layer
	w     Workload
}

// networkWorkloads plans every convolution layer of n (FC layers are
// returned apart), each shape once.
func networkWorkloads(n nets.Network, params cheetah.Parameters, opt linear.Options) ([]netLayer, []string, error) {
	var out []netLayer
	var skipped []string
	cache := map[linear.ConvShape]Workload{}
	for _, l := range n.Layers {
		if isFC(l.Shape) {
			skipped = append(skipped, l.Name)
			continue
		}
		w, ok := cache[l.Shape]
		if !ok {
			pl, err := linear.NewPlan(linear.OptiEncodeBSGS, params, l.Shape, opt)
			if err != nil {
				return nil, nil, fmt.Errorf("fpga: %s: %s: %w", n.Name, l.Name, err)
			}
			if w, err = FromPlan(pl); err != nil {
				return nil, nil, fmt.Errorf("fpga: %s: %s: %w", n.Name, l.Name, err)
			}
			cache[l.Shape] = w
		}
		out = append(out, netLayer{l, w})
	}
	return out, skipped, nil
}

// compareLayers sums both dataflows over a network's planned layers.
func compareLayers(name string, layers []netLayer, c Config) (NetworkResult, error) {
	out := NetworkResult{Network: name, Provenance: "simulated"}
	for _, nl := range layers {
		r, err := CompareWorkload(nl.w, c)
		if err != nil {
			return out, fmt.Errorf("fpga: %s: %s: %w", name, nl.layer.Name, err)
		}
		r.Network, r.Layer, r.Count, r.Shape = name, nl.layer.Name, nl.layer.Count, nl.layer.Shape
		k := float64(nl.layer.Count)
		out.SplitHBMBytes += k * r.Split.HBMBytes
		out.FlowHBMBytes += k * r.Flow.HBMBytes
		out.SplitLatencyS += k * r.Split.LatencyS
		out.FlowLatencyS += k * r.Flow.LatencyS
		out.Layers = append(out.Layers, r)
	}
	if out.SplitHBMBytes > 0 {
		out.TrafficRatio = out.FlowHBMBytes / out.SplitHBMBytes
		out.SpeedUp = out.SplitLatencyS / out.FlowLatencyS
	}
	if e2e, ok := paperEndToEnd[name]; ok {
		out.Paper = &PaperFigure{EndToEndS: e2e, LinearShare: out.FlowLatencyS / e2e,
			Note: "quoted: the paper's whole inference with its FPGA (both CPUs, the MPC nonlinear layers, the network); modeled here: the accelerator's HE convolutions only"}
	}
	return out, nil
}

// CompareNetwork compares the dataflows on every convolution layer of n.
func CompareNetwork(n nets.Network, params cheetah.Parameters, opt linear.Options, c Config) (NetworkResult, error) {
	layers, skipped, err := networkWorkloads(n, params, opt)
	if err != nil {
		return NetworkResult{Network: n.Name}, err
	}
	out, err := compareLayers(n.Name, layers, c)
	out.SkippedLayers = skipped
	return out, err
}

// NetworkSweepPoint is a network's modeled latency at one lane factor.
type NetworkSweepPoint struct {
	Network      string  `json:"network"`
	Lanes        float64 `json:"lanes"` // factor on every cluster's lanes
	SplitLatency float64 `json:"bsgs_split_latency_s"`
	FlowLatency  float64 `json:"optiflow_latency_s"`
	SpeedUp      float64 `json:"speedup"`
	Bound        string  `json:"split_bound"` // the split's bound on most of its time: compute or memory
}

// SweepPoint is the paper layer under one varied parameter.
type SweepPoint struct {
	Value        float64 `json:"value"`
	SplitBytes   float64 `json:"bsgs_split_hbm_bytes"`
	FlowBytes    float64 `json:"optiflow_hbm_bytes"`
	SplitLatency float64 `json:"bsgs_split_latency_s"`
	FlowLatency  float64 `json:"optiflow_latency_s"`
}

// Report is the accelerator model's output.
type Report struct {
	Source     string          `json:"source"`
	Config     Config          `json:"config"`
	Params     string          `json:"params"`
	PaperLayer LayerResult     `json:"paper_layer"`
	Scratchpad []SweepPoint    `json:"scratchpad_sweep"`    // value: MiB
	Bandwidth  []SweepPoint    `json:"hbm_bandwidth_sweep"` // value: GB/s
	Lanes      []SweepPoint    `json:"lanes_sweep"`         // value: factor on every cluster's lanes
	Networks   []NetworkResult `json:"networks"`
	// NetworkLanes repeats each network at 1, 2, 4 and 8 times the lanes:
	// where the layers turn memory-bound, as the paper profiles them
	// (§IV-A), the reuse saves time.
	NetworkLanes []NetworkSweepPoint `json:"network_lanes_sweep"`
}

// Table compares the dataflows on the paper's ResNet-18 layer (with
// scratchpad and HBM-bandwidth sweeps) and on every convolution layer of
// networks (nil: nets.All()) at the given parameters (the paper's layer
// uses N = 8192: cheetah.PN13).
func Table(c Config, lit cheetah.Literal, networks []nets.Network) (Report, error) {
	if err := c.Validate(); err != nil {
		return Report{}, err
	}
	params, err := cheetah.NewParameters(lit)
	if err != nil {
		return Report{}, fmt.Errorf("fpga: %w", err)
	}
	if networks == nil {
		networks = nets.All()
	}
	opt := nets.PaperOptions
	r := Report{
		Source: "simulated: analytic FPGA model (optiprime/fpga) over optiprime/linear plans (OptiEncode-BSGS) of optiprime/nets layers",
		Config: c, Params: lit.Name,
	}
	if r.PaperLayer, err = CompareLayer(nets.PaperLayer(), params, opt, c); err != nil {
		return r, err
	}
	for _, mib := range []int64{8, 12, 16, 24, 32, 48, 64} {
		cc := c
		cc.ScratchpadBytes = mib << 20
		lr, err := CompareLayer(nets.PaperLayer(), params, opt, cc)
		if err != nil {
			continue // too small for a dataflow's buffers: omitted
		}
		r.Scratchpad = append(r.Scratchpad, SweepPoint{float64(mib), lr.Split.HBMBytes, lr.Flow.HBMBytes, lr.Split.LatencyS, lr.Flow.LatencyS})
	}
	for _, gbs := range []float64{115, 230, 460, 920, 1840} {
		cc := c
		cc.HBMBytesPerSec = gbs * 1e9
		lr, err := CompareLayer(nets.PaperLayer(), params, opt, cc)
		if err != nil {
			return r, err
		}
		r.Bandwidth = append(r.Bandwidth, SweepPoint{gbs, lr.Split.HBMBytes, lr.Flow.HBMBytes, lr.Split.LatencyS, lr.Flow.LatencyS})
	}
	for _, k := range []int{1, 2, 4, 8} {
		lr, err := CompareLayer(nets.PaperLayer(), params, opt, c.withLanes(k))
		if err != nil {
			return r, err
		}
		r.Lanes = append(r.Lanes, SweepPoint{float64(k), lr.Split.HBMBytes, lr.Flow.HBMBytes, lr.Split.LatencyS, lr.Flow.LatencyS})
	}
	for _, n := range networks {
		layers, skipped, err := networkWorkloads(n, params, opt)
		if err != nil {
			return r, err
		}
		nr, err := compareLayers(n.Name, layers, c)
		if err != nil {
			return r, err
		}
		nr.SkippedLayers = skipped
		r.Networks = append(r.Networks, nr)
		for _, k := range []int{1, 2, 4, 8} {
			lr, err := compareLayers(n.Name, layers, c.withLanes(k))
			if err != nil {
				return r, err
			}
			r.NetworkLanes = append(r.NetworkLanes, NetworkSweepPoint{n.Name, float64(k),
				lr.SplitLatencyS, lr.FlowLatencyS, lr.SpeedUp, splitBound(lr)})
		}
	}
	return r, nil
}

// splitBound is the bound of the split's layers holding most of its time.
func splitBound(nr NetworkResult) string {
	var mem float64
	for _, l := range nr.Layers {
		if l.Split.Bound == "memory" {
			mem += float64(l.Count) * l.Split.LatencyS
		}
	}
	if mem > nr.SplitLatencyS/2 {
		return "memory"
	}
	return "compute"
}
