package client

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// What a key set remembers of the databases it used, in its key directory,
// so that a device cannot undo what the client saw:
//
//   - generations.json: the latest generation of each database (by
//     incarnation) that it verified. A manifest older than it is a replay
//     (ErrRollback): a device cannot serve a whole earlier database state,
//     manifest and all, although each verifies on its own.
//   - ring/<database>.<key nonce>.key: the secret of the LWE scheme's ring
//     stage for one database generation, fresh from crypto/rand (never
//     derived, never shared between generations or databases), with its
//     Galois keys stored under its fingerprint.
//   - ring/<database>.<key nonce>.failed: an answer for that generation
//     did not open. The key saw a failure: it is never used again, and the
//     generation is never queried again (ErrTampered) — a device that
//     makes chosen answers fail learns at most the position of the first
//     failure, not one bit per query (see SECURITY.md, reaction attacks).

// ErrRollback: the device served a manifest older than one this key set
// already verified for the same database.
var ErrRollback = errors.New("client: the device served an earlier generation than one already seen (rolled back)")

// ErrInsecureParams: a parameter set marked insecure, without the explicit
// request that allows it.
var ErrInsecureParams = errors.New("client: parameter set is insecure (tests only): create with InsecureParams / --insecure-params")

const generationsFile = "generations.json"

type seenGeneration struct {
	Incarnation string `json:"incarnation"`
	Generation  uint64 `json:"generation"`
}

// readSeen reads the record (k.mu held).
func (k *Keys) readSeen() (map[string]seenGeneration, error) {
	path := filepath.Join(k.dir, generationsFile)
	seen := map[string]seenGeneration{}
	if raw, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(raw, &seen); err != nil {
			return nil, fmt.Errorf("client: %s: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("client: %w", err)
	}
	return seen, nil
}

// seenGeneration is the latest generation of database name verified
// before now. A manifest read after this call must be at least as late:
// taken before the read, it does not count a later generation that a
// concurrent load or compaction of this client published meanwhile.
func (k *Keys) seenGeneration(name string) (seenGeneration, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	seen, err := k.readSeen()
	return seen[name], err
}

// checkGeneration refuses a manifest older than floor (seenGeneration
// before it was read), then records it if it is the latest.
func (k *Keys) checkGeneration(in *Info, floor seenGeneration) error {
	if floor.Incarnation == in.Incarnation {
		if in.Generation < floor.Generation {
			return fmt.Errorf("client: %s: %w: generation %d, %d seen before", in.Name, ErrRollback, in.Generation, floor.Generation)
		}
		if in.Generation == floor.Generation {
			return nil // recorded already: a query's usual case reads the record once
		}
	}
	return k.noteGeneration(in)
}

// noteGeneration records in's generation if it is the latest seen of its
// database (a different incarnation replaces the record).
func (k *Keys) noteGeneration(in *Info) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	path := filepath.Join(k.dir, generationsFile)
	seen, err := k.readSeen()
	if err != nil {
		return err
	}
	last, ok := seen[in.Name]
	if ok && last.Incarnation == in.Incarnation && in.Generation <= last.Generation {
		return nil
	}
	// A different incarnation is a database created anew (after a drop):
	// it starts the record again.
	seen[in.Name] = seenGeneration{Incarnation: in.Incarnation, Generation: in.Generation}
	raw, err := json.Marshal(seen)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, raw)
}

// forgetGeneration drops the record of database name (after a drop).
func (k *Keys) forgetGeneration(name string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	path := filepath.Join(k.dir, generationsFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	seen := map[string]seenGeneration{}
	if err := json.Unmarshal(raw, &seen); err != nil {
		return fmt.Errorf("client: %s: %w", path, err)
	}
	delete(seen, name)
	if raw, err = json.Marshal(seen); err != nil {
		return err
	}
	return writeFileAtomic(path, raw)
}

// writeFileAtomic replaces path (mode 0600) by a rename.
func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("client: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("client: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	return nil
}

// ringPath is the file of generation in's ring secret, with suffix.
func (k *Keys) ringPath(in *Info, suffix string) string {
	return filepath.Join(k.dir, "ring", in.Name+"."+in.KeyNonce+suffix)
}

// ringSecretKey is the ring stage's secret of generation in: made from
// crypto/rand on first use, kept for the generation's later queries (so
// its Galois keys are uploaded once), refused once an answer under it
// failed (failRing).
func (k *Keys) ringSecretKey(in *Info, p lwepir.Params) (*lwepir.SecretKey, error) {
	if err := checkNonce(in.KeyNonce); err != nil {
		return nil, fmt.Errorf("client: %s: %w", in.Name, err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, err := os.Stat(k.ringPath(in, ".failed")); err == nil {
		return nil, fmt.Errorf("client: %s generation %d: %w: an answer failed to open before; the generation is not queried again (load it anew)",
			in.Name, in.Generation, ErrTampered)
	}
	path := k.ringPath(in, ".key")
	seed := make([]byte, 32)
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if _, err := rand.Read(seed); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("client: %w", err)
		}
		k.removeOtherRings(in)
		if err := writePrivate(path, seed); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, fmt.Errorf("client: %w", err)
	default:
		if seed, err = readPrivate(path, fi); err != nil {
			return nil, err
		}
	}
	return lwepir.DeriveSecretKey(p, seed)
}

// removeOtherRings deletes the ring secrets of database in's other
// generations (k.mu held; best effort): their generations are gone or
// going. Failure marks stay.
func (k *Keys) removeOtherRings(in *Info) {
	for _, suffix := range []string{".key", ".ready"} {
		all, _ := filepath.Glob(filepath.Join(k.dir, "ring", in.Name+".*"+suffix))
		for _, f := range all {
			nonce := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), in.Name+"."), suffix)
			if checkNonce(nonce) == nil && nonce != in.KeyNonce {
				os.Remove(f)
			}
		}
	}
}

// ringReady reports whether this key set set generation in's program and
// Galois keys on its device before (markRingReady).
func (k *Keys) ringReady(in *Info) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, err := os.Stat(k.ringPath(in, ".ready"))
	return err == nil
}

// markRingReady records that generation in's program and keys are on its
// device.
func (k *Keys) markRingReady(in *Info) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return os.WriteFile(k.ringPath(in, ".ready"), nil, 0o600)
}

// failRing records that an answer of generation in failed to open: its
// ring secret is destroyed and the generation is not queried again.
func (k *Keys) failRing(in *Info) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := os.MkdirAll(filepath.Join(k.dir, "ring"), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(k.ringPath(in, ".failed"), nil, 0o600); err != nil {
		return err
	}
	os.Remove(k.ringPath(in, ".ready"))
	// A generation queried in the packed mode only has no ring secret.
	if err := os.Remove(k.ringPath(in, ".key")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// ringFailed refuses generation in if one of its answers failed to open
// before (failRing), as ringSecretKey does: a packed-mode session, which
// needs no ring secret, checks it before it opens.
func (k *Keys) ringFailed(in *Info) error {
	if err := checkNonce(in.KeyNonce); err != nil {
		return fmt.Errorf("client: %s: %w", in.Name, err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, err := os.Stat(k.ringPath(in, ".failed")); err == nil {
		return fmt.Errorf("client: %s generation %d: %w: an answer failed to open before; the generation is not queried again (load it anew)",
			in.Name, in.Generation, ErrTampered)
	}
	return nil
}

// checkNonce refuses a key nonce that is not 16 bytes of hex (it names
// files).
func checkNonce(s string) error {
	if len(s) != 2*nonceBytes || strings.Trim(s, "0123456789abcdef") != "" {
		return fmt.Errorf("%w: the manifest's key nonce is malformed", ErrTampered)
	}
	return nil
}

// lweParams is generation in's LWE parameter set, from the table compiled
// into this client; one marked insecure only if the database was created
// asking for it.
func (in *Info) lweParams() (lwepir.Params, error) {
	p, err := lwepir.ByName(in.pir().LWEParams)
	if err != nil {
		return p, fmt.Errorf("client: %s: %w", in.Name, err)
	}
	if p, err = p.WithPacking(in.pir().Packing); err != nil {
		return p, fmt.Errorf("client: %s: %w: %w", in.Name, ErrTampered, err)
	}
	if p.Insecure && !in.InsecureParams {
		return p, fmt.Errorf("client: %s: %w (%q)", in.Name, ErrInsecureParams, in.pir().LWEParams)
	}
	return p, nil
}

// lweParamsFor resolves a parameter name at creation ("" is "default").
func lweParamsFor(name string, insecure bool) (lwepir.Params, string, error) {
	if name == "" {
		name = "default"
	}
	p, err := lwepir.ByName(name)
	if err != nil {
		return p, name, err
	}
	if p.Insecure && !insecure {
		return p, name, fmt.Errorf("%w (%q)", ErrInsecureParams, name)
	}
	return p, name, nil
}

// checkParams refuses a manifest whose parameters this client would not
// have chosen (it is tagged, so only an owner's client of another build
// could have written one).
func (in *Info) checkParams() error {
	switch {
	case in.Kind == KindKV, in.Kind == KindPIR && in.scheme() == SchemeLWE:
		if _, err := in.lweParams(); err != nil {
			return err
		}
		return checkNonce(in.KeyNonce)
	case in.Kind == KindPIR:
		if in.Preset != pirPreset {
			return fmt.Errorf("client: %s: %w: preset %q", in.Name, ErrTampered, in.Preset)
		}
	case in.Kind == KindVectors:
		if in.Preset != vectorPreset {
			return fmt.Errorf("client: %s: %w: preset %q", in.Name, ErrTampered, in.Preset)
		}
	default:
		return fmt.Errorf("client: %s: %w: kind %q", in.Name, ErrTampered, in.Kind)
	}
	return nil
}
