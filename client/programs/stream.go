package programs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/rosemary-fhe/rosemary/client/internal/session"
	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
)

// storeStreamKeys generates the evaluation keys a stream program names
// and stores them under opt.KeyPrefix (keeping those already stored when
// opt.ReuseKeys), returning their bindings, the keys generated here and
// the bytes uploaded.
func storeStreamKeys(ctx context.Context, dev api.Device, params rlwe.Parameters, sp *lower.StreamProgram, sk *rlwe.SecretKey,
	opt session.Options) ([]*devicepb.KeyBinding, *rlwe.MemEvaluationKeySet, int64, error) {
	kg := rlwe.NewKeyGenerator(params)
	evk := rlwe.NewMemEvaluationKeySet(nil)
	var keys []*devicepb.KeyBinding
	var uploaded int64
	seen := map[string]bool{}
	have := map[string]bool{}
	if opt.ReuseKeys {
		resp, err := dev.List(ctx, &devicepb.ListRequest{Prefix: opt.KeyPrefix + "/"})
		if err != nil {
			return nil, nil, 0, fmt.Errorf("session: list keys: %w", err)
		}
		for _, o := range resp.Objects {
			if object.Kind(o.Kind) == object.KindKey {
				have[o.Name] = true
			}
		}
	}
	for _, sn := range sp.Nodes {
		for _, l := range append([]*lower.Program{sn.Body}, sn.Steps...) {
			if l == nil || l.KeyName() == "" || seen[l.KeyName()] {
				continue
			}
			name := l.KeyName()
			seen[name] = true
			id, err := lower.ParseKeyID(name)
			if err != nil {
				return nil, nil, 0, fmt.Errorf("session: %w", err)
			}
			obj := id.ObjectName(opt.KeyPrefix)
			if have[obj] {
				keys = append(keys, &devicepb.KeyBinding{Key: name, Object: obj})
				continue
			}
			var g *rlwe.GadgetCiphertext
			if l.GaloisElement != 0 {
				gk := kg.GenGaloisKeyNew(l.GaloisElement, sk)
				evk.GaloisKeys[gk.GaloisElement] = gk
				g = &gk.GadgetCiphertext
			} else {
				evk.RelinearizationKey = kg.GenRelinearizationKeyNew(sk)
				g = &evk.RelinearizationKey.GadgetCiphertext
			}
			limbs := engine.KeyLimbs(g)
			per := len(params.Q()) + len(params.P())
			put, err := api.NewPut(obj, object.KindKey, len(limbs)/per, per, limbs, 8)
			if err != nil {
				return nil, nil, 0, fmt.Errorf("session: store key %s: %w", name, err)
			}
			resp, err := dev.Put(ctx, put)
			if err != nil {
				return nil, nil, 0, fmt.Errorf("session: store key %s: %w", name, err)
			}
			uploaded += int64(resp.Bytes)
			keys = append(keys, &devicepb.KeyBinding{Key: name, Object: obj})
		}
	}
	return keys, evk, uploaded, nil
}

// compileForRosemary plans a session's program for the Rosemary preset at
// full optimisation: the plan whose device segments a session runs.
func compileForRosemary(prog *ir.Program) (*compiler.Plan, error) {
	a, err := arch.Preset("rosemary")
	if err != nil {
		return nil, err
	}
	plan, err := compiler.Compile(prog, a, compiler.Options{Opt: compiler.OptFull})
	if err != nil {
		return nil, fmt.Errorf("session: compile: %w", err)
	}
	return plan, nil
}

// streamName names a stream program by its bytes: the same program has one
// name, whoever sets it.
func streamName(kind string, raw []byte) string {
	sum := sha256.Sum256(raw)
	return "stream/" + kind + "/" + hex.EncodeToString(sum[:8])
}

// setStream sets a stream program on a device under a name derived from
// its bytes (the same program is set once, whoever sets it), and returns
// the name and the bytes sent.
func setStream(ctx context.Context, dev api.Device, kind string, sp *lower.StreamProgram) (string, int64, error) {
	raw, err := sp.MarshalBinary()
	if err != nil {
		return "", 0, err
	}
	name := streamName(kind, raw)
	if _, err := dev.SetStream(ctx, &devicepb.SetStreamRequest{Name: name, Program: raw}); err != nil {
		return "", 0, fmt.Errorf("session: set stream program: %w", err)
	}
	return name, int64(len(raw)), nil
}
