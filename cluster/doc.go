// Package cluster spreads one encrypted database over many Rosemary
// devices, coordinated by etcd.
//
// Control plane (etcd, metadata only): each device registers under a lease
// kept alive while it runs (/rosemary/devices/<id>: its address and
// space); each database has a shard map (/rosemary/dbs/<owner>/<name>:
// its kind, records, generation, and per shard the replica devices).
// etcd is reached over mutual TLS and its RBAC lets a device write only
// its own registry key and a user only the maps under its own name
// (access.go). A load first
// claims generation g+1 (an etcd key under a lease; the claim's revision
// is the load's fencing token), writes every shard replica as its own
// database on its device, named with the token (client library:
// published locally, atomically), then publishes g+1 with one etcd
// transaction conditioned on the map's revision and the claim — readers
// see g or g+1, never a mix, because every load's shards have their own
// names; of two concurrent loads one publishes, the other fails with
// ErrConcurrentLoad. After a publish, and on every repair, each live
// device is swept of shard databases of no kept generation and no running
// load. Queries read the map linearizably.
//
// Data plane (gRPC, device ↔ client): a PIR query goes to one replica of
// every shard — every shard, so that no device learns which shard holds
// the record — each answering a query for its own part; a replica that
// fails, or takes more than its share of the caller's deadline, is
// replaced by the next, and one slower than most recent answers is
// hedged (the next replica asked too, the first answer taken). Connections are shared, closed only when idle,
// and kept alive by gRPC pings. Record i lives in shard i mod S at local
// index i div S.
//
// Repair: when a device's lease expires its shard replicas are copied from
// a surviving replica that holds them (the copy checked against the
// source's listing, else the next replica) to the least-loaded live
// devices, device to device (device.CopyFrom: every object checked against
// the checksum its source sent before it is published), and the map
// updated in one transaction. Every repair, and Maintain every
// ReconcileInterval, also reconciles: each live replica is checked against
// its own manifest, and one found short (wiped, cut short, an object its
// device's scrub quarantined) is cleared and copied again. A device whose
// lease was lost while it lived registers again; one that keeps failing
// is asked last (breaker.go). Client.RegisterMetrics exposes what the
// client counts.
package cluster
