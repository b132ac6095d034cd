package ot

import (
	"crypto/ecdh"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"math/big"

	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// Key is a 128-bit OT key.
type Key [16]byte

// Frame types used by this package (0x20–0x2f).
const (
	typeBaseA   byte = 0x20
	typeBaseB   byte = 0x21
	typeExtU    byte = 0x22
	typeExtMsgs byte = 0x23
)

const pointLen = 65 // uncompressed P-256 point

// baseHash derives a key from a base-OT shared secret.
func baseHash(i int, c byte, a, b, shared []byte) Key {
	h := sha256.New()
	var hdr [9]byte
	binary.BigEndian.PutUint64(hdr[:8], uint64(i))
	hdr[8] = c
	h.Write([]byte("rosemary/hempc/ot.base"))
	h.Write(hdr[:])
	h.Write(a)
	h.Write(b)
	h.Write(shared)
	var k Key
	copy(k[:], h.Sum(nil))
	return k
}

// addPoints returns p+q for uncompressed P-256 points (public values).
func addPoints(p, q []byte, negQ bool) ([]byte, error) {
	curve := elliptic.P256()
	px, py := elliptic.Unmarshal(curve, p) //nolint:staticcheck // no addition in crypto/ecdh
	qx, qy := elliptic.Unmarshal(curve, q) //nolint:staticcheck
	if px == nil || qx == nil {
		return nil, fmt.Errorf("ot: invalid P-256 point")
	}
	if negQ {
		qy = new(big.Int).Sub(curve.Params().P, qy)
	}
	rx, ry := curve.Add(px, py, qx, qy) //nolint:staticcheck
	if rx.Sign() == 0 && ry.Sign() == 0 {
		return nil, fmt.Errorf("ot: point sum is the identity")
	}
	return elliptic.Marshal(curve, rx, ry), nil //nolint:staticcheck
}

// BaseSend runs n random base OTs as the sender and returns both keys of each.
func BaseSend(conn *transport.Conn, n int) ([][2]Key, error) {
	curve := ecdh.P256()
	a, err := curve.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("ot: base sender key: %w", err)
	}
	A := a.PublicKey().Bytes()
	if err := conn.Send(typeBaseA, A); err != nil {
		return nil, fmt.Errorf("ot: base send A: %w", err)
	}
	msg, err := conn.RecvType(typeBaseB)
	if err != nil {
		return nil, fmt.Errorf("ot: base receive B: %w", err)
	}
	if len(msg) != n*pointLen {
		return nil, fmt.Errorf("ot: base B message has %d bytes, want %d", len(msg), n*pointLen)
	}
	keys := make([][2]Key, n)
	for i := range keys {
		B := msg[i*pointLen : (i+1)*pointLen]
		pb, err := curve.NewPublicKey(B)
		if err != nil {
			return nil, fmt.Errorf("ot: base OT %d: receiver point: %w", i, err)
		}
		s0, err := a.ECDH(pb)
		if err != nil {
			return nil, fmt.Errorf("ot: base OT %d: %w", i, err)
		}
		BminusA, err := addPoints(B, A, true)
		if err != nil {
			return nil, fmt.Errorf("ot: base OT %d: B-A: %w", i, err)
		}
		pba, err := curve.NewPublicKey(BminusA)
		if err != nil {
			return nil, fmt.Errorf("ot: base OT %d: %w", i, err)
		}
		s1, err := a.ECDH(pba)
		if err != nil {
			return nil, fmt.Errorf("ot: base OT %d: %w", i, err)
		}
		keys[i] = [2]Key{baseHash(i, 0, A, B, s0), baseHash(i, 1, A, B, s1)}
	}
	return keys, nil
}

// BaseReceive runs len(choices) random base OTs as the receiver; choices are
// 0 or 1. It returns the key of each chosen side.
func BaseReceive(conn *transport.Conn, choices []uint8) ([]Key, error) {
	curve := ecdh.P256()
	A, err := conn.RecvType(typeBaseA)
	if err != nil {
		return nil, fmt.Errorf("ot: base receive A: %w", err)
	}
	pa, err := curve.NewPublicKey(A)
	if err != nil {
		return nil, fmt.Errorf("ot: base sender point: %w", err)
	}
	out := make([]byte, 0, len(choices)*pointLen)
	keys := make([]Key, len(choices))
	for i, c := range choices {
		if c > 1 {
			return nil, fmt.Errorf("ot: base choice %d is %d, not a bit", i, c)
		}
		b, err := curve.GenerateKey(rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("ot: base receiver key: %w", err)
		}
		B0 := b.PublicKey().Bytes()
		B1, err := addPoints(B0, A, false)
		if err != nil {
			return nil, fmt.Errorf("ot: base OT %d: bG+A: %w", i, err)
		}
		B := make([]byte, pointLen)
		copy(B, B0)
		subtle.ConstantTimeCopy(int(c), B, B1) // B = B_c without branching on c
		s, err := b.ECDH(pa)
		if err != nil {
			return nil, fmt.Errorf("ot: base OT %d: %w", i, err)
		}
		keys[i] = baseHash(i, c, A, B, s)
		out = append(out, B...)
	}
	if err := conn.Send(typeBaseB, out); err != nil {
		return nil, fmt.Errorf("ot: base send B: %w", err)
	}
	return keys, nil
}
