package api

import (
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// The device's contract is package devicepb's messages, used as they are;
// here are its limits and enums.

// Limits every request is checked against (check.go, limbs.go).
const (
	// MaxMessageBytes bounds one encoded message (requests and replies).
	MaxMessageBytes = 64 << 20
	// MaxNameBytes bounds object and program names.
	MaxNameBytes = 255
	// MaxLimbCoeffs bounds the coefficients of one limb (N ≤ 2^17).
	MaxLimbCoeffs = 1 << 17
	// MaxBindings bounds the operands of one Send.
	MaxBindings = 16
	// MaxRelease bounds the jobs of one Release.
	MaxRelease = 1 << 16

	// WireVersion is ConfigResponse.WireVersion: 1 was the hand-written
	// binary codec, 2 the protobuf contract of devicepb, 3 the same with
	// objects in their stored word size, trailing zero words left out, 4
	// the same with QueryLWE's query and answer as bytes, 5 the same with
	// QueryLWE's packed mode (packing_keys, packed), 6 the same with
	// packed requests of several queries (more, more_packed), 7 the same
	// with the packing version named in a packed request (packing), 8
	// the same with lwepir.PackV3 (two packing keys) among the versions.
	WireVersion = 8
	// PackedWireVersion is the first wire version with QueryLWE's packed
	// mode: a client asks an older device for the ring stage.
	PackedWireVersion = 5
	// BatchWireVersion is the first wire version whose packed requests may
	// carry more queries (LWEQueryRequest.more): a client asks an older
	// device one query a request.
	BatchWireVersion = 6
	// PackingWireVersion is the first wire version that reads a packed
	// request's packing version: an older device packs with
	// lwepir.PackV1's gadget only.
	PackingWireVersion = 7
	// TwoKeysWireVersion is the first wire version that packs with
	// lwepir.PackV3: a client creates PackV2 databases through a device of
	// wire 7.
	TwoKeysWireVersion = 8
	// MaxPackedBatch bounds the queries of one packed request, the first
	// included: what the device decodes and packs for one call.
	MaxPackedBatch = 32
	// MaxWaitingQueries bounds the LWE queries that wait for (and are in)
	// one pass of a database's scan, and those of one packing batch: a
	// request that would exceed it while others wait is refused busy. A
	// client keeps no more than this in flight to one database.
	MaxWaitingQueries = 64
)

// MaxListObjects bounds one List reply.
const MaxListObjects = 1 << 16

// Stream programs: a device segment of a Plan, registered once
// (SetStream, the paper's ProgSet) and run per query (RunStream, the
// paper's Send + Recv): its stored operands stream from the store, only
// its inputs and outputs cross the link.

// MaxStreamInstances bounds the instances of one node a stream request or
// reply carries; MaxStreamBindings the stored nodes and the keys it binds.
const (
	MaxStreamInstances = 1 << 16
	MaxStreamBindings  = 1 << 12
)

// Role is what an identity is to a database (the contract's enum).
type Role = devicepb.Role

// Roles a Grant gives.
const (
	RoleNone   = devicepb.Role_ROLE_NONE   // takes a grant away
	RoleReader = devicepb.Role_ROLE_READER // may query the database
	RoleOwner  = devicepb.Role_ROLE_OWNER  // may do everything
)

// MaxIdentityBytes bounds an identity (a certificate's common name).
const MaxIdentityBytes = 64
