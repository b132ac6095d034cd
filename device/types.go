package device

// The device's own request and reply types: the host API that Device
// implements and Client exposes. The wire carries their protobuf
// counterparts (package devicepb); convert.go maps between the two and
// validates what arrives.

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
	// maxRelease bounds the jobs of one Release.
	maxRelease = 1 << 16

	// wireVersion is ConfigResponse.WireVersion: 1 was the hand-written
	// binary codec, 2 is the protobuf contract of devicepb.
	wireVersion = 2
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
	Kind  uint8 // store.Kind
	Polys uint32
	Limbs uint32
	Data  [][]uint64
	// WordBytes is the stored word size: 8 (0 means 8), or 2 for values
	// below 2^16.
	WordBytes uint8
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
	Kind  uint8
	Polys uint32
	Limbs uint32
	Data  [][]uint64
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
}

// limbBytes is the payload size of limbs.
func limbBytes(l [][]uint64) int64 {
	if len(l) == 0 {
		return 0
	}
	return int64(len(l)) * int64(len(l[0])) * 8
}
