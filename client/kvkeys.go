package client

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/client/internal/seal"
	"github.com/rosemary-fhe/rosemary/client/kv"
)

// What a keyword database kept beyond one device needs of the client
// library (package cluster shards its buckets over devices and keeps its
// delta in etcd): its layout, its tag hasher and its delta sealed — the
// keys stay in here; only the hasher and sealed bytes leave.

// KVLayout is the layout CreateKV chooses for opt (MaxValue 0: the
// default) on its LWE parameter set, and that set's name.
func KVLayout(opt KVOptions) (kv.Layout, string, error) {
	p, pname, err := lweParamsFor(opt.LWEParams, opt.InsecureParams)
	if err != nil {
		return kv.Layout{}, "", err
	}
	if opt.MaxValue == 0 {
		opt.MaxValue = DefaultMaxValue
	}
	if k, err := ParseKVLayout(string(opt.Layout)); err != nil || k == KVHeapLayout {
		// A cluster builds cuckoo tables only (its shards' buckets).
		return kv.Layout{}, "", fmt.Errorf("%w: layout %q here (the heap layout is made by Client.CreateKV on one device)", kv.ErrLayout, opt.Layout)
	}
	l, err := kv.NewLayout(opt.MaxValue, p.HintSlots(), seal.Overhead, opt.SlotData)
	return l, pname, err
}

// KVHasher is the tag hasher of the keyword database label names among
// the key set's (a key derived from the data key for label).
func (k *Keys) KVHasher(label string) (*kv.Hasher, error) {
	key, err := k.databaseKey(label)
	if err != nil {
		return nil, err
	}
	return kv.NewHasher(key[:])
}

// SealOps seals delta operations under a key derived from the data key
// for label, with a fresh salt (its first seal.KeySize bytes): label binds
// the sealed bytes to where they are kept, so that they open nowhere else.
func (k *Keys) SealOps(label string, ops []kv.Op) ([]byte, error) {
	salt, err := seal.NewSalt()
	if err != nil {
		return nil, err
	}
	sl, err := k.opsSealer(label, salt)
	if err != nil {
		return nil, err
	}
	return sl.Seal(salt[:], 0, kv.EncodeOps(nil, ops)), nil
}

// OpenOps opens what SealOps sealed for label (at most MaxDeltaMax bytes
// of operations).
func (k *Keys) OpenOps(label string, b []byte) ([]kv.Op, error) {
	var salt seal.Salt
	if len(b) < len(salt)+seal.Overhead || len(b) > len(salt)+seal.Overhead+MaxDeltaMax {
		return nil, fmt.Errorf("%w: sealed operations of %d bytes", kv.ErrDelta, len(b))
	}
	copy(salt[:], b)
	sl, err := k.opsSealer(label, salt)
	if err != nil {
		return nil, err
	}
	raw, err := sl.Open(nil, 0, b[len(salt):])
	if err != nil {
		return nil, fmt.Errorf("client: %s: %w", label, err)
	}
	return kv.DecodeOps(raw)
}

func (k *Keys) opsSealer(label string, salt seal.Salt) (*seal.Sealer, error) {
	key, err := k.databaseKey(label)
	if err != nil {
		return nil, err
	}
	return seal.NewSealer(key, label+"/delta", 0, salt)
}
