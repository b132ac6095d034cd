// Package device is Rosemary's in-storage device: a gRPC service over an
// object store (package store) implementing the host API of the paper
// (Table II and config()):
//
//	Config              the device's parameters and limits
//	ProgSet(name, p)    register an encoded mProgram (package isa)
//	Put / Get / Delete  ciphertexts, plaintexts and keys, stored limb by limb
//	                    in the store's channel-interleaved layout
//	Send(operands, p)   start a job → job id
//	Recv(job)           wait for a job, optionally fetch its result
//	Release(jobs)       drop job results held in device DRAM
//	Stats               bytes read from the store, bytes over the wire,
//	                    micro-ops executed
//
// A job runs its mProgram on the interpreter (package engine) with an
// ObjectMemory whose operands are inline limbs, the results of earlier jobs
// held in device DRAM, or stored objects read limb by limb straight from
// the store (LD from NAND, no copy through the host). While any job runs
// the store is in ISP mode: conventional writes (Put, Delete) wait for it
// to end. New runs pass a waiting write for at most Limits.WriteWait, then
// wait behind it (ispgate.go), so writes are not starved by steady queries.
// Writes go side by side: a small one does not wait for a large one of
// another object.
//
// The contract is package device/api: Device implements api.Device, the
// interface every host-side caller uses, and the gRPC service is
// api.NewServer(d) (the wire is device/api/devicepb/device.proto; limbs as
// one bytes value each, little-endian uint64 coefficients). Converting a
// request from the wire enforces the limits (api.MaxMessageBytes and
// friends), and a request that does not parse or breaks a limit fails
// with InvalidArgument; device errors map to status codes (api.ErrInvalid,
// api.ErrNotFound, api.ErrExhausted, ISP mode). Device memory is bounded
// by Limits. The server also offers the standard gRPC health service
// (SERVING while it serves, NOT_SERVING during shutdown) and server
// reflection, and logs with log/slog (one Debug line per RPC, Warn per
// failed RPC). Serve shuts down gracefully when its context ends.
//
// Payload bytes are counted by api.PayloadCounter on both sides (the
// remote client's Traffic, the device's Stats.WireBytesIn/Out): the
// protobuf-encoded size of each device-service message, without gRPC and
// HTTP/2 framing.
//
// Integrity (copy.go, scrub.go): Get sends an object with its CRC-32C
// (object.Checksum, computed from pages whose own CRCs checked out);
// CopyFrom, the device-to-device copy a cluster repairs with, checks it
// before publishing (ErrCopyChecksum, gRPC DataLoss). Scrub reads every
// stored page and quarantines (deletes) an object that fails its CRCs, so
// no query reads it and the cluster copies it back from a healthy
// replica; ScrubEvery runs it periodically (`device serve
// --scrub-interval`).
//
// The host side is package device/remote (a gRPC client, itself an
// api.Device) and package device/resident (an engine.ResidentDevice over
// any api.Device, so an engine.Executor keeps device values on the device
// and passes stored objects and keys by reference). InProcess runs the
// gRPC service over an in-memory listener and returns a remote client of
// it.
package device
