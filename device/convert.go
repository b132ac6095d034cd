package device

import (
	"encoding/binary"
	"fmt"
	"math"

	pb "github.com/rosemary-fhe/rosemary/device/devicepb"
)

// Conversions between the wire messages (package devicepb) and the device's
// own types. The ...FromProto functions of requests run on the device and
// are where the wire limits are enforced: a request that breaks one fails
// with an error wrapping ErrInvalid (InvalidArgument), never a panic. The
// reply conversions run in the Client and check what the device sent.
//
// Limbs travel as one bytes value per limb holding its coefficients as
// little-endian uint64s (8 bytes per coefficient).

// encodeLimbs lays limbs out as little-endian bytes, one value per limb
// (sharing one allocation).
func encodeLimbs(limbs [][]uint64) [][]byte {
	if len(limbs) == 0 {
		return nil
	}
	total := 0
	for _, l := range limbs {
		total += 8 * len(l)
	}
	flat := make([]byte, total)
	out := make([][]byte, len(limbs))
	off := 0
	for i, l := range limbs {
		b := flat[off : off+8*len(l) : off+8*len(l)]
		for j, c := range l {
			binary.LittleEndian.PutUint64(b[8*j:], c)
		}
		out[i] = b
		off += len(b)
	}
	return out
}

// decodeLimbs checks and decodes limbs: every limb holds the same number of
// coefficients, 1..MaxLimbCoeffs, 8 bytes each, MaxMessageBytes at most in
// all. No limbs decode to nil.
func decodeLimbs(what string, data [][]byte) ([][]uint64, error) {
	if len(data) == 0 {
		return nil, nil
	}
	size := len(data[0])
	if size == 0 || size%8 != 0 || size/8 > MaxLimbCoeffs {
		return nil, fmt.Errorf("%w: %s: limb of %d bytes (want 8·N bytes, 1 ≤ N ≤ %d)", ErrInvalid, what, size, MaxLimbCoeffs)
	}
	for i, l := range data {
		if len(l) != size {
			return nil, fmt.Errorf("%w: %s: limb %d has %d bytes, limb 0 has %d", ErrInvalid, what, i, len(l), size)
		}
	}
	if total := int64(len(data)) * int64(size); total > MaxMessageBytes {
		return nil, fmt.Errorf("%w: %s: %d limbs of %d bytes exceed %d bytes", ErrInvalid, what, len(data), size, MaxMessageBytes)
	}
	n := size / 8
	flat := make([]uint64, len(data)*n)
	out := make([][]uint64, len(data))
	for i, l := range data {
		dst := flat[i*n : (i+1)*n : (i+1)*n]
		for j := range dst {
			dst[j] = binary.LittleEndian.Uint64(l[8*j:])
		}
		out[i] = dst
	}
	return out, nil
}

func checkNameLen(what, name string) error {
	if len(name) > MaxNameBytes {
		return fmt.Errorf("%w: %s of %d bytes exceeds %d", ErrInvalid, what, len(name), MaxNameBytes)
	}
	return nil
}

func toU8(what string, v uint32) (uint8, error) {
	if v > math.MaxUint8 {
		return 0, fmt.Errorf("%w: %s %d exceeds 255", ErrInvalid, what, v)
	}
	return uint8(v), nil
}

// Requests: wire → device (on the device).

func progSetFromProto(m *pb.ProgSetRequest) (*ProgSetRequest, error) {
	if err := checkNameLen("program name", m.GetName()); err != nil {
		return nil, err
	}
	if len(m.GetProgram()) > MaxMessageBytes {
		return nil, fmt.Errorf("%w: program of %d bytes exceeds %d", ErrInvalid, len(m.GetProgram()), MaxMessageBytes)
	}
	return &ProgSetRequest{Name: m.GetName(), Program: m.GetProgram()}, nil
}

// objectFromProto checks and decodes the kind and the limbs of an object
// as a put sends it and a get returns it.
func objectFromProto(kind uint32, data [][]byte) (uint8, [][]uint64, error) {
	k, err := toU8("kind", kind)
	if err != nil {
		return 0, nil, err
	}
	limbs, err := decodeLimbs("object", data)
	if err != nil {
		return 0, nil, err
	}
	return k, limbs, nil
}

func putFromProto(m *pb.PutRequest) (*PutRequest, error) {
	if err := checkNameLen("object name", m.GetName()); err != nil {
		return nil, err
	}
	kind, data, err := objectFromProto(m.GetKind(), m.GetData())
	if err != nil {
		return nil, err
	}
	wb, err := toU8("word bytes", m.GetWordBytes())
	if err != nil {
		return nil, err
	}
	return &PutRequest{Name: m.GetName(), Kind: kind, Polys: m.GetPolys(), Limbs: m.GetLimbs(), Data: data, WordBytes: wb}, nil
}

func getFromProto(m *pb.GetRequest) (*GetRequest, error) {
	if err := checkNameLen("object name", m.GetName()); err != nil {
		return nil, err
	}
	return &GetRequest{Name: m.GetName()}, nil
}

func deleteFromProto(m *pb.DeleteRequest) (*DeleteRequest, error) {
	if err := checkNameLen("object name", m.GetName()); err != nil {
		return nil, err
	}
	return &DeleteRequest{Name: m.GetName()}, nil
}

func bindingFromProto(what string, m *pb.Binding) (Binding, error) {
	space, err := toU8(what+" space", m.GetSpace())
	if err != nil {
		return Binding{}, err
	}
	b := Binding{Space: space, ID: m.GetId(), Polys: m.GetPolys(), Limbs: m.GetLimbs()}
	switch src := m.GetSource().(type) {
	case *pb.Binding_Inline:
		b.Source = SourceInline
		if b.Inline, err = decodeLimbs(what, src.Inline.GetData()); err != nil {
			return Binding{}, err
		}
	case *pb.Binding_Stored:
		if err := checkNameLen(what+" stored object name", src.Stored.GetName()); err != nil {
			return Binding{}, err
		}
		b.Source, b.Name, b.Poly = SourceStored, src.Stored.GetName(), src.Stored.GetPoly()
	case *pb.Binding_ResidentJob:
		b.Source, b.Job = SourceResident, src.ResidentJob
	default:
		return Binding{}, fmt.Errorf("%w: %s has no source (want inline, stored or resident_job)", ErrInvalid, what)
	}
	return b, nil
}

func sendFromProto(m *pb.SendRequest) (*SendRequest, error) {
	if err := checkNameLen("program name", m.GetProgram()); err != nil {
		return nil, err
	}
	if n := len(m.GetInputs()); n > MaxBindings {
		return nil, fmt.Errorf("%w: %d inputs exceed %d", ErrInvalid, n, MaxBindings)
	}
	req := &SendRequest{Program: m.GetProgram()}
	var total int64
	for i, in := range m.GetInputs() {
		b, err := bindingFromProto(fmt.Sprintf("input %d", i), in)
		if err != nil {
			return nil, err
		}
		total += limbBytes(b.Inline)
		req.Inputs = append(req.Inputs, b)
	}
	if m.GetKey() != nil {
		b, err := bindingFromProto("key", m.GetKey())
		if err != nil {
			return nil, err
		}
		total += limbBytes(b.Inline)
		req.HasKey, req.Key = true, b
	}
	if total > MaxMessageBytes {
		return nil, fmt.Errorf("%w: %d bytes of inline operands exceed %d", ErrInvalid, total, MaxMessageBytes)
	}
	out := m.GetOutput()
	space, err := toU8("output space", out.GetSpace())
	if err != nil {
		return nil, err
	}
	req.Output = Binding{Space: space, ID: out.GetId(), Polys: out.GetPolys(), Limbs: out.GetLimbs()}
	return req, nil
}

func recvFromProto(m *pb.RecvRequest) (*RecvRequest, error) {
	return &RecvRequest{Job: m.GetJob(), Fetch: m.GetFetch(), Release: m.GetRelease()}, nil
}

func releaseFromProto(m *pb.ReleaseRequest) (*ReleaseRequest, error) {
	if n := len(m.GetJobs()); n > maxRelease {
		return nil, fmt.Errorf("%w: %d jobs exceed %d", ErrInvalid, n, maxRelease)
	}
	return &ReleaseRequest{Jobs: m.GetJobs()}, nil
}

func configReqFromProto(*pb.ConfigRequest) (*ConfigRequest, error) { return &ConfigRequest{}, nil }
func statsReqFromProto(*pb.StatsRequest) (*StatsRequest, error)    { return &StatsRequest{}, nil }

// Requests: device → wire (in the Client).

func bindingToProto(b Binding) *pb.Binding {
	m := &pb.Binding{Space: uint32(b.Space), Id: b.ID, Polys: b.Polys, Limbs: b.Limbs}
	switch b.Source {
	case SourceInline:
		m.Source = &pb.Binding_Inline{Inline: &pb.Inline{Data: encodeLimbs(b.Inline)}}
	case SourceStored:
		m.Source = &pb.Binding_Stored{Stored: &pb.Stored{Name: b.Name, Poly: b.Poly}}
	case SourceResident:
		m.Source = &pb.Binding_ResidentJob{ResidentJob: b.Job}
	}
	// Any other source is sent without one; the device refuses it.
	return m
}

func sendToProto(r *SendRequest) *pb.SendRequest {
	m := &pb.SendRequest{Program: r.Program,
		Output: &pb.Object{Space: uint32(r.Output.Space), Id: r.Output.ID, Polys: r.Output.Polys, Limbs: r.Output.Limbs}}
	for _, b := range r.Inputs {
		m.Inputs = append(m.Inputs, bindingToProto(b))
	}
	if r.HasKey {
		m.Key = bindingToProto(r.Key)
	}
	return m
}

func putToProto(r *PutRequest) *pb.PutRequest {
	return &pb.PutRequest{Name: r.Name, Kind: uint32(r.Kind), Polys: r.Polys, Limbs: r.Limbs, Data: encodeLimbs(r.Data), WordBytes: uint32(r.WordBytes)}
}

// Replies: device → wire (on the device).

func configRespToProto(r *ConfigResponse) *pb.ConfigResponse {
	return &pb.ConfigResponse{WireVersion: r.WireVersion, Channels: r.Channels, PageSize: r.PageSize, WordBytes: r.WordBytes,
		MaxMessageBytes: r.MaxMessageBytes, MaxResidentBytes: r.MaxResidentBytes, MaxPrograms: r.MaxPrograms,
		Workers: r.Workers, Objects: r.Objects, Programs: r.Programs}
}

func progSetRespToProto(r *ProgSetResponse) *pb.ProgSetResponse {
	return &pb.ProgSetResponse{Instructions: r.Instructions}
}

func putRespToProto(r *PutResponse) *pb.PutResponse {
	return &pb.PutResponse{Generation: r.Generation, Bytes: r.Bytes}
}

func getRespToProto(r *GetResponse) *pb.GetResponse {
	return &pb.GetResponse{Kind: uint32(r.Kind), Polys: r.Polys, Limbs: r.Limbs, Data: encodeLimbs(r.Data)}
}

func deleteRespToProto(*DeleteResponse) *pb.DeleteResponse    { return &pb.DeleteResponse{} }
func releaseRespToProto(*ReleaseResponse) *pb.ReleaseResponse { return &pb.ReleaseResponse{} }
func sendRespToProto(r *SendResponse) *pb.SendResponse        { return &pb.SendResponse{Job: r.Job} }

func recvRespToProto(r *RecvResponse) *pb.RecvResponse {
	return &pb.RecvResponse{Polys: r.Polys, Data: encodeLimbs(r.Data), Instructions: r.Instructions, MicroOps: r.MicroOps,
		StoreBytes: r.StoreBytes}
}

func statsRespToProto(r *StatsResponse) *pb.StatsResponse {
	return &pb.StatsResponse{StoreBytesRead: r.StoreBytesRead, WireBytesIn: r.WireBytesIn, WireBytesOut: r.WireBytesOut,
		MicroOps: r.MicroOps, Instructions: r.Instructions, Jobs: r.Jobs, ResidentBytes: r.ResidentBytes,
		PeakResidentBytes: r.PeakResidentBytes, PeakRssBytes: r.PeakRSSBytes}
}

// Replies: wire → device (in the Client).

func configRespFromProto(m *pb.ConfigResponse) *ConfigResponse {
	return &ConfigResponse{WireVersion: m.GetWireVersion(), Channels: m.GetChannels(), PageSize: m.GetPageSize(),
		WordBytes: m.GetWordBytes(), MaxMessageBytes: m.GetMaxMessageBytes(), MaxResidentBytes: m.GetMaxResidentBytes(),
		MaxPrograms: m.GetMaxPrograms(), Workers: m.GetWorkers(), Objects: m.GetObjects(), Programs: m.GetPrograms()}
}

func getRespFromProto(m *pb.GetResponse) (*GetResponse, error) {
	kind, data, err := objectFromProto(m.GetKind(), m.GetData())
	if err != nil {
		return nil, err
	}
	return &GetResponse{Kind: kind, Polys: m.GetPolys(), Limbs: m.GetLimbs(), Data: data}, nil
}

func recvRespFromProto(m *pb.RecvResponse) (*RecvResponse, error) {
	data, err := decodeLimbs("result", m.GetData())
	if err != nil {
		return nil, err
	}
	return &RecvResponse{Polys: m.GetPolys(), Data: data, Instructions: m.GetInstructions(), MicroOps: m.GetMicroOps(),
		StoreBytes: m.GetStoreBytes()}, nil
}

func statsRespFromProto(m *pb.StatsResponse) *StatsResponse {
	return &StatsResponse{StoreBytesRead: m.GetStoreBytesRead(), WireBytesIn: m.GetWireBytesIn(),
		WireBytesOut: m.GetWireBytesOut(), MicroOps: m.GetMicroOps(), Instructions: m.GetInstructions(), Jobs: m.GetJobs(),
		ResidentBytes: m.GetResidentBytes(), PeakResidentBytes: m.GetPeakResidentBytes(), PeakRSSBytes: m.GetPeakRssBytes()}
}
