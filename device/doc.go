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
// the store is in ISP mode: conventional writes (Put, Delete) are refused.
//
// The wire contract is protobuf: device/devicepb/device.proto defines the
// service rosemary.device.v1.Device and its messages (limbs as one bytes
// value each, little-endian uint64 coefficients); the generated code is
// committed (go generate ./device/devicepb regenerates it). A thin adapter
// implements the generated DeviceServer over Device: converting a request
// into the device's own types (types.go, convert.go) enforces the wire
// limits (MaxMessageBytes, MaxNameBytes, MaxLimbCoeffs, MaxBindings), and
// a request that does not parse or breaks a limit fails with
// InvalidArgument; device errors map to status codes (ErrInvalid,
// ErrNotFound, ErrExhausted, ISP mode). Device memory is bounded by Limits.
// The server also offers the standard gRPC health service (SERVING while
// it serves, NOT_SERVING during shutdown) and server reflection, and logs
// with log/slog (one Debug line per RPC, Warn per failed RPC). Serve shuts
// down gracefully when its context ends.
//
// Payload bytes are counted by gRPC stats handlers on both sides (the
// Client's Traffic, the device's Stats.WireBytesIn/Out): the
// protobuf-encoded size of each device-service message, without gRPC and
// HTTP/2 framing.
//
// Client is the host side; it implements engine.ResidentDevice, so an
// engine.Executor keeps device values on the device and passes stored
// objects and keys by reference: only query and intermediate ciphertexts
// cross. InProcess runs the same gRPC service over an in-memory listener.
package device
