// Package tdap is Rosemary's Throughput-Data-Aware Program Allocator: it
// places each operation of an FHE program on the host accelerator or on the
// in-storage engine so that execution plus host–SSD transfer cost is least,
// and cuts the placed program into same-device segments.
//
// The input is deliberately small and independent of the IR and the cost
// model: a Problem is a list of Nodes, each with its cost on either device
// (D_i(Host), D_i(SSD)) and an optional pin (client inputs and final outputs
// to the host, stored objects to the SSD), and a list of Edges, each with the
// cost T_comm of moving its data across the link. Solve minimises the
// paper's objective
//
//	Σ_i D_i(x_i) + Σ_{(i,j) with x_i ≠ x_j} T_comm(i,j)
//
// exactly, by Stone's two-processor assignment (1977) as an s–t minimum cut
// with the host as source and the SSD as sink. A node may also set OutComm,
// the cost of shipping its output once, paid if any of its readers is on the
// other device however many there are (a query ciphertext fanned out to every
// database chunk, which per-edge T_comm would charge per reader); with
// OutComm = 0 everywhere the objective is exactly the paper's.
//
// The max-flow solver is the package's own Network: flat CSR arc arrays with
// int32 indices, iterative throughout, with two algorithms — Dinic's and
// push-relabel (highest label, gap and global relabelling). Solve runs
// Dinic's first phases, which finish a compiled program's cut, and hands a
// deep program still unfinished to push-relabel with the flow found so far
// (see dinicWork); both alone are kept as cross-checks. A node whose
// output has a single reader needs no auxiliary OutComm nodes: its charge
// is one edge (see outCommArcs). A 10^6-node program is partitioned in about
// a second (BenchmarkSolve1M). Cost evaluates the
// objective of any placement directly, and the tests hold Solve to brute
// force over every placement.
//
// Costs are int64 in one additive unit of the caller's choice, used for every
// node and edge alike. The Rosemary cost model is expected to use
// picoseconds (T_comm = bytes / B_link converted to ps); any unit works as
// long as the largest possible objective stays below 2^61 (about 26 days in
// ps), which Validate checks. Costs must be non-negative. The paper assumes
// D_i(SSD) ≥ D_i(Host) (the in-storage engine is the weaker one); Solve
// does not need that and is exact without it.
//
// Segments coalesces consecutive same-device nodes of a topological order
// into segments — the device segments become mPrograms — and Transfers lists
// what crosses the link. SegmentOrder finds the topological order with the
// fewest segments for a placement; Partition chains all of it.
package tdap
