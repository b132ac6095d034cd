package reproduce

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/sim/system"
)

// Content keys: a plan is named by what it is compiled from — the
// program's encoding, the architecture's parameters and the optimisation
// level — not by the names the figures give them, so the same program on
// the same hardware is compiled once even when two figures reach it under
// different names (Figure 15 at 16 AUs, Figure 14 at 64 MB of eDRAM and
// Figure 16's medium SSD at 16 AUs are all the rosemary preset).

// contentKey is a SHA-256 of its parts, hex-encoded.
type contentKey string

func keyOf(parts ...[]byte) contentKey {
	h := sha256.New()
	for _, p := range parts {
		// Length-prefixed, so that parts cannot run into each other.
		fmt.Fprintf(h, "%d:", len(p))
		h.Write(p)
	}
	return contentKey(hex.EncodeToString(h.Sum(nil)))
}

// programKey is the key of a built program: its gob encoding, which holds
// every field (JSON leaves out the node roles) and has no maps, so equal
// programs encode equally.
func programKey(p *ir.Program) (contentKey, error) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(p); err != nil {
		return "", fmt.Errorf("reproduce: key of program %s: %w", p.Name, err)
	}
	return keyOf([]byte("program"), b.Bytes()), nil
}

// archContentKey is the key of an architecture's parameters: its JSON with
// the labels — the top-level name and description, and every "source" —
// removed. The compiler and the simulator read none of them except the
// name, which a plan and a report carry and which Runner sets on reuse.
func archContentKey(a *arch.Arch) (contentKey, error) {
	b, err := arch.Marshal(a)
	if err != nil {
		return "", fmt.Errorf("reproduce: %w", err)
	}
	var v map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // keep every number exactly as written
	if err := d.Decode(&v); err != nil {
		return "", fmt.Errorf("reproduce: arch %s: %w", a.Name, err)
	}
	delete(v, "name")
	delete(v, "description")
	dropSources(v)
	c, err := json.Marshal(v) // map keys sorted: one encoding per content
	if err != nil {
		return "", fmt.Errorf("reproduce: arch %s: %w", a.Name, err)
	}
	return keyOf([]byte("arch"), c), nil
}

func dropSources(v any) {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "source")
		for _, e := range x {
			dropSources(e)
		}
	case []any:
		for _, e := range x {
			dropSources(e)
		}
	}
}

// planKey names the plan of program prog on architecture a at level opt.
func planKey(prog, a contentKey, opt string) contentKey {
	return keyOf([]byte("plan"), []byte(prog), []byte(a), []byte(opt))
}

// reportKey names a simulation: the plan, the architecture's name (which
// the report carries), the system and the simulator's options.
func reportKey(plan contentKey, archName string, sys system.System, o system.Options) contentKey {
	return keyOf([]byte("report"), []byte(plan), []byte(archName),
		fmt.Appendf(nil, "%d|%d|%d|%d|%v", sys, o.MaxTiles, o.TileBudget, o.CPUCores, o.Timeline))
}
