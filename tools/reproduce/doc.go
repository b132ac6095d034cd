// Package reproduce regenerates the evaluation of the Rosemary paper
// ("Rosemary: Efficient and Adaptable In-Storage Acceleration for Fully
// Homomorphic Encryption": §Evaluation, §Ablation
// Studies, §Architectural Analysis, §Area and Power Overhead) from our own
// models: every "ours" figure is SIMULATED — the workload generators
// (package workload) build the programs, compiler.Compile plans them and
// sim/system runs the plans on the CPU, HA, INSPIRE and Rosemary systems.
// Nothing is measured on hardware here and no simulator parameter is fitted
// to the paper.
//
// Every "paper" figure is QUOTED from the paper text; the sentence it comes
// from is kept beside it (Quote) and written into the table notes. Each
// figure function returns a report.Table (our value, the paper's value and
// their ratio ours/paper, and a "why" note where they differ by more than
// 25%) and a report.Chart. Figures lists them all. Runner compiles each
// plan once per run, keyed by its content (the program, the architecture's
// parameters whatever the figure calls it, the optimisation level: keys.go),
// simulates each configuration once, and runs them concurrently, at most
// GOMAXPROCS at a time; RunAll runs the figures at once over it. A Cache
// keeps plans and reports on disk between runs. Live and PageOf make the
// evaluation one self-contained HTML page, which --serve shows filling in.
//
// Transformer workloads (bert, llama) are programs over one batch of
// workload.TransformerShape.Batch() = 128 sequences: latencies and energies
// reported per sequence are divided by the batch; ratios (speedups,
// reductions) are unaffected.
package reproduce
