package fpga

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/nets"
)

// LayerResult compares the two dataflows on one layer.
type LayerResult struct {
	Network  string           `json:"network,omitempty"`
	Layer    string           `json:"layer"`
	Count    int              `json:"count"` // repetitions in the network
	Shape    linear.ConvShape `json:"shape"`
	PlanBaby int              `json:"plan_baby"` // B the optiprime/linear plan chose (0: no BSGS)
	Workload Workload         `json:"workload"`  // at the computation-efficient B both dataflows use
	Split    Result           `json:"bsgs_split"`
	Flow     Result           `json:"optiflow"`
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
	return LayerResult{PlanBaby: w.PlanBaby(), Workload: ce, Split: split, Flow: flow,
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
	Network       string        `json:"network"`
	Layers        []LayerResult `json:"layers"`
	SplitHBMBytes float64       `json:"bsgs_split_hbm_bytes"`
	FlowHBMBytes  float64       `json:"optiflow_hbm_bytes"`
	SplitLatencyS float64       `json:"bsgs_split_latency_s"`
	FlowLatencyS  float64       `json:"optiflow_latency_s"`
	TrafficRatio  float64       `json:"traffic_ratio"`
	SpeedUp       float64       `json:"speedup"`
	SkippedLayers []string      `json:"skipped_layers,omitempty"` // fully-connected layers (not convolutions)
}

// isFC matches linear.FCShape (a 1×1 convolution on a 1×1 image).
func isFC(s linear.ConvShape) bool { return s.H == 1 && s.W == 1 && s.Kh == 1 && s.Kw == 1 }

// CompareNetwork compares the dataflows on every convolution layer of n.
func CompareNetwork(n nets.Network, params cheetah.Parameters, opt linear.Options, c Config) (NetworkResult, error) {
	out := NetworkResult{Network: n.Name}
	cache := map[linear.ConvShape]LayerResult{}
	for _, l := range n.Layers {
		if isFC(l.Shape) {
			out.SkippedLayers = append(out.SkippedLayers, l.Name)
			continue
		}
		r, ok := cache[l.Shape]
		if !ok {
			var err error
			if r, err = CompareLayer(l, params, opt, c); err != nil {
				return out, fmt.Errorf("fpga: %s: %w", n.Name, err)
			}
			cache[l.Shape] = r
		}
		r.Network, r.Layer, r.Count = n.Name, l.Name, l.Count
		k := float64(l.Count)
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
	return out, nil
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
		cc := c
		cc.NTTButterflies *= k
		cc.ModMulLanes *= k
		cc.AutLanes *= k
		cc.ModAddLanes *= k
		lr, err := CompareLayer(nets.PaperLayer(), params, opt, cc)
		if err != nil {
			return r, err
		}
		r.Lanes = append(r.Lanes, SweepPoint{float64(k), lr.Split.HBMBytes, lr.Flow.HBMBytes, lr.Split.LatencyS, lr.Flow.LatencyS})
	}
	for _, n := range networks {
		nr, err := CompareNetwork(n, params, opt, c)
		if err != nil {
			return r, err
		}
		r.Networks = append(r.Networks, nr)
	}
	return r, nil
}
