// Package nttsched models the memory side of RISE's NTT unit (paper
// section II-C, Algorithm 1 and Figure 6): which bank every butterfly reads
// and writes in every cycle, and whether single-port banks can sustain one
// butterfly per cycle per BFU.
//
// A Schedule fixes, for an in-place Cooley-Tukey NTT of size N (Lattigo's
// stage/block structure), the bank and offset of every element (Layout) and
// the order in which each stage's N/2 butterflies are issued, P per cycle
// (P parallel BFUs). Simulate plays the schedule cycle by cycle on a banked
// memory: a butterfly reads its two inputs when issued and its two outputs
// reach the banks L cycles later (pipelined BFU); reads have priority, and
// a write that finds its bank's ports taken waits in that bank's write
// buffer. The simulator carries real values and real twiddles, so a
// schedule that violated a data dependence would produce a wrong NTT: the
// result is compared with the reference transform.
//
// Schemes:
//   - Naive: element x at address x, banks are contiguous address ranges,
//     butterflies in natural order.
//   - Swap2 (Roy et al.): two banks, bank = parity of the bits of x, so the
//     two inputs of every butterfly (x and x⊕h) are in different banks; in
//     memory this is the swap of the two outputs of alternate rows.
//   - Swap4 (RISE): four banks, bank = (parity(x), parity(x & 0b…0101)),
//     offset x>>2; both inputs of a butterfly are in different banks and the
//     butterflies of a stage are reordered so that consecutive cycles use
//     complementary bank pairs. Each write then lands in a pair that is idle
//     either in its own cycle (odd L) or in the next one (even L), so one
//     buffered element per port suffices.
package nttsched
