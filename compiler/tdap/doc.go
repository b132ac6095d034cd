// Package tdap is Rosemary's Throughput-Data-Aware Program Allocator: it
// places each operation of an FHE program on the host accelerator or on the
// in-storage engine so that execution plus host–SSD transfer cost is least,
// and cuts the placed program into same-device segments.
//
// The input is deliberately small and independent of the IR and the cost
// model: a Problem is a list of Nodes, each with its cost on either device
// (D_i(Host), D_i(SSD)) and an optional pin (client inputs and final outputs
// to the host, stored objects to the SSD), and a list of Edges, each with the
// cost T_comm of moving its data across the link. Solve minimises
//
//	Σ_i D_i(x_i) + Σ_{(i,j) with x_i ≠ x_j} T_comm(i,j)
//
// plus, for nodes that set Node.OutComm, that cost once if any reader of the
// node is on the other device (a ciphertext shipped once and read many times,
// which per-edge T_comm would charge per reader; the paper's formula is the
// per-edge one, which OutComm = 0 gives exactly).
//
// exactly, by Stone's two-processor assignment (1977) as an s–t minimum cut
// with the host as source and the SSD as sink. The max-flow solver is the
// package's own Network: flat CSR arc arrays with int32 indices, iterative
// throughout, with two algorithms — push-relabel (highest label, gap and
// global relabelling; used by Solve) and Dinic's (a cross-check, and a
// complete flow when one is needed). A 10^6-node program is partitioned in
// seconds (BenchmarkSolve1M). Cost evaluates the objective of any placement
// directly, and the tests hold Solve to brute force over every placement.
//
// Costs are int64 in one additive unit of the caller's choice, used for every
// node and edge alike. The Rosemary cost model is expected to use
// picoseconds (T_comm = bytes / B_link converted to ps); any unit works as
// long as the largest possible objective stays below 2^61 (about 26 days in
// ps), which Validate checks. Costs must be non-negative. The paper assumes D_i(SSD) ≥ D_i(Host)
// (the in-storage engine is the weaker one); Solve does not need that and is
// exact without it.
//
// Segments coalesces consecutive same-device nodes of a topological order
// (TopoOrder gives one) into segments — the device segments become mPrograms
// — and Transfers lists the cut edges, where data crosses the link.
package tdap
