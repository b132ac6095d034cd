package ssd

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/arch"
	"github.com/rosemary-fhe/rosemary/sim/des"
)

// Tier is a level of the device memory hierarchy, nearest the engine first.
type Tier int

// Tiers in the paper's spill/fetch order.
const (
	TierSRAM Tier = iota
	TierEDRAM
	TierDRAM
	TierNAND
)

func (t Tier) String() string {
	switch t {
	case TierSRAM:
		return "SRAM"
	case TierEDRAM:
		return "eDRAM"
	case TierDRAM:
		return "LPDDR"
	case TierNAND:
		return "NAND"
	}
	return fmt.Sprintf("Tier(%d)", int(t))
}

// EDRAMInterleave is the eDRAM bank-interleaving granule: one row of the AU
// array (2048 lanes x 4-byte words), first principles (the paper gives none).
const EDRAMInterleave = 8 << 10

// Memory is one capacity-limited memory with a bandwidth model: a FIFO
// server, or banks.
type Memory struct {
	tier     Tier
	capacity int64
	used     int64
	peak     int64
	srv      *des.Server
	banked   *des.Banked
}

func newServerMemory(sim *des.Sim, t Tier, capacity int64, gbps float64) (*Memory, error) {
	r, err := des.GBps(gbps)
	if err != nil {
		return nil, fmt.Errorf("ssd: %v: %w", t, err)
	}
	return &Memory{tier: t, capacity: capacity, srv: des.NewServer(sim, t.String(), r)}, nil
}

func newBankedMemory(sim *des.Sim, t Tier, capacity int64, banks int, bankGBps float64) (*Memory, error) {
	r, err := des.GBps(bankGBps)
	if err != nil {
		return nil, fmt.Errorf("ssd: %v: %w", t, err)
	}
	b, err := des.NewBanked(sim, t.String(), banks, r, EDRAMInterleave)
	if err != nil {
		return nil, fmt.Errorf("ssd: %w", err)
	}
	return &Memory{tier: t, capacity: capacity, banked: b}, nil
}

// Tier is the memory's level.
func (m *Memory) Tier() Tier { return m.tier }

// Capacity is the memory's size in bytes.
func (m *Memory) Capacity() int64 { return m.capacity }

// Used is the allocated bytes.
func (m *Memory) Used() int64 { return m.used }

// Peak is the highest allocation seen.
func (m *Memory) Peak() int64 { return m.peak }

// Free is the unallocated bytes.
func (m *Memory) Free() int64 { return m.capacity - m.used }

// Alloc reserves n bytes, or fails if they do not fit.
func (m *Memory) Alloc(n int64) error {
	if n < 0 {
		return fmt.Errorf("ssd: %v: negative allocation %d", m.tier, n)
	}
	if n > m.Free() {
		return fmt.Errorf("ssd: %v: %d bytes do not fit (%d of %d free)", m.tier, n, m.Free(), m.capacity)
	}
	m.used += n
	if m.used > m.peak {
		m.peak = m.used
	}
	return nil
}

// Release returns n allocated bytes.
func (m *Memory) Release(n int64) error {
	if n < 0 || n > m.used {
		return fmt.Errorf("ssd: %v: release of %d bytes with %d allocated", m.tier, n, m.used)
	}
	m.used -= n
	return nil
}

// Access moves n bytes at addr (the address matters only for bank
// interleaving) and calls done at completion; it returns the completion time.
func (m *Memory) Access(addr, n int64, done func()) des.Time {
	if m.banked != nil {
		return m.banked.Access(addr, n, done)
	}
	return m.srv.Transfer(n, done)
}

// Stats returns the memory's counters (for banked memory, Busy sums banks).
func (m *Memory) Stats() des.Stats {
	if m.banked != nil {
		return m.banked.Stats()
	}
	return m.srv.Stats()
}

// Utilization is the busy fraction over a window: for a banked memory the
// mean over its banks.
func (m *Memory) Utilization(over des.Time) float64 {
	u := m.Stats().Utilization(over)
	if m.banked != nil {
		u /= float64(m.banked.Banks())
	}
	return u
}

// Hierarchy is the device's on-board memory: SRAM, eDRAM (nil when the
// design has none) and LPDDR.
type Hierarchy struct {
	SRAM, EDRAM, DRAM *Memory
}

// NewHierarchy builds the memories of a.
func NewHierarchy(sim *des.Sim, a *arch.Arch) (*Hierarchy, error) {
	h := &Hierarchy{}
	var err error
	if h.SRAM, err = newServerMemory(sim, TierSRAM, a.SRAM.CapacityBytes, a.SRAM.GBps); err != nil {
		return nil, err
	}
	if a.EDRAM.CapacityBytes > 0 {
		if h.EDRAM, err = newBankedMemory(sim, TierEDRAM, a.EDRAM.CapacityBytes, a.EDRAM.Banks, a.EDRAM.BankGBps); err != nil {
			return nil, err
		}
	}
	if h.DRAM, err = newServerMemory(sim, TierDRAM, a.DRAM.CapacityBytes, a.DRAM.GBps); err != nil {
		return nil, err
	}
	return h, nil
}

// Memory returns the memory of tier t (nil for NAND or an absent eDRAM).
func (h *Hierarchy) Memory(t Tier) *Memory {
	switch t {
	case TierSRAM:
		return h.SRAM
	case TierEDRAM:
		return h.EDRAM
	case TierDRAM:
		return h.DRAM
	}
	return nil
}

// PlaceIntermediate allocates n bytes for an intermediate polynomial in the
// paper's spill order SRAM -> eDRAM -> LPDDR and returns the tier used. It
// fails when not even LPDDR has room (intermediates are never written to
// NAND: Rosemary generates no NAND writes).
func (h *Hierarchy) PlaceIntermediate(n int64) (Tier, error) {
	for _, t := range []Tier{TierSRAM, TierEDRAM, TierDRAM} {
		if m := h.Memory(t); m != nil && m.Alloc(n) == nil {
			return t, nil
		}
	}
	return 0, fmt.Errorf("ssd: intermediate of %d bytes fits in no on-board memory (LPDDR %d of %d free)",
		n, h.DRAM.Free(), h.DRAM.Capacity())
}

// PlaceKey allocates n bytes for a resident evaluation key in eDRAM, else
// LPDDR; if neither has room the key stays in NAND (TierNAND, nothing
// allocated) and is streamed from flash at each use.
func (h *Hierarchy) PlaceKey(n int64) (Tier, error) {
	if n < 0 {
		return 0, fmt.Errorf("ssd: negative key size %d", n)
	}
	for _, t := range []Tier{TierEDRAM, TierDRAM} {
		if m := h.Memory(t); m != nil && m.Alloc(n) == nil {
			return t, nil
		}
	}
	return TierNAND, nil
}

// StoredKSKBytes is the stored size of a key-switching key of full bytes:
// each key is pairs (b, a) of polynomials whose a halves are uniformly random
// and regenerated from a PRNG seed on chip, so only half is stored (rounded
// up) — the paper's "store only half of each KSK".
func StoredKSKBytes(full int64) int64 {
	if full <= 0 {
		return 0
	}
	return (full + 1) / 2
}
