package cheetah

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/optiprime/share"
)

// A seeded Galois key is a Galois key sent as half of itself. Every entry
// of a key's gadget is an encryption of zero under the secret key, (b, a)
// with b = -a·s + e (+ the gadget term); a is uniform, so the key's owner
// samples all of a key's a-halves from one 32-byte seed (Lattigo's
// compressed evaluation keys) and sends only the b-halves and the seed. The
// receiver regenerates the a-halves from the seed and checks the whole key
// against the SHA-256 digest the sender computed over its own regenerated
// key: a seed or a b-half altered on the way, or a receiver whose sampler
// expands the seed differently (another Lattigo version), is refused
// instead of yielding a key that silently decrypts to garbage.
//
// Wire format (client → server), fully validated on decode:
//
//	"RGK" 0x01 | logN u8 | levelQ u8 | levelP u8 | base2 u8 | galEl u64
//	| seed [32] | digest [32] | b-halves
//
// where the b-halves are the gadget's entries in order (RNS index i, then
// base-two index j), each the Q limbs 0..levelQ then the P limbs
// 0..levelP, each limb N values of bitlen(modulus) bits, bit-packed
// little-endian (NTT and Montgomery form, as Lattigo holds them); every
// value must be below its modulus. The digest is SHA-256 over the header,
// then every entry's b- and a-halves, each limb N little-endian u64.
const galoisHeader = 4 + 4 + 8

var galoisMagic = [4]byte{'R', 'G', 'K', 1}

// Errors of a seeded Galois key message.
var (
	// ErrGaloisKeyMessage: the message is not a well-formed seeded key for
	// these parameters (too short or long, another magic or shape, a
	// value not reduced mod its modulus).
	ErrGaloisKeyMessage = errors.New("cheetah: malformed seeded Galois key")
	// ErrGaloisKeyDigest: the key regenerated from the message's seed and
	// b-halves is not the key its sender digested.
	ErrGaloisKeyDigest = errors.New("cheetah: seeded Galois key does not regenerate to its sender's key")
)

// SeededGaloisKey is a Galois key as its owner sends it.
type SeededGaloisKey struct {
	key    *rlwe.GaloisKey // compressed: the b-halves, Seed set
	digest [32]byte
}

// GaloisElement is the key's Galois element.
func (k *SeededGaloisKey) GaloisElement() uint64 { return k.key.GaloisElement }

// GenSeededGaloisKeys generates the Galois keys for galEls (the element 1
// and repeats skipped, as GenGaloisKeys does) with every key's a-halves
// drawn from a fresh seed of its own.
func GenSeededGaloisKeys(p Parameters, sk *rlwe.SecretKey, galEls []uint64) ([]*SeededGaloisKey, error) {
	kg := rlwe.NewKeyGenerator(p.rlwe)
	evk := p.evkParams()
	evk.Compressed = true
	var out []*SeededGaloisKey
	seen := map[uint64]bool{}
	for _, g := range galEls {
		if err := p.checkGalEl(g); err != nil {
			return nil, err
		}
		if g == 1 || seen[g] {
			continue
		}
		seen[g] = true
		gk := kg.GenGaloisKeyNew(g, sk, evk)
		full := compressedCopy(gk)
		if err := full.Expand(p.rlwe, nil); err != nil {
			return nil, fmt.Errorf("cheetah: expanding Galois key %d: %w", g, err)
		}
		out = append(out, &SeededGaloisKey{key: gk, digest: p.galoisDigest(full)})
	}
	return out, nil
}

// compressedCopy returns a key sharing gk's b-halves and seed in a gadget
// matrix of its own, so that Expand (which writes its rows) leaves gk
// compressed.
func compressedCopy(gk *rlwe.GaloisKey) *rlwe.GaloisKey {
	c := *gk
	v := make([][]rlwe.VectorQP, len(gk.Value))
	for i := range v {
		v[i] = append([]rlwe.VectorQP(nil), gk.Value[i]...)
	}
	c.Value = v
	return &c
}

// galoisShape is the gadget shape every key of p has: levels, base-two
// decomposition, and entries per RNS index.
func (p Parameters) galoisShape() (levelQ, levelP, base2 int, rows []int) {
	levelQ, levelP, base2, _ = rlwe.ResolveEvaluationKeyParameters(p.rlwe, []rlwe.EvaluationKeyParameters{p.evkParams()})
	g := rlwe.NewGadgetCiphertext(p.rlwe, 0, levelQ, levelP, base2)
	return levelQ, levelP, base2, g.BaseTwoDecompositionVectorSize()
}

// galoisModuli are the moduli of a key entry's limbs, Q then P.
func (p Parameters) galoisModuli(levelQ, levelP int) []uint64 {
	m := append([]uint64(nil), p.rlwe.Q()[:levelQ+1]...)
	if levelP >= 0 {
		m = append(m, p.rlwe.P()[:levelP+1]...)
	}
	return m
}

// SeededGaloisKeySize is the exact wire size of a seeded Galois key.
func (p Parameters) SeededGaloisKeySize() int {
	levelQ, levelP, _, rows := p.galoisShape()
	per := 0
	for _, q := range p.galoisModuli(levelQ, levelP) {
		per += share.PackedLen(p.N(), bits.Len64(q-1))
	}
	s := galoisHeader + 2*32
	for _, r := range rows {
		s += r * per
	}
	return s
}

func (p Parameters) galoisHeader(levelQ, levelP, base2 int, galEl uint64) []byte {
	h := make([]byte, galoisHeader)
	copy(h, galoisMagic[:])
	h[4], h[5], h[6], h[7] = byte(p.LogN()), byte(levelQ), byte(levelP+1), byte(base2)
	binary.LittleEndian.PutUint64(h[8:], galEl)
	return h
}

// entryLimbs lists an entry's limbs (Q, then P) of polynomial k (0: b, 1: a).
func entryLimbs(v rlwe.VectorQP, k int) [][]uint64 {
	l := append([][]uint64(nil), v[k].Q.Coeffs...)
	if v[k].P.Level() >= 0 && len(v[k].P.Coeffs) > 0 {
		l = append(l, v[k].P.Coeffs...)
	}
	return l
}

// galoisDigest is SHA-256 over the header and every entry's b and a limbs.
func (p Parameters) galoisDigest(full *rlwe.GaloisKey) [32]byte {
	h := sha256.New()
	h.Write(p.galoisHeader(full.LevelQ(), full.LevelP(), full.BaseTwoDecomposition, full.GaloisElement))
	buf := make([]byte, 8*p.N())
	for i := range full.Value {
		for j := range full.Value[i] {
			for k := 0; k < 2; k++ {
				for _, limb := range entryLimbs(full.Value[i][j], k) {
					for c, v := range limb {
						binary.LittleEndian.PutUint64(buf[8*c:], v)
					}
					h.Write(buf[:8*len(limb)])
				}
			}
		}
	}
	var d [32]byte
	h.Sum(d[:0])
	return d
}

// MarshalSeededGaloisKey encodes a seeded Galois key.
func (p Parameters) MarshalSeededGaloisKey(k *SeededGaloisKey) ([]byte, error) {
	gk := k.key
	levelQ, levelP, base2, rows := p.galoisShape()
	if !gk.IsCompressed() || gk.LevelQ() != levelQ || gk.LevelP() != levelP || gk.BaseTwoDecomposition != base2 ||
		len(gk.Value) != len(rows) || len(gk.Seed) != 32 {
		return nil, fmt.Errorf("cheetah: Galois key %d is not a seeded key of these parameters", gk.GaloisElement)
	}
	moduli := p.galoisModuli(levelQ, levelP)
	buf := make([]byte, 0, p.SeededGaloisKeySize())
	buf = append(buf, p.galoisHeader(levelQ, levelP, base2, gk.GaloisElement)...)
	buf = append(buf, gk.Seed...)
	buf = append(buf, k.digest[:]...)
	for i := range gk.Value {
		if len(gk.Value[i]) != rows[i] {
			return nil, fmt.Errorf("cheetah: Galois key %d: gadget row %d has %d entries, want %d", gk.GaloisElement, i, len(gk.Value[i]), rows[i])
		}
		for j := range gk.Value[i] {
			for l, limb := range entryLimbs(gk.Value[i][j], 0) {
				buf = share.Pack(buf, limb, bits.Len64(moduli[l]-1))
			}
		}
	}
	return buf, nil
}

// UnmarshalSeededGaloisKey decodes a seeded Galois key, regenerates its
// a-halves from its seed and checks the whole key against the sender's
// digest. Errors wrap ErrGaloisKeyMessage or ErrGaloisKeyDigest.
func (p Parameters) UnmarshalSeededGaloisKey(data []byte) (*rlwe.GaloisKey, error) {
	if want := p.SeededGaloisKeySize(); len(data) != want {
		return nil, fmt.Errorf("%w: %d bytes, expected %d", ErrGaloisKeyMessage, len(data), want)
	}
	levelQ, levelP, base2, rows := p.galoisShape()
	if [4]byte(data[:4]) != galoisMagic {
		return nil, fmt.Errorf("%w: magic/version % x", ErrGaloisKeyMessage, data[:4])
	}
	galEl := binary.LittleEndian.Uint64(data[8:])
	if want := p.galoisHeader(levelQ, levelP, base2, galEl); string(data[:galoisHeader]) != string(want) {
		return nil, fmt.Errorf("%w: header % x, these parameters have % x", ErrGaloisKeyMessage, data[:galoisHeader], want)
	}
	if err := p.checkGalEl(galEl); err != nil || galEl == 1 {
		return nil, fmt.Errorf("%w: Galois element %d", ErrGaloisKeyMessage, galEl)
	}
	evk := p.evkParams()
	evk.Compressed = true
	gk := rlwe.NewGaloisKey(p.rlwe, evk)
	gk.GaloisElement = galEl
	gk.Seed = append([]byte(nil), data[galoisHeader:galoisHeader+32]...)
	var digest [32]byte
	copy(digest[:], data[galoisHeader+32:])
	rest := data[galoisHeader+64:]
	moduli := p.galoisModuli(levelQ, levelP)
	for i := range gk.Value {
		if len(gk.Value[i]) != rows[i] {
			return nil, fmt.Errorf("cheetah: gadget row %d has %d entries, want %d", i, len(gk.Value[i]), rows[i])
		}
		for j := range gk.Value[i] {
			for l, limb := range entryLimbs(gk.Value[i][j], 0) {
				b := bits.Len64(moduli[l] - 1)
				nb := share.PackedLen(len(limb), b)
				share.UnpackInto(limb, rest[:nb], b)
				rest = rest[nb:]
				for c, v := range limb {
					if v >= moduli[l] {
						return nil, fmt.Errorf("%w: entry (%d,%d) limb %d value %d not reduced mod %d", ErrGaloisKeyMessage, i, j, l, c, moduli[l])
					}
				}
			}
		}
	}
	if err := gk.Expand(p.rlwe, nil); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrGaloisKeyMessage, err)
	}
	if p.galoisDigest(gk) != digest {
		return nil, fmt.Errorf("%w (element %d)", ErrGaloisKeyDigest, galEl)
	}
	return gk, nil
}
