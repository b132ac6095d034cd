package engine

import (
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
)

// This file holds Value, one instance of a node's result, and its sizes
// and metadata.

// Value is one instance of a node's result: a ciphertext or a plaintext
// held by the host, a value held by the device (Dev), or both.
type Value struct {
	Ct *rlwe.Ciphertext
	Pt *rlwe.Plaintext
	// Dev, when set, names a copy of the value on a ResidentDevice: a
	// stored object instance (database, weights) or a resident result.
	// A value with only Dev never crossed to the host.
	Dev *DeviceValue
}

func valueBytes(vs []Value) int64 {
	var b int64
	for _, v := range vs {
		b += v.bytes()
	}
	return b
}

func (v *Value) bytes() int64 {
	switch {
	case v.Ct != nil:
		var b int64
		for _, p := range v.Ct.Value {
			b += int64(len(p.Coeffs)) * int64(len(p.Coeffs[0])) * WordBytes
		}
		return b
	case v.Pt != nil:
		return int64(len(v.Pt.Value.Coeffs)) * int64(len(v.Pt.Value.Coeffs[0])) * WordBytes
	case v.Dev != nil:
		return v.Dev.Bytes
	}
	return 0
}

// level, degree and meta describe a value wherever it is held.
func (v *Value) level() int {
	switch {
	case v.Ct != nil:
		return v.Ct.Level()
	case v.Pt != nil:
		return v.Pt.Level()
	case v.Dev != nil:
		return v.Dev.Level
	}
	return -1
}

func (v *Value) degree() int {
	switch {
	case v.Ct != nil:
		return v.Ct.Degree()
	case v.Pt != nil:
		return 0
	case v.Dev != nil:
		return v.Dev.Degree
	}
	return -1
}

func (v *Value) meta() *rlwe.MetaData {
	switch {
	case v.Ct != nil:
		return v.Ct.MetaData
	case v.Pt != nil:
		return v.Pt.MetaData
	case v.Dev != nil:
		return &v.Dev.Meta
	}
	return nil
}

// instance returns instance k of a node's argument (cyclic reuse).
func instance(vs []Value, k int64) Value { return vs[k%int64(len(vs))] }
