package api

import (
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// The device's request and reply types: what Device takes and returns.
// The wire carries their protobuf counterparts (package devicepb);
// convert.go maps between the two and validates what arrives.

// Limits every request is checked against when it is converted from the
// wire.
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
	// the same with QueryLWE's query and answer as bytes.
	WireVersion = 4
)

// Operand sources of a Binding.
const (
	SourceInline   uint8 = 1 // limbs carried by the request
	SourceStored   uint8 = 2 // a stored object (from poly Poly on), read in place
	SourceResident uint8 = 3 // the result of an earlier job, held in device DRAM
)

// Binding binds one object of a program (space, ID, and its shape as the
// program sees it: Polys × Limbs, limb l of poly p at index p·Limbs+l) to
// an operand.
type Binding struct {
	Space  uint8
	ID     uint32
	Polys  uint32
	Limbs  uint32
	Source uint8
	Inline [][]uint64 // SourceInline
	Name   string     // SourceStored: the object
	Poly   uint32     // SourceStored: first poly of the instance
	Job    uint64     // SourceResident
}

// SendRequest starts a job: Program (a name set by ProgSet) runs on the
// interpreter with Inputs and Key bound; its Output object becomes the
// job's result, held on the device until released. An empty Program makes
// a holding job whose result is its one inline input (an upload).
type SendRequest struct {
	Program string
	Inputs  []Binding
	HasKey  bool
	Key     Binding
	Output  Binding // Space, ID, Polys, Limbs only
}

// SendResponse names the job.
type SendResponse struct{ Job uint64 }

// RecvRequest waits for a job; Fetch returns its result's limbs, Release
// drops the job afterwards.
type RecvRequest struct {
	Job     uint64
	Fetch   bool
	Release bool
}

// RecvResponse is a finished job.
type RecvResponse struct {
	Polys        uint32
	Data         [][]uint64 // when fetched
	Instructions uint64
	MicroOps     uint64
	StoreBytes   uint64 // bytes the job read from the store
}

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

// StreamValues are the instances of one node of a segment.
type StreamValues struct {
	Node      int          // IR node
	Instances [][][]uint64 // each instance: its limbs
}

// RunStreamRequest runs a registered stream program: Inputs give every
// input node's instances, Stored binds every stored node to store
// objects, Keys every evaluation key the program names.
type RunStreamRequest struct {
	Program string
	Inputs  []StreamValues
	Stored  []StoredBinding
	Keys    []KeyBinding
}

// RunStreamResponse holds the instances of every node the segment hands
// back, and what the run did.
type RunStreamResponse struct {
	Outputs      []StreamValues
	StoreBytes   uint64 // read from the store
	Instructions uint64
	MicroOps     uint64
	Bodies       uint64 // body programs run
	Stored       uint64 // stored instances read
	PeakBytes    uint64 // value memory held at once
	Seconds      float64
	Cores        []CoreUse // the run's stages on the device's shared cores
}

// CoreUse is one stage of a run on a device that shares its cores chunk
// by chunk: its wall time, and what its chunks waited for a core and held
// one (summed over the stage's workers).
type CoreUse struct {
	Stage                    string
	Seconds                  float64
	Chunks                   uint64
	WaitSeconds, HeldSeconds float64
	MaxWaitSeconds           float64
	MaxChunkSeconds          float64
	Batch                    uint64 // queries sharing the stage (a scan pass)
	MinLimit                 uint32 // the fewest cores granted during the stage
}

// StoredBinding binds a Stored node of a segment to store objects:
// instance k sits at position p = TilePosition(k, count, RowLength,
// TileRows), poly p mod PerObject of the object named
// StoredObjectName(Prefix, p / PerObject).
type StoredBinding struct {
	Node      int // IR node
	Prefix    string
	PerObject int64
	// RowLength and TileRows (0: none) tile the instances: read as rows of
	// RowLength, each TileRows rows are stored column by column, the order
	// in which a multiply-accumulate loop of TileRows lanes reads them.
	RowLength, TileRows int64
	// Stride (0: none) interleaves several stored nodes over one sequence
	// of objects: instance k sits at position Offset + k·Stride (tiles
	// then do not apply).
	Stride, Offset int64
}

// KeyBinding binds an evaluation key of a segment ("rlk", "gal:<g>") to a
// stored key object.
type KeyBinding struct {
	Key    string
	Object string
}

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
