package api

import (
	"github.com/rosemary-fhe/rosemary/device/object"
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

// ConfigRequest asks for the device's parameters (the paper's config()).
type ConfigRequest struct{}

// ConfigResponse describes the device: its protocol, store layout and
// limits, and what it holds.
type ConfigResponse struct {
	WireVersion      uint32
	Channels         uint32 // store channels
	PageSize         uint32 // store page size in bytes
	WordBytes        uint32 // bytes per stored coefficient
	MaxMessageBytes  uint64
	MaxResidentBytes uint64 // device DRAM for uploads and results
	MaxPrograms      uint32
	Workers          uint32 // jobs executing at once
	Objects          uint32 // stored objects
	Programs         uint32 // programs set
	// Caller is the caller's identity as the device sees it (its
	// certificate's common name; empty for an in-process caller).
	Caller string
}

// ProgSetRequest registers an encoded mProgram under a name.
type ProgSetRequest struct {
	Name    string
	Program []byte // isa.Program.MarshalBinary
}

// ProgSetResponse acknowledges a ProgSet.
type ProgSetResponse struct {
	Instructions uint32
}

// PutRequest stores an object limb by limb: Polys × Limbs limbs of 2^LogN
// coefficients in poly-major order.
type PutRequest struct {
	Name  string
	Kind  object.Kind
	Polys uint32
	Limbs uint32
	Data  [][]uint64
	// WordBytes is the stored word size: 8 (0 means 8), or 2 for values
	// below 2^16.
	WordBytes uint8
	// IfGeneration, if set, makes the put a compare-and-swap: the object
	// is stored only if its current generation is *IfGeneration (0: only
	// if it does not exist); otherwise the put fails with ErrStale.
	IfGeneration *object.Generation
}

// PutResponse reports the published generation.
type PutResponse struct {
	Generation uint64
	Bytes      uint64
}

// GetRequest reads a stored object.
type GetRequest struct{ Name string }

// GetResponse is a stored object.
type GetResponse struct {
	Kind  object.Kind
	Polys uint32
	Limbs uint32
	Data  [][]uint64
	// CRC32C is the object's checksum as stored (object.Checksum of its
	// limbs in their stored word size), nil if the device sent none. A
	// copy is checked against it before it is published.
	CRC32C *uint32
	// WordBytes is the stored word size (8, 2 or 1; 0 means 8): the wire
	// carries words of that size.
	WordBytes uint8
}

// DeleteRequest deletes a stored object.
type DeleteRequest struct{ Name string }

// DeleteResponse acknowledges a Delete.
type DeleteResponse struct{}

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

// ReleaseRequest drops finished jobs' results.
type ReleaseRequest struct{ Jobs []uint64 }

// ReleaseResponse acknowledges a Release.
type ReleaseResponse struct{}

// StatsRequest asks for the device counters.
type StatsRequest struct{}

// StatsResponse holds the device counters since it started.
type StatsResponse struct {
	StoreBytesRead    uint64 // read from the store by jobs (LD from NAND)
	WireBytesIn       uint64 // request payloads received
	WireBytesOut      uint64 // reply payloads sent
	MicroOps          uint64
	Instructions      uint64
	Jobs              uint64 // jobs run (holding jobs included)
	ResidentBytes     uint64 // device DRAM held now
	PeakResidentBytes uint64
	// PeakRSSBytes is the device process's peak resident set (Linux
	// VmHWM; 0 where unknown): what the whole daemon needed at most.
	PeakRSSBytes uint64
	// PeakAnonRSSBytes and PeakFileRSSBytes split the resident set
	// (RssAnon: the process's own memory; RssFile: mapped files, the
	// store's pages a scan reads in place, which are page cache) at their
	// largest, sampled every 20 ms while jobs ran (0 if unknown).
	PeakAnonRSSBytes uint64
	PeakFileRSSBytes uint64
}

// MaxListObjects bounds one List reply.
const MaxListObjects = 1 << 16

// ListRequest asks for the objects whose names start with Prefix.
type ListRequest struct {
	Prefix string
	Max    int // 0: MaxListObjects
}

// ListResponse describes stored objects in name order.
type ListResponse struct {
	Objects   []ObjectInfo
	Truncated bool
}

// ObjectInfo describes the current generation of a stored object.
type ObjectInfo struct {
	Name       string
	Kind       object.Kind
	Shape      object.Shape
	Generation object.Generation
	Bytes      int64 // payload bytes (all limbs)
	// Owner created the object's database (its access list's owner; ""
	// where the device keeps none): a cluster's coordinator sweeps a
	// database's stale shards only where they are its owner's.
	Owner string
}

// CopyFromRequest asks a device to copy the objects under Prefix from the
// device at Source.
type CopyFromRequest struct {
	Source string
	Prefix string
}

// CopyFromResponse reports what was copied.
type CopyFromResponse struct {
	Objects int
	Bytes   int64
}

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

// SetStreamRequest registers a stream program (lower.StreamProgram,
// MarshalBinary) under a name. Setting the same bytes again is a no-op.
type SetStreamRequest struct {
	Name    string
	Program []byte
}

// SetStreamResponse acknowledges a SetStream.
type SetStreamResponse struct {
	Nodes uint32
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

// Role is what an identity is to a database.
type Role uint8

// Roles a Grant gives.
const (
	RoleNone   Role = 0 // takes a grant away
	RoleReader Role = 1 // may query the database
	RoleOwner  Role = 2 // may do everything
)

// MaxIdentityBytes bounds an identity (a certificate's common name).
const MaxIdentityBytes = 64

// GrantRequest gives Identity the Role on Database.
type GrantRequest struct {
	Database string
	Identity string
	Role     Role
}

// GrantResponse acknowledges a Grant.
type GrantResponse struct{}
