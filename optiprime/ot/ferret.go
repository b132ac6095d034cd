package ot

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// Ferret names a parameter set of the silent correlated-OT generator.
type Ferret uint8

// Parameter sets, both from emp-ot's Ferret implementation and claimed there
// for 128-bit security against the best known attacks on LPN with regular
// noise: FerretRegular yields ≈ 10 M correlated OTs per iteration for ≈ 0.56
// MB of traffic; FerretSmall ≈ 0.6 M for ≈ 0.39 MB (Ferret uses it to
// bootstrap the regular set, and so do we).
const (
	FerretRegular Ferret = iota + 1
	FerretSmall
)

func (f Ferret) String() string {
	switch f {
	case FerretRegular:
		return "ferret-regular"
	case FerretSmall:
		return "ferret-small"
	}
	return fmt.Sprintf("ferret(%d)", uint8(f))
}

// ferretParams is one LPN parameter set: an iteration turns k + t·h
// correlated OTs into n = t·2^h new ones.
type ferretParams struct {
	n, k, t, h int
}

// lpnWeight is d, the nonzeros per row of the local linear code.
const lpnWeight = 10

func (f Ferret) params() (ferretParams, error) {
	switch f {
	case FerretRegular:
		return ferretParams{n: 10608640, k: 589824, t: 1295, h: 13}, nil
	case FerretSmall:
		return ferretParams{n: 649728, k: 36288, t: 1269, h: 9}, nil
	}
	return ferretParams{}, fmt.Errorf("ot: unknown Ferret parameter set %d", uint8(f))
}

// base is the number of correlated OTs an iteration consumes.
func (p ferretParams) base() int { return p.k + p.t*p.h }

// yield is the number an iteration adds beyond what it keeps for the next.
func (p ferretParams) yield() int { return p.n - p.base() }

// iterationBytes is the traffic of one iteration: the receiver's packed
// choice corrections and the sender's two masked level sums per tree level
// plus one correction per tree (frame headers not included).
func (p ferretParams) iterationBytes() (c2s, s2c int) {
	return (p.t*p.h + 7) / 8, p.t * (p.h*2*16 + 16)
}

// Frame types of an iteration.
const (
	typeFerretChoice byte = 0x24
	typeFerretTrees  byte = 0x25
)

// ferretHash is the correlation-robust hash that masks the tree's level
// sums, tweaked by the iteration and the OT's position in it.
func ferretHash(iter uint64, pos int, x block) block {
	var in [8 + 8 + 8 + 16]byte
	copy(in[:8], "RMFERRET")
	binary.LittleEndian.PutUint64(in[8:], iter)
	binary.LittleEndian.PutUint64(in[16:], uint64(pos))
	binary.LittleEndian.PutUint64(in[24:], x[0])
	binary.LittleEndian.PutUint64(in[32:], x[1])
	h := sha256.Sum256(in[:])
	return block{binary.LittleEndian.Uint64(h[:8]), binary.LittleEndian.Uint64(h[8:16])}
}

// ferretSend runs one iteration as the sender (who holds Δ). base holds
// p.base() keys: the k LPN-secret keys, then t·h keys for the trees' level
// OTs. out receives p.n new keys K_j; the receiver's M_j = K_j ⊕ x_j·Δ.
func ferretSend(conn *transport.Conn, p ferretParams, delta block, base []block, iter uint64, out []block) error {
	if len(base) != p.base() || len(out) != p.n {
		return fmt.Errorf("ot: ferret sender buffers %d/%d, want %d/%d", len(base), len(out), p.base(), p.n)
	}
	msg, err := conn.RecvType(typeFerretChoice)
	if err != nil {
		return fmt.Errorf("ot: ferret: receive choices: %w", err)
	}
	c2s, s2c := p.iterationBytes()
	if len(msg) != c2s {
		return fmt.Errorf("ot: ferret: choice message has %d bytes, want %d", len(msg), c2s)
	}
	seeds := make([]byte, 16*p.t)
	if _, err := rand.Read(seeds); err != nil {
		return fmt.Errorf("ot: ferret: sample tree seeds: %w", err)
	}
	reply := make([]byte, s2c)
	leaves := 1 << p.h
	spBase := base[p.k:]
	inParallel(p.t, func(lo, hi int) {
		sums := make([][2]block, p.h)
		hs := new(hasher)
		for i := lo; i < hi; i++ {
			tree := out[i*leaves : (i+1)*leaves]
			tree[0] = block{binary.LittleEndian.Uint64(seeds[16*i:]), binary.LittleEndian.Uint64(seeds[16*i+8:])}
			ggmExpand(hs, tree, p.h, sums)
			rec := reply[i*(p.h*32+16):]
			for l := 0; l < p.h; l++ {
				pos := i*p.h + l
				d := uint64(msg[pos/8] >> (pos % 8) & 1)
				q := spBase[pos].xor(delta.and(-d))
				m0 := sums[l][0].xor(ferretHash(iter, pos, q))
				m1 := sums[l][1].xor(ferretHash(iter, pos, q.xor(delta)))
				m0.put(rec[32*l:])
				m1.put(rec[32*l+16:])
			}
			corr := delta
			for _, v := range tree {
				corr = corr.xor(v)
			}
			corr.put(rec[32*p.h:])
		}
	})
	if err := conn.Send(typeFerretTrees, reply); err != nil {
		return fmt.Errorf("ot: ferret: send trees: %w", err)
	}
	lpnEncode(p, base[:p.k], out, nil, nil)
	return nil
}

// ferretReceive runs one iteration as the receiver. base and baseBits hold
// p.base() correlated OTs (M, x) with M = K ⊕ x·Δ; out and outBits receive
// p.n new ones.
func ferretReceive(conn *transport.Conn, p ferretParams, base []block, baseBits []uint8, iter uint64, out []block, outBits []uint8) error {
	if len(base) != p.base() || len(baseBits) != p.base() || len(out) != p.n || len(outBits) != p.n {
		return fmt.Errorf("ot: ferret receiver buffers do not match the parameters")
	}
	// One noise position α_i per tree; level l's OT chooses the sibling
	// side ¬α_{i,l} of the path to α_i.
	rnd := make([]byte, 4*p.t)
	if _, err := rand.Read(rnd); err != nil {
		return fmt.Errorf("ot: ferret: sample noise: %w", err)
	}
	alpha := make([]int, p.t)
	c2s, s2c := p.iterationBytes()
	msg := make([]byte, c2s)
	spBase, spBits := base[p.k:], baseBits[p.k:]
	for i := range alpha {
		alpha[i] = int(binary.LittleEndian.Uint32(rnd[4*i:]) & uint32(1<<p.h-1))
		for l := 0; l < p.h; l++ {
			pos := i*p.h + l
			notA := uint8(1 ^ alpha[i]>>(p.h-1-l)&1)
			msg[pos/8] |= (notA ^ spBits[pos]) << (pos % 8)
		}
	}
	if err := conn.Send(typeFerretChoice, msg); err != nil {
		return fmt.Errorf("ot: ferret: send choices: %w", err)
	}
	reply, err := conn.RecvType(typeFerretTrees)
	if err != nil {
		return fmt.Errorf("ot: ferret: receive trees: %w", err)
	}
	if len(reply) != s2c {
		return fmt.Errorf("ot: ferret: tree message has %d bytes, want %d", len(reply), s2c)
	}
	leaves := 1 << p.h
	inParallel(p.t, func(lo, hi int) {
		sibling := make([]block, p.h)
		hs := new(hasher)
		for i := lo; i < hi; i++ {
			rec := reply[i*(p.h*32+16):]
			for l := 0; l < p.h; l++ {
				pos := i*p.h + l
				notA := int(1 ^ alpha[i]>>(p.h-1-l)&1)
				m := getBlock(rec[32*l+16*notA:])
				sibling[l] = m.xor(ferretHash(iter, pos, spBase[pos]))
			}
			tree := out[i*leaves : (i+1)*leaves]
			ggmPuncture(hs, tree, p.h, alpha[i], sibling)
			w := getBlock(rec[32*p.h:])
			for _, v := range tree {
				w = w.xor(v)
			}
			tree[alpha[i]] = w // = v[α] ⊕ Δ
		}
	})
	clear(outBits)
	for i, a := range alpha {
		outBits[i*leaves+a] = 1
	}
	lpnEncode(p, base[:p.k], out, baseBits[:p.k], outBits)
	return nil
}

func (b block) and(m uint64) block { return block{b[0] & m, b[1] & m} }

func (b block) put(dst []byte) {
	binary.LittleEndian.PutUint64(dst, b[0])
	binary.LittleEndian.PutUint64(dst[8:], b[1])
}

func getBlock(src []byte) block {
	return block{binary.LittleEndian.Uint64(src), binary.LittleEndian.Uint64(src[8:])}
}

// IterationBytes returns the payload of one iteration: the receiver's
// choice corrections and the sender's masked trees (frame headers not
// included).
func (f Ferret) IterationBytes() (receiverToSender, senderToReceiver int, err error) {
	p, err := f.params()
	if err != nil {
		return 0, 0, err
	}
	receiverToSender, senderToReceiver = p.iterationBytes()
	return
}

// BootstrapOTs returns the IKNP correlated OTs that setup makes for the
// first iteration (see bootstrap).
func (f Ferret) BootstrapOTs() int {
	first, _, _ := bootstrap(f)
	return first.base()
}

// Yield returns the correlated OTs one steady iteration adds to the pool.
func (f Ferret) Yield() int {
	p, _ := f.params()
	return p.yield()
}
