package arch

import (
	"errors"
	"fmt"
	"strings"
)

// Arch is one complete hardware description: host side, device side, link.
type Arch struct {
	Name        string `json:"name"`
	Description string `json:"description"`

	Host   HostAccel `json:"host"`
	Engine Engine    `json:"engine"`
	SRAM   SRAM      `json:"sram"`
	EDRAM  EDRAM     `json:"edram"`
	DRAM   DRAM      `json:"dram"`
	NAND   NAND      `json:"nand"`
	Link   Link      `json:"link"`

	// Components is the device-side area/power breakdown (Table V).
	Components []Component `json:"components"`
}

// HostAccel is a host-side FHE accelerator of the UFC/SHARP class: clusters
// of vector lanes with dedicated NTT, base-conversion, element-wise and
// automorphism units, a large on-chip scratchpad and HBM.
type HostAccel struct {
	Name            string  `json:"name"`
	Clusters        int     `json:"clusters"`
	LanesPerCluster int     `json:"lanes_per_cluster"`
	FreqMHz         int     `json:"freq_mhz"`
	WordBits        int     `json:"word_bits"`
	OnChipBytes     int64   `json:"on_chip_bytes"`
	HBMGBps         float64 `json:"hbm_gbps"`
	// NTTPipelined is true when the NTT unit holds all log N stages in
	// hardware, so it accepts Lanes coefficients per cycle (one limb every
	// N/Lanes cycles) instead of iterating stage by stage.
	NTTPipelined bool `json:"ntt_pipelined"`
	// BConvWordsPerCycle and EWWordsPerCycle are the base-conversion and
	// element-wise units' throughputs when they differ from one word per
	// lane per cycle (SHARP's BConv unit is a MAC array far wider than its
	// NTT); 0 means Lanes.
	BConvWordsPerCycle int `json:"bconv_words_per_cycle,omitempty"`
	EWWordsPerCycle    int `json:"ew_words_per_cycle,omitempty"`
	// LWEBytesPerLane is Datapath.LWEBytesPerLane (0: 1 byte per lane per cycle).
	LWEBytesPerLane int     `json:"lwe_bytes_per_lane_cycle,omitempty"`
	AreaMM2         float64 `json:"area_mm2"`
	PowerW          float64 `json:"power_w"`
	Source          string  `json:"source"`
}

// Lanes is the total lane count of the host accelerator.
func (h HostAccel) Lanes() int { return h.Clusters * h.LanesPerCluster }

// Datapath is the host accelerator's datapath for the cost functions.
func (h HostAccel) Datapath() Datapath {
	return Datapath{Name: h.Name, Lanes: h.Lanes(), FreqMHz: h.FreqMHz, WordBits: h.WordBits, NTTPipelined: h.NTTPipelined,
		BConvLanes: h.BConvWordsPerCycle, EWLanes: h.EWWordsPerCycle, LWEBytesPerLane: h.LWEBytesPerLane}
}

// Engine is RosemarySSD's FHE engine: a Rows x Cols array of adaptive units
// (AUs), each with LanesPerAU lanes of butterfly units and modular
// adders/multipliers, sharing one reconfigurable datapath for NTT/iNTT,
// BConv, element-wise ops and automorphism.
type Engine struct {
	AURows     int `json:"au_rows"`
	AUCols     int `json:"au_cols"`
	LanesPerAU int `json:"lanes_per_au"`
	FreqMHz    int `json:"freq_mhz"`
	WordBits   int `json:"word_bits"`
	// LWEBytesPerLane is Datapath.LWEBytesPerLane: the bytes of an LWE
	// PIR's matrix one lane multiply-accumulates per cycle (0: 1).
	LWEBytesPerLane int    `json:"lwe_bytes_per_lane_cycle,omitempty"`
	Source          string `json:"source"`
}

// AUs is the number of adaptive units.
func (e Engine) AUs() int { return e.AURows * e.AUCols }

// Lanes is the total lane count of the engine.
func (e Engine) Lanes() int { return e.AUs() * e.LanesPerAU }

// Datapath is the engine's datapath for the cost functions. The engine
// iterates NTT stages over its lanes (GC-NTT), so NTTPipelined is false.
func (e Engine) Datapath() Datapath {
	return Datapath{Name: "rosemary-engine", Lanes: e.Lanes(), FreqMHz: e.FreqMHz, WordBits: e.WordBits, LWEBytesPerLane: e.LWEBytesPerLane}
}

// SRAM is the engine's shared buffer for active intermediates.
type SRAM struct {
	CapacityBytes int64   `json:"capacity_bytes"`
	GBps          float64 `json:"gbps"`
	Source        string  `json:"source"`
}

// EDRAM is the banked scratchpad holding hot keys and overflow data. A
// capacity of 0 means the design has no scratchpad.
type EDRAM struct {
	CapacityBytes int64   `json:"capacity_bytes"`
	Banks         int     `json:"banks"`
	BankGBps      float64 `json:"bank_gbps"`
	Source        string  `json:"source"`
}

// DRAM is the SSD's LPDDR.
type DRAM struct {
	Type          string  `json:"type"`
	CapacityBytes int64   `json:"capacity_bytes"`
	GBps          float64 `json:"gbps"`
	Source        string  `json:"source"`
}

// NAND is the flash back end: Channels x ChipsPerChannel x DiesPerChip x
// PlanesPerDie planes, ONFI NV-DDR2 channels of ChannelWidthBytes at
// ChannelMTps mega-transfers per second.
type NAND struct {
	Channels          int     `json:"channels"`
	ChipsPerChannel   int     `json:"chips_per_channel"`
	DiesPerChip       int     `json:"dies_per_chip"`
	PlanesPerDie      int     `json:"planes_per_die"`
	BlocksPerPlane    int     `json:"blocks_per_plane"`
	PagesPerBlock     int     `json:"pages_per_block"`
	PageBytes         int     `json:"page_bytes"`
	ChannelWidthBytes int     `json:"channel_width_bytes"`
	ChannelMTps       int     `json:"channel_mtps"`
	ReadNS            float64 `json:"read_ns"`
	ProgramNS         float64 `json:"program_ns"`
	EraseNS           float64 `json:"erase_ns"`
	ONFI              ONFI    `json:"onfi"`
	Source            string  `json:"source"`
}

// Planes is the total number of planes in the SSD.
func (n NAND) Planes() int { return n.Channels * n.ChipsPerChannel * n.DiesPerChip * n.PlanesPerDie }

// ChannelGBps is one channel's data rate in GB/s (width x transfers/s).
func (n NAND) ChannelGBps() float64 {
	return float64(n.ChannelWidthBytes) * float64(n.ChannelMTps) / 1000
}

// CapacityBytes is the raw capacity of the flash array.
func (n NAND) CapacityBytes() int64 {
	return int64(n.Planes()) * int64(n.BlocksPerPlane) * int64(n.PagesPerBlock) * int64(n.PageBytes)
}

// ONFI holds the NV-DDR2 command/address timing parameters (ns) that
// MQSim's ONFI_Channel_NVDDR2 uses to build its command times.
type ONFI struct {
	TCS    float64 `json:"t_cs_ns"`   // CE setup
	TWC    float64 `json:"t_wc_ns"`   // WE cycle time (one command/address cycle)
	TWB    float64 `json:"t_wb_ns"`   // WE high to R/B low
	TRR    float64 `json:"t_rr_ns"`   // ready to data output
	TDBSY  float64 `json:"t_dbsy_ns"` // dummy busy between multi-plane commands
	TADL   float64 `json:"t_adl_ns"`  // ALE to data loading
	TWPST  float64 `json:"t_wpst_ns"` // DQS write postamble
	TWPSTH float64 `json:"t_wpsth_ns"`
	TCALS  float64 `json:"t_cals_ns"`
	Source string  `json:"source"`
}

// Link is the host <-> SSD PCIe link, parameterized as MQSim's PCIe_Link.
type Link struct {
	Gen             int     `json:"gen"`
	Lanes           int     `json:"lanes"`
	GTps            float64 `json:"gtps"` // giga-transfers per second per lane
	EncodingNum     int     `json:"encoding_num"`
	EncodingDen     int     `json:"encoding_den"`
	MaxPayloadBytes int     `json:"max_payload_bytes"`
	TLPHeaderBytes  int     `json:"tlp_header_bytes"`
	DLLPBytes       int     `json:"dllp_bytes"`
	PHYBytes        int     `json:"phy_bytes"`
	Source          string  `json:"source"`
}

// LaneGBps is one lane's payload-carrying rate after line encoding, GB/s.
func (l Link) LaneGBps() float64 {
	return l.GTps * float64(l.EncodingNum) / float64(l.EncodingDen) / 8
}

// RawGBps is the link's nominal rate before encoding (PCIe 4.0 x4: 8 GB/s).
func (l Link) RawGBps() float64 { return l.GTps * float64(l.Lanes) / 8 }

// PacketOverheadBytes is the per-TLP overhead: header + DLLP + PHY framing.
func (l Link) PacketOverheadBytes() int { return l.TLPHeaderBytes + l.DLLPBytes + l.PHYBytes }

// Component is one row of the device's area/power breakdown.
type Component struct {
	Name    string  `json:"name"`
	Kind    string  `json:"kind"` // engine | sram | edram | other
	AreaMM2 float64 `json:"area_mm2"`
	PowerW  float64 `json:"power_w"`
	Source  string  `json:"source"`
}

// Component kinds: which activity a component's power is charged to.
const (
	KindEngine = "engine"
	KindSRAM   = "sram"
	KindEDRAM  = "edram"
	KindOther  = "other"
)

// AreaMM2 is the summed device-side area.
func (a *Arch) AreaMM2() float64 {
	s := 0.0
	for _, c := range a.Components {
		s += c.AreaMM2
	}
	return s
}

// PowerW is the summed device-side power.
func (a *Arch) PowerW() float64 {
	s := 0.0
	for _, c := range a.Components {
		s += c.PowerW
	}
	return s
}

// Clone returns a deep copy.
func (a *Arch) Clone() *Arch {
	b := *a
	b.Components = append([]Component(nil), a.Components...)
	return &b
}

// validator collects field problems so one error names all of them.
type validator struct{ errs []string }

func (v *validator) posInt(name string, x int) { v.posInt64(name, int64(x)) }

func (v *validator) posInt64(name string, x int64) {
	switch {
	case x < 0:
		v.errs = append(v.errs, fmt.Sprintf("%s is negative (%d)", name, x))
	case x == 0:
		v.errs = append(v.errs, fmt.Sprintf("%s is missing or zero", name))
	}
}

func (v *validator) nonNeg64(name string, x int64) {
	if x < 0 {
		v.errs = append(v.errs, fmt.Sprintf("%s is negative (%d)", name, x))
	}
}

func (v *validator) posF(name string, x float64) {
	switch {
	case x != x: // NaN
		v.errs = append(v.errs, fmt.Sprintf("%s is NaN", name))
	case x < 0:
		v.errs = append(v.errs, fmt.Sprintf("%s is negative (%g)", name, x))
	case x == 0:
		v.errs = append(v.errs, fmt.Sprintf("%s is missing or zero", name))
	case x > 1e18:
		v.errs = append(v.errs, fmt.Sprintf("%s is out of range (%g)", name, x))
	}
}

func (v *validator) nonNegF(name string, x float64) {
	if x != x || x < 0 || x > 1e18 {
		v.errs = append(v.errs, fmt.Sprintf("%s is negative or out of range (%g)", name, x))
	}
}

func (v *validator) str(name, s string) {
	if strings.TrimSpace(s) == "" {
		v.errs = append(v.errs, fmt.Sprintf("%s is missing", name))
	}
}

func (v *validator) check(cond bool, format string, args ...any) {
	if !cond {
		v.errs = append(v.errs, fmt.Sprintf(format, args...))
	}
}

// maxDim bounds counts so products cannot overflow int64 arithmetic later.
const maxDim = 1 << 20

// Validate reports every missing, zero, negative or inconsistent field.
func (a *Arch) Validate() error {
	v := &validator{}
	v.str("name", a.Name)

	h := a.Host
	v.str("host.name", h.Name)
	v.posInt("host.clusters", h.Clusters)
	v.posInt("host.lanes_per_cluster", h.LanesPerCluster)
	v.posInt("host.freq_mhz", h.FreqMHz)
	v.posInt("host.word_bits", h.WordBits)
	v.posInt64("host.on_chip_bytes", h.OnChipBytes)
	v.posF("host.hbm_gbps", h.HBMGBps)
	v.check(h.BConvWordsPerCycle >= 0 && h.EWWordsPerCycle >= 0, "host.bconv_words_per_cycle %d and host.ew_words_per_cycle %d must not be negative",
		h.BConvWordsPerCycle, h.EWWordsPerCycle)
	v.check(h.LWEBytesPerLane >= 0 && h.LWEBytesPerLane <= 64, "host.lwe_bytes_per_lane_cycle %d outside [0, 64]", h.LWEBytesPerLane)
	v.nonNegF("host.area_mm2", h.AreaMM2)
	v.nonNegF("host.power_w", h.PowerW)
	v.str("host.source", h.Source)
	v.check(h.WordBits <= 64, "host.word_bits %d exceeds 64", h.WordBits)
	v.check(h.Clusters <= maxDim && h.LanesPerCluster <= maxDim, "host lane counts out of range")

	e := a.Engine
	v.posInt("engine.au_rows", e.AURows)
	v.posInt("engine.au_cols", e.AUCols)
	v.posInt("engine.lanes_per_au", e.LanesPerAU)
	v.posInt("engine.freq_mhz", e.FreqMHz)
	v.posInt("engine.word_bits", e.WordBits)
	v.str("engine.source", e.Source)
	v.check(e.LWEBytesPerLane >= 0 && e.LWEBytesPerLane <= 64, "engine.lwe_bytes_per_lane_cycle %d outside [0, 64]", e.LWEBytesPerLane)
	v.check(e.WordBits <= 64, "engine.word_bits %d exceeds 64", e.WordBits)
	v.check(e.AURows <= 1024 && e.AUCols <= 1024 && e.LanesPerAU <= maxDim, "engine dimensions out of range")

	v.posInt64("sram.capacity_bytes", a.SRAM.CapacityBytes)
	v.posF("sram.gbps", a.SRAM.GBps)
	v.str("sram.source", a.SRAM.Source)

	v.nonNeg64("edram.capacity_bytes", a.EDRAM.CapacityBytes)
	if a.EDRAM.CapacityBytes > 0 {
		v.posInt("edram.banks", a.EDRAM.Banks)
		v.posF("edram.bank_gbps", a.EDRAM.BankGBps)
	} else {
		v.check(a.EDRAM.Banks >= 0, "edram.banks is negative (%d)", a.EDRAM.Banks)
	}
	v.check(a.EDRAM.Banks <= 4096, "edram.banks out of range (%d)", a.EDRAM.Banks)
	v.str("edram.source", a.EDRAM.Source)

	v.str("dram.type", a.DRAM.Type)
	v.posInt64("dram.capacity_bytes", a.DRAM.CapacityBytes)
	v.posF("dram.gbps", a.DRAM.GBps)
	v.str("dram.source", a.DRAM.Source)

	n := a.NAND
	v.posInt("nand.channels", n.Channels)
	v.posInt("nand.chips_per_channel", n.ChipsPerChannel)
	v.posInt("nand.dies_per_chip", n.DiesPerChip)
	v.posInt("nand.planes_per_die", n.PlanesPerDie)
	v.posInt("nand.blocks_per_plane", n.BlocksPerPlane)
	v.posInt("nand.pages_per_block", n.PagesPerBlock)
	v.posInt("nand.page_bytes", n.PageBytes)
	v.posInt("nand.channel_width_bytes", n.ChannelWidthBytes)
	v.posInt("nand.channel_mtps", n.ChannelMTps)
	v.posF("nand.read_ns", n.ReadNS)
	v.posF("nand.program_ns", n.ProgramNS)
	v.posF("nand.erase_ns", n.EraseNS)
	v.str("nand.source", n.Source)
	v.check(n.Channels <= 4096 && n.ChipsPerChannel <= 256 && n.DiesPerChip <= 64 && n.PlanesPerDie <= 16,
		"nand geometry out of range")
	v.check(n.PlanesPerDie <= 4 || n.PlanesPerDie == 0, "nand.planes_per_die %d exceeds the 4 planes ONFI multi-plane commands address", n.PlanesPerDie)
	v.check(n.PageBytes <= 1<<24 && n.BlocksPerPlane <= maxDim && n.PagesPerBlock <= maxDim, "nand page/block sizes out of range")
	o := n.ONFI
	for _, f := range []struct {
		name string
		x    float64
	}{{"t_cs_ns", o.TCS}, {"t_wc_ns", o.TWC}, {"t_wb_ns", o.TWB}, {"t_rr_ns", o.TRR}, {"t_dbsy_ns", o.TDBSY},
		{"t_adl_ns", o.TADL}, {"t_wpst_ns", o.TWPST}, {"t_wpsth_ns", o.TWPSTH}, {"t_cals_ns", o.TCALS}} {
		v.nonNegF("nand.onfi."+f.name, f.x)
	}
	v.str("nand.onfi.source", o.Source)

	l := a.Link
	v.posInt("link.gen", l.Gen)
	v.posInt("link.lanes", l.Lanes)
	v.posF("link.gtps", l.GTps)
	v.posInt("link.encoding_num", l.EncodingNum)
	v.posInt("link.encoding_den", l.EncodingDen)
	v.posInt("link.max_payload_bytes", l.MaxPayloadBytes)
	v.check(l.TLPHeaderBytes >= 0 && l.DLLPBytes >= 0 && l.PHYBytes >= 0, "link overhead bytes are negative")
	v.check(l.EncodingNum <= l.EncodingDen, "link encoding %d/%d exceeds 1", l.EncodingNum, l.EncodingDen)
	v.check(l.Lanes <= 64 && l.MaxPayloadBytes <= 4096, "link lanes or payload out of range")
	v.str("link.source", l.Source)

	if len(a.Components) == 0 {
		v.errs = append(v.errs, "components (Table V) are missing")
	}
	for i, c := range a.Components {
		p := fmt.Sprintf("components[%d]", i)
		v.str(p+".name", c.Name)
		v.nonNegF(p+".area_mm2", c.AreaMM2)
		v.nonNegF(p+".power_w", c.PowerW)
		switch c.Kind {
		case KindEngine, KindSRAM, KindEDRAM, KindOther:
		default:
			v.errs = append(v.errs, fmt.Sprintf("%s.kind %q is not engine|sram|edram|other", p, c.Kind))
		}
	}
	if len(v.errs) > 0 {
		return fmt.Errorf("arch %q: %w", a.Name, errors.New(strings.Join(v.errs, "; ")))
	}
	return nil
}

// WireBytes is the bytes on the wire (all lanes together) for a message of
// payload bytes, MQSim's formula: full TLPs of MaxPayloadBytes plus one
// partial TLP, each carrying PacketOverheadBytes of header and framing.
func (l Link) WireBytes(payload int64) int64 {
	if payload <= 0 || l.MaxPayloadBytes <= 0 {
		return 0
	}
	mps := int64(l.MaxPayloadBytes)
	ovh := int64(l.PacketOverheadBytes())
	w := payload / mps * (mps + ovh)
	if r := payload % mps; r != 0 {
		w += r + ovh
	}
	return w
}

// EffectiveGBps is the payload bandwidth of long transfers: the lanes' post-
// encoding rate times the TLP efficiency MPS / (MPS + overhead).
func (l Link) EffectiveGBps() float64 {
	mps := float64(l.MaxPayloadBytes)
	return l.LaneGBps() * float64(l.Lanes) * mps / (mps + float64(l.PacketOverheadBytes()))
}

// TransferSeconds is the time one message of payload bytes occupies the
// link: its wire bytes spread over the lanes at the post-encoding lane rate.
func (l Link) TransferSeconds(payload int64) float64 {
	lanes := int64(max(l.Lanes, 1))
	perLane := (l.WireBytes(payload) + lanes - 1) / lanes
	return float64(perLane) / (l.LaneGBps() * 1e9)
}
