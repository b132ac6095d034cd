// Package cputime reads the calling OS thread's CPU clock. On a shared,
// loaded machine a single-threaded measurement's thread CPU time is the
// stable figure: unlike wall time, it excludes the time the thread waited
// for a core. Callers lock the goroutine to its thread around the
// interval they measure.
package cputime
