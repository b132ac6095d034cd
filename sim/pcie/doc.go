// Package pcie models the host <-> SSD PCIe link the way MQSim's PCIe_Link
// does (src/host/PCIe_Link.h, estimate_transfer_time), on the sim/eventsim core.
//
// A message of P payload bytes is cut into TLPs of at most MaxPayload bytes;
// every TLP carries Overhead = TLP header + DLLP (sequence number, LCRC) +
// PHY framing bytes. The bytes on the wire are
//
//	W = floor(P/MPS)*(MPS+Overhead) + (P mod MPS > 0 ? P mod MPS + Overhead : 0)
//
// striped over the lanes, so the link is busy for ceil(W/lanes) bytes at one
// lane's rate. A lane's rate is its signalling rate after line encoding:
// GT/s x 128/130 / 8 bytes for PCIe 3.0 and later (PCIe 4.0: 1.969 GB/s per
// lane, 7.88 GB/s for x4, against the nominal "8 GB/s" of Table IV).
//
// Differences from MQSim, on purpose: MQSim takes the lane bandwidth in GB/s
// as a configuration number and truncates the result to whole nanoseconds;
// here the lane rate is derived from GT/s and the encoding, and time is exact
// picoseconds rounded up. Each direction is its own FIFO bandwidth server
// (the link is full duplex), as MQSim keeps one message queue per direction.
package pcie
