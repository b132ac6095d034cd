// Package link projects the wall-clock cost of a two-party protocol run over a
// network from what the transport measured: bytes in each direction and the
// number of flights (maximal one-direction runs of messages).
//
// The model is
//
//	T = compute + flights · RTT/2 + (bytes_c2s + bytes_s2c) / bandwidth
//
// Each flight pays one one-way propagation delay; every byte is serialized
// once onto a link of the given bandwidth. Counting both directions in full is
// an upper bound for flights in which both parties send at once (they could
// overlap on a full-duplex link) and exact for strictly alternating protocols.
// Queuing, TCP slow start and loss are ignored.
//
// Presets (quoted, not measured): LAN = 3 Gbit/s with 0.3 ms RTT and WAN =
// 400 Mbit/s with 40 ms RTT, the settings issue 8 gives for the OptiPrime
// paper's simulated LAN/WAN (Yu et al., "OptiPrime: Optimizing Private
// Inference through Protocol-Hardware Co-design", arXiv:2609.16898, §V-A,
// "simulated LAN/WAN conditions"; the text we have does not print the
// numbers). The sensitivity sweep follows the paper's §V network study:
// bandwidth 10 MB/s to 1 GB/s and RTT 1 ms to 300 ms.
// Bandwidths here are in bytes per second, 1 MB = 10^6 bytes.
//
// NewShapedNamespace measures instead of projecting the bandwidth term: it
// joins a fresh network namespace to the caller's by a veth pair shaped
// with tbf in both directions, so a party started inside it (Exec) runs
// over a rate-limited link. The kernel has no netem, so delay cannot be
// shaped; callers add flights · RTT/2 (= rounds × RTT) to the measured
// time and say so.
package link
