package api

import (
	"encoding/binary"
	"fmt"

	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// The limbs of jobs (Send, Recv) and stream programs (RunStream) travel as
// one bytes value per limb holding its coefficients as little-endian
// uint64s. The Check functions are the wire limits of those requests; the
// device runs them on every call, in process or served, before a request
// sizes anything, and each fails with an error wrapping ErrInvalid.

// EncodeLimbs lays limbs out as little-endian bytes, one value per limb
// (sharing one allocation).
func EncodeLimbs(limbs [][]uint64) [][]byte {
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

// checkLimbs checks encoded limbs' shape — every limb the same number of
// coefficients, 1..MaxLimbCoeffs, 8 bytes each, MaxMessageBytes at most in
// all — and returns their bytes.
func checkLimbs(what string, data [][]byte) (int64, error) {
	if len(data) == 0 {
		return 0, nil
	}
	size := len(data[0])
	if size == 0 || size%8 != 0 || size/8 > MaxLimbCoeffs {
		return 0, fmt.Errorf("%w: %s: limb of %d bytes (want 8·N bytes, 1 ≤ N ≤ %d)", ErrInvalid, what, size, MaxLimbCoeffs)
	}
	for i, l := range data {
		if len(l) != size {
			return 0, fmt.Errorf("%w: %s: limb %d has %d bytes, limb 0 has %d", ErrInvalid, what, i, len(l), size)
		}
	}
	total := int64(len(data)) * int64(size)
	if total > MaxMessageBytes {
		return 0, fmt.Errorf("%w: %s: %d limbs of %d bytes exceed %d bytes", ErrInvalid, what, len(data), size, MaxMessageBytes)
	}
	return total, nil
}

// DecodeLimbs checks (as checkLimbs) and decodes limbs. No limbs decode to
// nil.
func DecodeLimbs(what string, data [][]byte) ([][]uint64, error) {
	if _, err := checkLimbs(what, data); err != nil || len(data) == 0 {
		return nil, err
	}
	n := len(data[0]) / 8
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

// Instances encodes a stream node's instances.
func Instances(vals [][][]uint64) []*devicepb.Instance {
	out := make([]*devicepb.Instance, len(vals))
	for i, v := range vals {
		out[i] = &devicepb.Instance{Data: EncodeLimbs(v)}
	}
	return out
}

// DecodeInstances checks and decodes a stream node's instances: at most
// MaxStreamInstances, each with limbs.
func DecodeInstances(what string, v *devicepb.StreamValues) ([][][]uint64, error) {
	if n := len(v.GetInstances()); n > MaxStreamInstances {
		return nil, fmt.Errorf("%w: %s: node %d has %d instances (at most %d)", ErrInvalid, what, v.GetNode(), n, MaxStreamInstances)
	}
	out := make([][][]uint64, len(v.GetInstances()))
	for k, in := range v.GetInstances() {
		limbs, err := DecodeLimbs(fmt.Sprintf("%s node %d instance %d", what, v.GetNode(), k), in.GetData())
		if err != nil {
			return nil, err
		}
		if limbs == nil {
			return nil, fmt.Errorf("%w: %s: node %d instance %d has no limbs", ErrInvalid, what, v.GetNode(), k)
		}
		out[k] = limbs
	}
	return out, nil
}

// checkBinding checks an operand's space and source; it returns the bytes
// of an inline one.
func checkBinding(what string, m *devicepb.Binding) (int64, error) {
	if m.GetSpace() > 255 {
		return 0, fmt.Errorf("%w: %s space %d exceeds 255", ErrInvalid, what, m.GetSpace())
	}
	switch src := m.GetSource().(type) {
	case *devicepb.Binding_Inline:
		return checkLimbs(what, src.Inline.GetData())
	case *devicepb.Binding_Stored:
		return 0, CheckName(what+" stored object name", src.Stored.GetName())
	case *devicepb.Binding_ResidentJob:
		return 0, nil
	}
	return 0, fmt.Errorf("%w: %s has no source (want inline, stored or resident_job)", ErrInvalid, what)
}

// CheckSend checks a Send: a program name, at most MaxBindings inputs,
// each operand's source, MaxMessageBytes of inline limbs in all.
func CheckSend(m *devicepb.SendRequest) error {
	if err := CheckName("program name", m.GetProgram()); err != nil {
		return err
	}
	if n := len(m.GetInputs()); n > MaxBindings {
		return fmt.Errorf("%w: %d inputs exceed %d", ErrInvalid, n, MaxBindings)
	}
	var total int64
	for i, in := range m.GetInputs() {
		n, err := checkBinding(fmt.Sprintf("input %d", i), in)
		if err != nil {
			return err
		}
		total += n
	}
	if m.GetKey() != nil {
		n, err := checkBinding("key", m.GetKey())
		if err != nil {
			return err
		}
		total += n
	}
	if total > MaxMessageBytes {
		return fmt.Errorf("%w: %d bytes of inline operands exceed %d", ErrInvalid, total, MaxMessageBytes)
	}
	if s := m.GetOutput().GetSpace(); s > 255 {
		return fmt.Errorf("%w: output space %d exceeds 255", ErrInvalid, s)
	}
	return nil
}

// CheckRunStream checks a RunStream: a program name, the instances'
// limbs (MaxMessageBytes in all), at most MaxStreamBindings stored and
// key bindings with valid names.
func CheckRunStream(m *devicepb.RunStreamRequest) error {
	if err := CheckName("program", m.GetProgram()); err != nil {
		return err
	}
	if len(m.GetInputs()) > MaxBindings*64 {
		return fmt.Errorf("%w: input: %d nodes", ErrInvalid, len(m.GetInputs()))
	}
	var total int64
	for _, v := range m.GetInputs() {
		if n := len(v.GetInstances()); n > MaxStreamInstances {
			return fmt.Errorf("%w: input node %d has %d instances (at most %d)", ErrInvalid, v.GetNode(), n, MaxStreamInstances)
		}
		for k, in := range v.GetInstances() {
			n, err := checkLimbs(fmt.Sprintf("input node %d instance %d", v.GetNode(), k), in.GetData())
			if err != nil {
				return err
			}
			if n == 0 {
				return fmt.Errorf("%w: input node %d instance %d has no limbs", ErrInvalid, v.GetNode(), k)
			}
			if total += n; total > MaxMessageBytes {
				return fmt.Errorf("%w: input: more than %d bytes", ErrInvalid, MaxMessageBytes)
			}
		}
	}
	if len(m.GetStored()) > MaxStreamBindings || len(m.GetKeys()) > MaxStreamBindings {
		return fmt.Errorf("%w: %d stored and %d key bindings", ErrInvalid, len(m.GetStored()), len(m.GetKeys()))
	}
	for _, b := range m.GetStored() {
		if err := CheckName("stored prefix", b.GetPrefix()); err != nil {
			return err
		}
		if b.GetRowLength() > 1<<40 {
			return fmt.Errorf("%w: rows of %d instances", ErrInvalid, b.GetRowLength())
		}
	}
	for _, k := range m.GetKeys() {
		if err := CheckName("key", k.GetKey()); err != nil {
			return err
		}
		if err := CheckName("key object", k.GetObject()); err != nil {
			return err
		}
	}
	return nil
}

// maxCoreUses bounds the stages a reply may carry.
const maxCoreUses = 16

// CheckCoreUses checks the stages of a reply (RunStream's, QueryLWE's): at
// most maxCoreUses of them.
func CheckCoreUses(ms []*devicepb.CoreUse) error {
	if len(ms) > maxCoreUses {
		return fmt.Errorf("%w: %d stages of core use (at most %d)", ErrInvalid, len(ms), maxCoreUses)
	}
	return nil
}

// Outputs decodes node's instances from a RunStream reply (none if the
// reply does not carry the node).
func Outputs(r *devicepb.RunStreamResponse, node int) ([][][]uint64, error) {
	for _, o := range r.GetOutputs() {
		if int(o.GetNode()) == node {
			return DecodeInstances("output", o)
		}
	}
	return nil, nil
}
