package system

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/sim/eventsim"
	"github.com/rosemary-fhe/rosemary/sim/pcie"
)

// System selects what runs the plan.
type System int

// Systems compared in the Rosemary paper.
const (
	// CPU runs every node on the host CPU (calibrated kernel costs, cpu.go);
	// stored data is streamed from the SSD over PCIe.
	CPU System = iota + 1
	// HA runs every node on the host FHE accelerator; stored data streams
	// NAND -> PCIe -> HBM at the link's full bandwidth (the paper's baseline).
	HA
	// INSPIRE is an ISP-only engine (inspire.go): every node in the SSD, no
	// host offload, no eDRAM scratchpad, no CLCAO beyond a fused
	// multiply-accumulate.
	INSPIRE
	// Rosemary follows the plan's placement.
	Rosemary
)

var systemNames = map[System]string{CPU: "cpu", HA: "ha", INSPIRE: "inspire", Rosemary: "rosemary"}

func (s System) String() string {
	if n, ok := systemNames[s]; ok {
		return n
	}
	return fmt.Sprintf("System(%d)", int(s))
}

// ParseSystem parses cpu, ha, inspire or rosemary (case-insensitive).
func ParseSystem(s string) (System, error) {
	for k, v := range systemNames {
		if strings.EqualFold(s, v) {
			return k, nil
		}
	}
	return 0, fmt.Errorf("system: unknown system %q (cpu, ha, inspire, rosemary)", s)
}

// Utilization is each resource's busy fraction of the run.
type Utilization struct {
	Host    float64 `json:"host"`     // host accelerator (HA, Rosemary) or CPU cores (CPU)
	NAND    float64 `json:"nand"`     // mean over flash channels
	DRAM    float64 `json:"dram"`     // the SSD's LPDDR
	Engine  float64 `json:"engine"`   // the in-storage FHE engine (AU array)
	PCIe    float64 `json:"pcie"`     // busier direction of the link
	HostMem float64 `json:"host_mem"` // host accelerator HBM
	SRAM    float64 `json:"sram"`
	EDRAM   float64 `json:"edram"`
}

// Report is the outcome of one simulated run. Every figure is simulated.
type Report struct {
	System      string            `json:"system"`
	Workload    string            `json:"workload"`
	Arch        string            `json:"arch"`
	Opt         compiler.OptLevel `json:"opt"`
	LatencyS    float64           `json:"latency_s"`
	PCIeBytes   int64             `json:"pcie_bytes"` // payload, both directions
	NANDBytes   int64             `json:"nand_bytes"` // flash pages read x page size
	DRAMBytes   int64             `json:"dram_bytes"` // LPDDR reads + writes
	HostMem     int64             `json:"host_mem_bytes"`
	Utilization Utilization       `json:"utilization"`
	EnergyJ     float64           `json:"energy_j"`
	AreaMM2     float64           `json:"area_mm2"`
	SimEvents   uint64            `json:"sim_events"`
	SimWallS    float64           `json:"sim_wall_s"`
	EventsPerS  float64           `json:"events_per_s"`
	Tiles       int64             `json:"tiles"`
	Notes       []string          `json:"notes,omitempty"`
}

// Options tune a run.
type Options struct {
	// MaxTiles caps the tiles (batches of consecutive instances) a node is
	// simulated in; 0 means DefaultMaxTiles.
	MaxTiles int
	// TileBudget bounds the tiles of the whole program: nodes get fewer
	// than MaxTiles tiles (at least 16) when there are many of them; 0
	// means DefaultTileBudget.
	TileBudget int
	// CPUCores is the number of cores the CPU baseline spreads kernels over
	// (perfect scaling assumed); 0 means 1, the calibration's single thread.
	CPUCores int
	// Timeline records per-resource busy intervals.
	Timeline bool
}

// DefaultMaxTiles bounds the event count: a node of any size is simulated
// in at most this many tiles (about 3 events each).
const DefaultMaxTiles = 1 << 14

// DefaultTileBudget bounds the whole program's tiles (about three events
// each): 2^20.
const DefaultTileBudget = 1 << 20

// Detail holds raw counters for tests and tools.
type Detail struct {
	Latency      eventsim.Time
	HostBusy     eventsim.Time
	EngineBusy   eventsim.Time
	EngineCycles int64
	DRAMBusy     eventsim.Time
	SRAMBusy     eventsim.Time
	EDRAMBusy    eventsim.Time
	HBMBusy      eventsim.Time
	NANDBusy     eventsim.Time // mean busy time per channel
	NANDPages    int64
	PCIe         [2]pcie.Stats // indexed by pcie.ToDevice, pcie.ToHost
}

// Result is a report with its raw counters and optional timeline.
type Result struct {
	Report   Report
	Detail   Detail
	Timeline *Timeline
}

// Simulate runs plan on the system sys built from a and reports the run.
func Simulate(plan *compiler.Plan, a *arch.Arch, sys System) (Report, error) {
	r, err := Run(plan, a, sys, Options{})
	if err != nil {
		return Report{}, err
	}
	return r.Report, nil
}

// Run is Simulate with options.
func Run(plan *compiler.Plan, a *arch.Arch, sys System, opt Options) (*Result, error) {
	if plan == nil || plan.Program == nil {
		return nil, errors.New("system: nil plan or plan without program")
	}
	if a == nil {
		return nil, errors.New("system: nil architecture")
	}
	if err := a.Validate(); err != nil {
		return nil, fmt.Errorf("system: %w", err)
	}
	if _, ok := systemNames[sys]; !ok {
		return nil, fmt.Errorf("system: unknown system %d", int(sys))
	}
	if len(plan.Placement) != len(plan.Program.Nodes) {
		return nil, fmt.Errorf("system: plan places %d of %d nodes", len(plan.Placement), len(plan.Program.Nodes))
	}
	if opt.MaxTiles == 0 {
		opt.MaxTiles = DefaultMaxTiles
	}
	if opt.MaxTiles < 1 || opt.MaxTiles > 1<<24 {
		return nil, fmt.Errorf("system: max tiles %d outside 1..2^24", opt.MaxTiles)
	}
	if opt.TileBudget == 0 {
		opt.TileBudget = DefaultTileBudget
	}
	if opt.TileBudget < 1 || opt.TileBudget > 1<<30 {
		return nil, fmt.Errorf("system: tile budget %d outside 1..2^30", opt.TileBudget)
	}
	if opt.CPUCores == 0 {
		opt.CPUCores = 1
	}
	if opt.CPUCores < 1 || opt.CPUCores > 4096 {
		return nil, fmt.Errorf("system: %d CPU cores outside 1..4096", opt.CPUCores)
	}
	hw := a
	if sys == INSPIRE {
		hw = inspireArch(a)
	}
	x, err := newExec(plan, hw, sys, opt)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := x.run(); err != nil {
		return nil, err
	}
	wall := time.Since(start).Seconds()
	res := x.result(wall)
	if sys == INSPIRE {
		res.Report.Notes = append([]string{inspireNote}, res.Report.Notes...)
	}
	return res, nil
}
