package api

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// Conversions between the wire messages (package devicepb) and the device's
// own types. The ...FromProto functions of requests run on the server and
// are where the wire limits are enforced: a request that breaks one fails
// with an error wrapping ErrInvalid (InvalidArgument), never a panic. The
// reply conversions run in the client and check what the device sent.
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

func toU8(what string, v uint32) (uint8, error) {
	if v > math.MaxUint8 {
		return 0, fmt.Errorf("%w: %s %d exceeds 255", ErrInvalid, what, v)
	}
	return uint8(v), nil
}

func bindingFromProto(what string, m *devicepb.Binding) (Binding, error) {
	space, err := toU8(what+" space", m.GetSpace())
	if err != nil {
		return Binding{}, err
	}
	b := Binding{Space: space, ID: m.GetId(), Polys: m.GetPolys(), Limbs: m.GetLimbs()}
	switch src := m.GetSource().(type) {
	case *devicepb.Binding_Inline:
		b.Source = SourceInline
		if b.Inline, err = decodeLimbs(what, src.Inline.GetData()); err != nil {
			return Binding{}, err
		}
	case *devicepb.Binding_Stored:
		if err := CheckName(what+" stored object name", src.Stored.GetName()); err != nil {
			return Binding{}, err
		}
		b.Source, b.Name, b.Poly = SourceStored, src.Stored.GetName(), src.Stored.GetPoly()
	case *devicepb.Binding_ResidentJob:
		b.Source, b.Job = SourceResident, src.ResidentJob
	default:
		return Binding{}, fmt.Errorf("%w: %s has no source (want inline, stored or resident_job)", ErrInvalid, what)
	}
	return b, nil
}

func sendFromProto(m *devicepb.SendRequest) (*SendRequest, error) {
	if err := CheckName("program name", m.GetProgram()); err != nil {
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

func recvFromProto(m *devicepb.RecvRequest) (*RecvRequest, error) {
	return &RecvRequest{Job: m.GetJob(), Fetch: m.GetFetch(), Release: m.GetRelease()}, nil
}

// Requests: device → wire (in the client).

func bindingToProto(b Binding) *devicepb.Binding {
	m := &devicepb.Binding{Space: uint32(b.Space), Id: b.ID, Polys: b.Polys, Limbs: b.Limbs}
	switch b.Source {
	case SourceInline:
		m.Source = &devicepb.Binding_Inline{Inline: &devicepb.Inline{Data: encodeLimbs(b.Inline)}}
	case SourceStored:
		m.Source = &devicepb.Binding_Stored{Stored: &devicepb.Stored{Name: b.Name, Poly: b.Poly}}
	case SourceResident:
		m.Source = &devicepb.Binding_ResidentJob{ResidentJob: b.Job}
	}
	// Any other source is sent without one; the device refuses it.
	return m
}

func sendToProto(r *SendRequest) *devicepb.SendRequest {
	m := &devicepb.SendRequest{Program: r.Program,
		Output: &devicepb.Object{Space: uint32(r.Output.Space), Id: r.Output.ID, Polys: r.Output.Polys, Limbs: r.Output.Limbs}}
	for _, b := range r.Inputs {
		m.Inputs = append(m.Inputs, bindingToProto(b))
	}
	if r.HasKey {
		m.Key = bindingToProto(r.Key)
	}
	return m
}

func sendRespToProto(r *SendResponse) *devicepb.SendResponse {
	return &devicepb.SendResponse{Job: r.Job}
}

func recvRespToProto(r *RecvResponse) *devicepb.RecvResponse {
	return &devicepb.RecvResponse{Polys: r.Polys, Data: encodeLimbs(r.Data), Instructions: r.Instructions, MicroOps: r.MicroOps,
		StoreBytes: r.StoreBytes}
}

func recvRespFromProto(m *devicepb.RecvResponse) (*RecvResponse, error) {
	data, err := decodeLimbs("result", m.GetData())
	if err != nil {
		return nil, err
	}
	return &RecvResponse{Polys: m.GetPolys(), Data: data, Instructions: m.GetInstructions(), MicroOps: m.GetMicroOps(),
		StoreBytes: m.GetStoreBytes()}, nil
}

// Stream programs.

func valuesFromProto(what string, vs []*devicepb.StreamValues) ([]StreamValues, error) {
	if len(vs) > MaxBindings*64 {
		return nil, fmt.Errorf("%w: %s: %d nodes", ErrInvalid, what, len(vs))
	}
	out := make([]StreamValues, 0, len(vs))
	var total int64
	for _, v := range vs {
		if len(v.GetInstances()) > MaxStreamInstances {
			return nil, fmt.Errorf("%w: %s: node %d has %d instances (at most %d)", ErrInvalid, what, v.GetNode(), len(v.GetInstances()), MaxStreamInstances)
		}
		sv := StreamValues{Node: int(v.GetNode())}
		for k, in := range v.GetInstances() {
			for _, l := range in.GetData() {
				total += int64(len(l))
			}
			if total > MaxMessageBytes {
				return nil, fmt.Errorf("%w: %s: more than %d bytes", ErrInvalid, what, MaxMessageBytes)
			}
			limbs, err := decodeLimbs(fmt.Sprintf("%s node %d instance %d", what, v.GetNode(), k), in.GetData())
			if err != nil {
				return nil, err
			}
			if limbs == nil {
				return nil, fmt.Errorf("%w: %s: node %d instance %d has no limbs", ErrInvalid, what, v.GetNode(), k)
			}
			sv.Instances = append(sv.Instances, limbs)
		}
		out = append(out, sv)
	}
	return out, nil
}

func valuesToProto(vs []StreamValues) []*devicepb.StreamValues {
	out := make([]*devicepb.StreamValues, 0, len(vs))
	for _, v := range vs {
		m := &devicepb.StreamValues{Node: uint32(v.Node)}
		for _, in := range v.Instances {
			m.Instances = append(m.Instances, &devicepb.Instance{Data: encodeLimbs(in)})
		}
		out = append(out, m)
	}
	return out
}

func runStreamFromProto(m *devicepb.RunStreamRequest) (*RunStreamRequest, error) {
	if err := CheckName("program", m.GetProgram()); err != nil {
		return nil, err
	}
	inputs, err := valuesFromProto("input", m.GetInputs())
	if err != nil {
		return nil, err
	}
	if len(m.GetStored()) > MaxStreamBindings || len(m.GetKeys()) > MaxStreamBindings {
		return nil, fmt.Errorf("%w: %d stored and %d key bindings", ErrInvalid, len(m.GetStored()), len(m.GetKeys()))
	}
	r := &RunStreamRequest{Program: m.GetProgram(), Inputs: inputs}
	for _, b := range m.GetStored() {
		if err := CheckName("stored prefix", b.GetPrefix()); err != nil {
			return nil, err
		}
		if b.GetRowLength() > 1<<40 {
			return nil, fmt.Errorf("%w: rows of %d instances", ErrInvalid, b.GetRowLength())
		}
		r.Stored = append(r.Stored, StoredBinding{Node: int(b.GetNode()), Prefix: b.GetPrefix(), PerObject: int64(b.GetPerObject()),
			RowLength: int64(b.GetRowLength()), TileRows: int64(b.GetTileRows()), Stride: int64(b.GetStride()), Offset: int64(b.GetOffset())})
	}
	for _, k := range m.GetKeys() {
		if err := CheckName("key", k.GetKey()); err != nil {
			return nil, err
		}
		if err := CheckName("key object", k.GetObject()); err != nil {
			return nil, err
		}
		r.Keys = append(r.Keys, KeyBinding{Key: k.GetKey(), Object: k.GetObject()})
	}
	return r, nil
}

func runStreamToProto(r *RunStreamRequest) *devicepb.RunStreamRequest {
	m := &devicepb.RunStreamRequest{Program: r.Program, Inputs: valuesToProto(r.Inputs)}
	for _, b := range r.Stored {
		m.Stored = append(m.Stored, &devicepb.StoredBinding{Node: uint32(b.Node), Prefix: b.Prefix, PerObject: uint32(min(b.PerObject, math.MaxUint32)),
			RowLength: uint64(max(b.RowLength, 0)), TileRows: uint32(min(max(b.TileRows, 0), math.MaxUint32)),
			Stride: uint32(min(max(b.Stride, 0), math.MaxUint32)), Offset: uint32(min(max(b.Offset, 0), math.MaxUint32))})
	}
	for _, k := range r.Keys {
		m.Keys = append(m.Keys, &devicepb.KeyBinding{Key: k.Key, Object: k.Object})
	}
	return m
}

func runStreamRespToProto(r *RunStreamResponse) *devicepb.RunStreamResponse {
	return &devicepb.RunStreamResponse{Outputs: valuesToProto(r.Outputs), StoreBytes: r.StoreBytes, Instructions: r.Instructions,
		MicroOps: r.MicroOps, Bodies: r.Bodies, Stored: r.Stored, PeakBytes: r.PeakBytes, Seconds: r.Seconds, Cores: coreUseToProto(r.Cores)}
}

// maxCoreUses bounds the stages a reply may carry.
const maxCoreUses = 16

func coreUseToProto(us []CoreUse) []*devicepb.CoreUse {
	var out []*devicepb.CoreUse
	for _, u := range us {
		out = append(out, &devicepb.CoreUse{Stage: u.Stage, Seconds: u.Seconds, Chunks: u.Chunks, WaitSeconds: u.WaitSeconds,
			HeldSeconds: u.HeldSeconds, MaxWaitSeconds: u.MaxWaitSeconds, MaxChunkSeconds: u.MaxChunkSeconds, Batch: u.Batch, MinLimit: u.MinLimit})
	}
	return out
}

// CoreUses reads the stages of a reply (RunStream's, QueryLWE's), at most
// maxCoreUses of them.
func CoreUses(ms []*devicepb.CoreUse) ([]CoreUse, error) {
	if len(ms) > maxCoreUses {
		return nil, fmt.Errorf("%w: %d stages of core use (at most %d)", ErrInvalid, len(ms), maxCoreUses)
	}
	var out []CoreUse
	for _, m := range ms {
		out = append(out, CoreUse{Stage: m.GetStage(), Seconds: m.GetSeconds(), Chunks: m.GetChunks(), WaitSeconds: m.GetWaitSeconds(),
			HeldSeconds: m.GetHeldSeconds(), MaxWaitSeconds: m.GetMaxWaitSeconds(), MaxChunkSeconds: m.GetMaxChunkSeconds(), Batch: m.GetBatch(), MinLimit: m.GetMinLimit()})
	}
	return out, nil
}

func runStreamRespFromProto(m *devicepb.RunStreamResponse) (*RunStreamResponse, error) {
	outs, err := valuesFromProto("output", m.GetOutputs())
	if err != nil {
		return nil, err
	}
	cores, err := CoreUses(m.GetCores())
	if err != nil {
		return nil, err
	}
	return &RunStreamResponse{Outputs: outs, StoreBytes: m.GetStoreBytes(), Instructions: m.GetInstructions(),
		MicroOps: m.GetMicroOps(), Bodies: m.GetBodies(), Stored: m.GetStored(), PeakBytes: m.GetPeakBytes(), Seconds: m.GetSeconds(), Cores: cores}, nil
}

// limbBytes is the payload size of limbs.
func limbBytes(l [][]uint64) int64 {
	if len(l) == 0 {
		return 0
	}
	return int64(len(l)) * int64(len(l[0])) * 8
}
