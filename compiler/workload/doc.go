// Package workload generates the FHE programs Rosemary is evaluated on. Each
// workload has a Full form (the paper's scale, IR only, for the compiler and
// simulator) and a Small form with the same structure at a size this machine
// runs for real.
package workload
