package arch

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"sort"
	"strings"
)

//go:embed presets/*.json
var presetFS embed.FS

// maxPresetBytes bounds a preset file so a hostile input cannot exhaust memory.
const maxPresetBytes = 1 << 20

// maxBaseDepth bounds "base" chains (a preset extending a preset ...).
const maxBaseDepth = 4

// presetFile is the on-disk form: an Arch, optionally overlaid on a base
// preset named by "base" (only the fields present in the file override it).
type presetFile struct {
	Base string `json:"base"`
	Arch
}

// Presets lists the names of the embedded presets, sorted.
func Presets() []string {
	entries, err := fs.ReadDir(presetFS, "presets")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			names = append(names, strings.TrimSuffix(e.Name(), ".json"))
		}
	}
	sort.Strings(names)
	return names
}

// Preset loads and validates an embedded preset by name.
func Preset(name string) (*Arch, error) {
	return preset(name, 0)
}

func preset(name string, depth int) (*Arch, error) {
	if depth > maxBaseDepth {
		return nil, fmt.Errorf("arch: preset %q: base chain deeper than %d", name, maxBaseDepth)
	}
	if name == "" || strings.ContainsAny(name, `/\`) || name != path.Clean(name) {
		return nil, fmt.Errorf("arch: invalid preset name %q", name)
	}
	data, err := presetFS.ReadFile("presets/" + name + ".json")
	if err != nil {
		return nil, fmt.Errorf("arch: unknown preset %q (have %s)", name, strings.Join(Presets(), ", "))
	}
	a, err := parse(data, depth)
	if err != nil {
		return nil, fmt.Errorf("arch: preset %q: %w", name, err)
	}
	return a, nil
}

// Parse decodes and validates a JSON architecture description. A "base"
// field names an embedded preset that the document overlays.
func Parse(data []byte) (*Arch, error) {
	a, err := parse(data, 0)
	if err != nil {
		return nil, fmt.Errorf("arch: %w", err)
	}
	return a, nil
}

func parse(data []byte, depth int) (*Arch, error) {
	if len(data) > maxPresetBytes {
		return nil, fmt.Errorf("description is %d bytes, limit %d", len(data), maxPresetBytes)
	}
	var head struct {
		Base string `json:"base"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	var pf presetFile
	if head.Base != "" {
		base, err := preset(head.Base, depth+1)
		if err != nil {
			return nil, err
		}
		pf.Arch = *base.Clone()
		pf.Name, pf.Description = "", ""
	}
	if err := decodeStrict(data, &pf); err != nil {
		return nil, err
	}
	a := pf.Arch
	if err := a.Validate(); err != nil {
		return nil, err
	}
	return &a, nil
}

// Open returns the preset called nameOrPath if there is one, otherwise it
// reads and parses the file at that path.
func Open(nameOrPath string) (*Arch, error) {
	for _, p := range Presets() {
		if p == nameOrPath {
			return Preset(p)
		}
	}
	f, err := os.Open(nameOrPath)
	if err != nil {
		return nil, fmt.Errorf("arch: %q is neither a preset (%s) nor a readable file: %w",
			nameOrPath, strings.Join(Presets(), ", "), err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPresetBytes+1))
	if err != nil {
		return nil, fmt.Errorf("arch: read %s: %w", nameOrPath, err)
	}
	a, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("arch: %s: %w", nameOrPath, err)
	}
	return a, nil
}

// Marshal encodes a as indented JSON (the same form Parse reads).
func Marshal(a *Arch) ([]byte, error) {
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("arch: encode %q: %w", a.Name, err)
	}
	return b, nil
}

// Override bounds, from the paper's sensitivity studies.
const (
	MinAUs        = 4         // Rosemary "FHE engine" sensitivity: 4..64 AUs
	MaxAUs        = 64        //
	MaxEDRAMBytes = 128 << 20 // Rosemary "Scratchpad size": 0..128 MB
)

// WithAUs returns a copy of a whose engine has n adaptive units (4..64),
// arranged as the most square rows x cols grid (rows <= cols). Lanes per AU
// are unchanged. Per-AU quantities scale linearly with n/AUs (first
// principles: the units are replicated): the area and power of "engine"
// components, and the SRAM and eDRAM bandwidths, which are provisioned per
// AU in the preset. Capacities do not change.
func WithAUs(a *Arch, n int) (*Arch, error) {
	if n < MinAUs || n > MaxAUs {
		return nil, fmt.Errorf("arch: AU count %d outside %d..%d", n, MinAUs, MaxAUs)
	}
	old := a.Engine.AUs()
	if old <= 0 {
		return nil, fmt.Errorf("arch: %q has no AUs to scale", a.Name)
	}
	rows := int(math.Sqrt(float64(n)))
	for n%rows != 0 {
		rows--
	}
	b := a.Clone()
	b.Engine.AURows, b.Engine.AUCols = rows, n/rows
	f := float64(n) / float64(old)
	for i := range b.Components {
		if b.Components[i].Kind == KindEngine {
			b.Components[i].AreaMM2 *= f
			b.Components[i].PowerW *= f
		}
	}
	b.SRAM.GBps *= f
	b.EDRAM.BankGBps *= f
	b.Name = fmt.Sprintf("%s+aus=%d", a.Name, n)
	if err := b.Validate(); err != nil {
		return nil, err
	}
	return b, nil
}

// WithEDRAM returns a copy of a with an eDRAM scratchpad of the given size
// (0..128 MB; 0 removes it). The bank count and per-bank bandwidth are kept
// (a removed scratchpad keeps its bank parameters for documentation only);
// the area and power of "edram" components scale linearly with capacity
// (first principles: same cell and bank design, more arrays).
func WithEDRAM(a *Arch, bytes int64) (*Arch, error) {
	if bytes < 0 || bytes > MaxEDRAMBytes {
		return nil, fmt.Errorf("arch: eDRAM size %d bytes outside 0..%d", bytes, int64(MaxEDRAMBytes))
	}
	old := a.EDRAM.CapacityBytes
	b := a.Clone()
	b.EDRAM.CapacityBytes = bytes
	for i := range b.Components {
		if b.Components[i].Kind != KindEDRAM {
			continue
		}
		if old == 0 {
			if bytes != 0 {
				return nil, fmt.Errorf("arch: %q has no eDRAM to scale area/power from", a.Name)
			}
			continue
		}
		f := float64(bytes) / float64(old)
		b.Components[i].AreaMM2 *= f
		b.Components[i].PowerW *= f
	}
	b.Name = fmt.Sprintf("%s+edram=%dMB", a.Name, bytes>>20)
	if err := b.Validate(); err != nil {
		return nil, err
	}
	return b, nil
}

// decodeStrict decodes one JSON object into v, refusing unknown fields and
// trailing data (presets and baselines are hand-written: a typo must not
// pass silently).
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("decode: trailing data after the JSON object")
	}
	return nil
}
