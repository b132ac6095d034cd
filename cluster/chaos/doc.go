// Package chaos runs a cluster on this machine under a seeded schedule of
// faults and checks what its clients see: Jepsen's method (Kingsbury,
// jepsen.io) at the scale of one machine.
//
// Run starts an etcd cluster in process (cluster/local), device processes
// (each on its own size-limited filesystem when it can mount one), a
// coordinator that repairs, query clients asking for random records
// without pause and a loader publishing new generations, while fault
// tracks SIGKILL and restart devices, SIGSTOP them, flip bytes of stored
// pages, wipe stores, stop etcd members (one, or two for a bounded while:
// no quorum), run two loads at once and fill a device's disk. A checker
// holds every answer to account: it is the whole record of one load, the
// load that published the generation the answer names, and that
// generation was the published one at some moment during the query. When
// the faults stop and heal, the last acknowledged load must be answered
// by every replica alone and no device may keep an old generation.
package chaos
