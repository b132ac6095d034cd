// Package bench holds the GiB-scale benchmarks of the real system: a PIR
// database of a chosen size in the object store, queried through a
// separate device process, beside a plain sequential read of the same
// files and the same query answered on the host with Lattigo reading the
// store. Heavy runs live here (and behind `rosemary bench`), not in tests;
// every figure they report is measured in the run that reports it.
package bench
