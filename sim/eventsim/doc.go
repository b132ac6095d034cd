// Package eventsim is the discrete-event core shared by every hardware model in
// sim/...: a simulator with integer time, an event queue and a few resource
// primitives.
//
// Time is an int64 count of picoseconds (type Time), so a 1 GHz cycle is
// exactly 1000 and a run can span about 106 days before overflowing. Events
// fire in (time, sequence) order: two events at the same time fire in the
// order they were scheduled (FIFO), which makes every run deterministic.
// Scheduled events can be cancelled. Scheduling in the past is a model bug;
// it is recorded as the simulator's sticky error (returned by Run and Err)
// instead of panicking, and the event is dropped.
//
// The resource primitives are analytic where that is exact, so the number of
// events stays proportional to the number of requests, not bytes or cycles:
//
//   - Server: a FIFO resource that serves one request at a time, either for
//     a given duration or for bytes at a Rate (a bandwidth server). A request
//     submitted at time t starts at max(t, end of the previous request).
//   - Arbiter: a work-conserving resource with priority classes that picks
//     the next job when it becomes free (one event per job); used where a
//     short high-priority job must overtake queued ones (flash commands
//     ahead of data on a NAND channel).
//   - Pipe: a fixed latency with unlimited concurrency.
//   - Banked: N Servers with an address-interleaving rule; an access that
//     spans banks completes when its slowest bank does.
//
// Every resource counts busy time, bytes and requests for utilization
// reports.
package eventsim
