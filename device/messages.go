package device

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
}

func (*ConfigRequest) msgType() uint8   { return msgConfigReq }
func (*ConfigRequest) encode(*writer)   {}
func (*ConfigRequest) decode(*reader)   {}
func (*ConfigResponse) msgType() uint8  { return msgConfigResp }
func (*ProgSetRequest) msgType() uint8  { return msgProgSetReq }
func (*ProgSetResponse) msgType() uint8 { return msgProgSetResp }
func (*PutRequest) msgType() uint8      { return msgPutReq }
func (*PutResponse) msgType() uint8     { return msgPutResp }
func (*GetRequest) msgType() uint8      { return msgGetReq }
func (*GetResponse) msgType() uint8     { return msgGetResp }
func (*DeleteRequest) msgType() uint8   { return msgDeleteReq }
func (*DeleteResponse) msgType() uint8  { return msgDeleteResp }
func (*DeleteResponse) encode(*writer)  {}
func (*DeleteResponse) decode(*reader)  {}
func (*SendRequest) msgType() uint8     { return msgSendReq }
func (*SendResponse) msgType() uint8    { return msgSendResp }
func (*RecvRequest) msgType() uint8     { return msgRecvReq }
func (*RecvResponse) msgType() uint8    { return msgRecvResp }
func (*ReleaseRequest) msgType() uint8  { return msgReleaseReq }
func (*ReleaseResponse) msgType() uint8 { return msgReleaseResp }
func (*ReleaseResponse) encode(*writer) {}
func (*ReleaseResponse) decode(*reader) {}
func (*StatsRequest) msgType() uint8    { return msgStatsReq }
func (*StatsRequest) encode(*writer)    {}
func (*StatsRequest) decode(*reader)    {}
func (*StatsResponse) msgType() uint8   { return msgStatsResp }

func (m *ConfigResponse) encode(w *writer) {
	w.u32(m.WireVersion)
	w.u32(m.Channels)
	w.u32(m.PageSize)
	w.u32(m.WordBytes)
	w.u64(m.MaxMessageBytes)
	w.u64(m.MaxResidentBytes)
	w.u32(m.MaxPrograms)
	w.u32(m.Workers)
	w.u32(m.Objects)
	w.u32(m.Programs)
}

func (m *ConfigResponse) decode(r *reader) {
	m.WireVersion = r.u32("wire version")
	m.Channels = r.u32("channels")
	m.PageSize = r.u32("page size")
	m.WordBytes = r.u32("word bytes")
	m.MaxMessageBytes = r.u64("max message")
	m.MaxResidentBytes = r.u64("max resident")
	m.MaxPrograms = r.u32("max programs")
	m.Workers = r.u32("workers")
	m.Objects = r.u32("objects")
	m.Programs = r.u32("programs")
}

func (m *ProgSetRequest) encode(w *writer) { w.str(m.Name); w.bytes(m.Program) }
func (m *ProgSetRequest) decode(r *reader) {
	m.Name = r.str("program name")
	m.Program = r.bytes("program", MaxMessageBytes)
}

func (m *ProgSetResponse) encode(w *writer) { w.u32(m.Instructions) }
func (m *ProgSetResponse) decode(r *reader) { m.Instructions = r.u32("instructions") }

func (m *PutRequest) encode(w *writer) {
	w.str(m.Name)
	w.u8(m.Kind)
	w.u32(m.Polys)
	w.u32(m.Limbs)
	w.limbs(m.Data)
}

func (m *PutRequest) decode(r *reader) {
	m.Name = r.str("object name")
	m.Kind = r.u8("kind")
	m.Polys = r.u32("polys")
	m.Limbs = r.u32("limbs")
	m.Data = r.limbs("object")
}

func (m *PutResponse) encode(w *writer) { w.u64(m.Generation); w.u64(m.Bytes) }
func (m *PutResponse) decode(r *reader) { m.Generation = r.u64("generation"); m.Bytes = r.u64("bytes") }

func (m *GetRequest) encode(w *writer) { w.str(m.Name) }
func (m *GetRequest) decode(r *reader) { m.Name = r.str("object name") }

func (m *GetResponse) encode(w *writer) {
	w.u8(m.Kind)
	w.u32(m.Polys)
	w.u32(m.Limbs)
	w.limbs(m.Data)
}

func (m *GetResponse) decode(r *reader) {
	m.Kind = r.u8("kind")
	m.Polys = r.u32("polys")
	m.Limbs = r.u32("limbs")
	m.Data = r.limbs("object")
}

func (m *DeleteRequest) encode(w *writer) { w.str(m.Name) }
func (m *DeleteRequest) decode(r *reader) { m.Name = r.str("object name") }

func (b *Binding) encode(w *writer) {
	w.u8(b.Space)
	w.u32(b.ID)
	w.u32(b.Polys)
	w.u32(b.Limbs)
	w.u8(b.Source)
	switch b.Source {
	case SourceInline:
		w.limbs(b.Inline)
	case SourceStored:
		w.str(b.Name)
		w.u32(b.Poly)
	case SourceResident:
		w.u64(b.Job)
	}
}

func (b *Binding) decode(r *reader, withSource bool) {
	b.Space = r.u8("space")
	b.ID = r.u32("object id")
	b.Polys = r.u32("polys")
	b.Limbs = r.u32("limbs")
	b.Source = r.u8("source")
	if !withSource {
		if r.err == nil && b.Source != 0 {
			r.fail("output binding with source %d", b.Source)
		}
		return
	}
	switch b.Source {
	case SourceInline:
		b.Inline = r.limbs("inline operand")
	case SourceStored:
		b.Name = r.str("stored object name")
		b.Poly = r.u32("first poly")
	case SourceResident:
		b.Job = r.u64("job")
	default:
		r.fail("operand source %d (want 1 inline, 2 stored, 3 resident)", b.Source)
	}
}

func (m *SendRequest) encode(w *writer) {
	w.str(m.Program)
	w.u32(uint32(len(m.Inputs)))
	for i := range m.Inputs {
		m.Inputs[i].encode(w)
	}
	w.bool(m.HasKey)
	if m.HasKey {
		m.Key.encode(w)
	}
	out := m.Output
	out.Source = 0
	out.encode(w)
}

func (m *SendRequest) decode(r *reader) {
	m.Program = r.str("program name")
	n := r.u32("input count")
	if r.err == nil && n > MaxBindings {
		r.fail("%d inputs exceed %d", n, MaxBindings)
		return
	}
	for i := uint32(0); i < n && r.err == nil; i++ {
		var b Binding
		b.decode(r, true)
		m.Inputs = append(m.Inputs, b)
	}
	m.HasKey = r.bool("has key")
	if m.HasKey {
		m.Key.decode(r, true)
	}
	m.Output.decode(r, false)
}

func (m *SendResponse) encode(w *writer) { w.u64(m.Job) }
func (m *SendResponse) decode(r *reader) { m.Job = r.u64("job") }

func (m *RecvRequest) encode(w *writer) { w.u64(m.Job); w.bool(m.Fetch); w.bool(m.Release) }
func (m *RecvRequest) decode(r *reader) {
	m.Job = r.u64("job")
	m.Fetch = r.bool("fetch")
	m.Release = r.bool("release")
}

func (m *RecvResponse) encode(w *writer) {
	w.u32(m.Polys)
	w.limbs(m.Data)
	w.u64(m.Instructions)
	w.u64(m.MicroOps)
	w.u64(m.StoreBytes)
}

func (m *RecvResponse) decode(r *reader) {
	m.Polys = r.u32("polys")
	m.Data = r.limbs("result")
	m.Instructions = r.u64("instructions")
	m.MicroOps = r.u64("micro-ops")
	m.StoreBytes = r.u64("store bytes")
}

func (m *ReleaseRequest) encode(w *writer) {
	w.u32(uint32(len(m.Jobs)))
	for _, j := range m.Jobs {
		w.u64(j)
	}
}

// maxRelease bounds the jobs of one Release.
const maxRelease = 1 << 16

func (m *ReleaseRequest) decode(r *reader) {
	n := r.u32("job count")
	if r.err == nil && n > maxRelease {
		r.fail("%d jobs exceed %d", n, maxRelease)
		return
	}
	for i := uint32(0); i < n && r.err == nil; i++ {
		m.Jobs = append(m.Jobs, r.u64("job"))
	}
}

func (m *StatsResponse) encode(w *writer) {
	for _, v := range []uint64{m.StoreBytesRead, m.WireBytesIn, m.WireBytesOut, m.MicroOps, m.Instructions, m.Jobs, m.ResidentBytes, m.PeakResidentBytes} {
		w.u64(v)
	}
}

func (m *StatsResponse) decode(r *reader) {
	for _, p := range []*uint64{&m.StoreBytesRead, &m.WireBytesIn, &m.WireBytesOut, &m.MicroOps, &m.Instructions, &m.Jobs, &m.ResidentBytes, &m.PeakResidentBytes} {
		*p = r.u64("counter")
	}
}
