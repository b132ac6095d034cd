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
// There is no protoc here: the service descriptor is written by hand and
// the messages use a small versioned binary codec (wire.go) registered with
// google.golang.org/grpc/encoding. Every decoder enforces length limits
// (MaxMessageBytes, MaxNameBytes, MaxLimbCoeffs, MaxBindings) and rejects
// truncation and trailing bytes; device memory is bounded by Limits.
//
// Client is the host side; it implements engine.ResidentDevice, so an
// engine.Executor keeps device values on the device and passes stored
// objects and keys by reference: only query and intermediate ciphertexts
// cross. InProcess runs the same gRPC service over an in-memory listener.
package device
