// Package cluster spreads one encrypted database over many Rosemary
// devices, coordinated by etcd.
//
// Control plane (etcd, metadata only): each device registers under a lease
// kept alive while it runs (/rosemary/devices/<id>: its address and
// space); each database has a shard map (/rosemary/dbs/<owner>/<name>:
// its kind, records, generation, and per shard the replica devices).
// etcd is reached over mutual TLS and its RBAC lets a device write only
// its own registry key and a user only the maps under its own name
// (access.go). A load writes
// every shard replica of generation g+1 as its own database on its device
// (client library: published locally, atomically), then publishes g+1 with
// one etcd transaction conditioned on the map's revision — readers see g
// or g+1, never a mix, because every generation's shards have their own
// names. Queries read the map linearizably.
//
// Data plane (gRPC, device ↔ client): a PIR query goes to one replica of
// every shard — every shard, so that no device learns which shard holds
// the record — each answering a query for its own part; a replica that
// fails or is slow is retried on the next. Record i lives in shard
// i mod S at local index i div S.
//
// Repair: when a device's lease expires its shard replicas are copied from
// a surviving replica to the least-loaded live devices, device to device
// (device.CopyFrom), and the map updated in one transaction.
package cluster
