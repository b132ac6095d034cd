package soc

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/rosemary-fhe/rosemary/rise/edge"
)

// Profile is a software baseline's RV64 instructions per phase, measured
// under qemu-riscv64 (package rvcount) at each ring degree.
type Profile struct {
	Software string         `json:"software"` // BaselineEdge or BaselineSEAL
	Source   string         `json:"source"`   // what was measured, how, where
	Command  string         `json:"command"`  // the command that measured it
	Points   []ProfilePoint `json:"points"`
}

// ProfilePoint is one measured run: instructions per phase, named as
// edge.Phase names. Encryption phases are required; decryption phases are
// absent for software without a decryptor (SEAL-Embedded).
type ProfilePoint struct {
	N            int               `json:"n"`
	Limbs        int               `json:"limbs"`
	Instructions map[string]uint64 `json:"instructions"`
}

// The baselines the model knows.
const (
	BaselineEdge    = "edge"          // our encryptor, measured
	BaselineSEAL    = "seal-embedded" // SEAL-Embedded, measured (the paper's baseline software)
	BaselineDerived = "derived"       // our encryptor, first-principles per-operation costs (CoreCosts)
)

var encPhases = []edge.Phase{edge.PhaseEncode, edge.PhaseSample, edge.PhaseLift, edge.PhaseNTT, edge.PhaseProduct}
var decPhases = []edge.Phase{edge.PhaseDecProduct, edge.PhaseINTT, edge.PhaseCRT, edge.PhaseDecode}

// maxProfileBytes bounds a profile file.
const maxProfileBytes = 1 << 20

// ParseProfiles decodes and checks a JSON array of profiles.
func ParseProfiles(b []byte) ([]Profile, error) {
	if len(b) > maxProfileBytes {
		return nil, fmt.Errorf("rise: profile file of %d bytes exceeds %d", len(b), maxProfileBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var ps []Profile
	if err := dec.Decode(&ps); err != nil {
		return nil, fmt.Errorf("rise: profiles: %w", err)
	}
	seen := map[string]bool{}
	for _, p := range ps {
		if p.Software != BaselineEdge && p.Software != BaselineSEAL {
			return nil, fmt.Errorf("rise: profile of unknown software %q", p.Software)
		}
		if seen[p.Software] {
			return nil, fmt.Errorf("rise: two profiles of %s", p.Software)
		}
		seen[p.Software] = true
		ns := map[int]bool{}
		for _, pt := range p.Points {
			if pt.N < 16 || pt.N > 1<<17 || pt.N&(pt.N-1) != 0 || pt.Limbs < 1 || pt.Limbs > 64 {
				return nil, fmt.Errorf("rise: %s: invalid point N=%d limbs=%d", p.Software, pt.N, pt.Limbs)
			}
			if ns[pt.N] {
				return nil, fmt.Errorf("rise: %s: two points at N=%d", p.Software, pt.N)
			}
			ns[pt.N] = true
			for name, v := range pt.Instructions {
				if _, err := edge.ParsePhase(name); err != nil {
					return nil, fmt.Errorf("rise: %s N=%d: %w", p.Software, pt.N, err)
				}
				if v == 0 || v > 1<<50 {
					return nil, fmt.Errorf("rise: %s N=%d: %s has %d instructions", p.Software, pt.N, name, v)
				}
			}
			for _, ph := range encPhases {
				if _, ok := pt.Instructions[ph.String()]; !ok {
					return nil, fmt.Errorf("rise: %s N=%d: no %s count", p.Software, pt.N, ph)
				}
			}
		}
	}
	return ps, nil
}

//go:embed riscv_counts.json
var measuredJSON []byte

// MeasuredProfiles returns the profiles measured for this repository
// (riscv_counts.json, written by `rosemary edge soc --measure-riscv`).
func MeasuredProfiles() ([]Profile, error) { return ParseProfiles(measuredJSON) }

// Profile returns the profile of software.
func profileOf(ps []Profile, software string) (Profile, error) {
	for _, p := range ps {
		if p.Software == software {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("rise: no measured profile of %s", software)
}

// Point returns the measured point at ring degree n.
func (p Profile) Point(n int) (ProfilePoint, error) {
	for _, pt := range p.Points {
		if pt.N == n {
			return pt, nil
		}
	}
	var have []int
	for _, pt := range p.Points {
		have = append(have, pt.N)
	}
	sort.Ints(have)
	return ProfilePoint{}, fmt.Errorf("rise: %s was not measured at N=%d (have %v)", p.Software, n, have)
}

// Instr returns the instructions of phase ph (0 if absent).
func (pt ProfilePoint) Instr(ph edge.Phase) float64 { return float64(pt.Instructions[ph.String()]) }

// HasDecrypt reports whether the point measured the decryption phases.
func (pt ProfilePoint) HasDecrypt() bool {
	for _, ph := range decPhases {
		if _, ok := pt.Instructions[ph.String()]; !ok {
			return false
		}
	}
	return true
}
