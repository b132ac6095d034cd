package ot

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"fmt"

	"github.com/rosemary-fhe/rosemary/hempc/share"
)

func checkBits(bits int) error {
	if bits < 1 || bits > 64 {
		return fmt.Errorf("ot: message width %d outside [1, 64]", bits)
	}
	return nil
}

// SendChosen transfers, for each j, m1[j] if the receiver's choice j is 1 and
// m0[j] otherwise; messages are bits wide (1 to 64).
func (s *Sender) SendChosen(m0, m1 []uint64, bits int) error {
	if len(m0) != len(m1) {
		return fmt.Errorf("ot: chosen OT with %d and %d messages", len(m0), len(m1))
	}
	if err := checkBits(bits); err != nil {
		return err
	}
	q, first, err := s.extend(len(m0))
	if err != nil {
		return err
	}
	y := make([]uint64, 2*len(m0))
	for j := range q {
		idx := first + uint64(j)
		y[2*j] = m0[j] ^ pad64(crh(idx, q[j]))
		y[2*j+1] = m1[j] ^ pad64(crh(idx, q[j].xor(s.s)))
	}
	if err := s.conn.Send(typeExtMsgs, share.Pack(nil, y, bits)); err != nil {
		return fmt.Errorf("ot: send chosen messages: %w", err)
	}
	return nil
}

// ReceiveChosen is the receiver's side of SendChosen; choices are 0 or 1.
func (r *Receiver) ReceiveChosen(choices []uint8, bits int) ([]uint64, error) {
	if err := checkBits(bits); err != nil {
		return nil, err
	}
	t, first, err := r.extend(choices)
	if err != nil {
		return nil, err
	}
	msg, err := r.conn.RecvType(typeExtMsgs)
	if err != nil {
		return nil, fmt.Errorf("ot: receive chosen messages: %w", err)
	}
	y, err := share.Unpack(msg, 2*len(choices), bits)
	if err != nil {
		return nil, fmt.Errorf("ot: chosen messages: %w", err)
	}
	m := share.Mask(bits)
	out := make([]uint64, len(choices))
	for j := range t {
		c := uint64(choices[j])
		yc := y[2*j]&(c-1) | y[2*j+1]&(-c) // select without branching on c
		out[j] = (yc ^ pad64(crh(first+uint64(j), t[j]))) & m
	}
	return out, nil
}

// SendCorrelated runs additively correlated OT in ring: it returns the
// sender's uniform x, and the receiver with choice c gets x + c·delta.
func (s *Sender) SendCorrelated(delta []uint64, ring share.Ring) ([]uint64, error) {
	q, first, err := s.extend(len(delta))
	if err != nil {
		return nil, err
	}
	x := make([]uint64, len(delta))
	d := make([]uint64, len(delta))
	for j := range q {
		idx := first + uint64(j)
		x[j] = ring.Reduce(pad64(crh(idx, q[j])))
		d[j] = ring.Sub(ring.Add(x[j], delta[j]), pad64(crh(idx, q[j].xor(s.s))))
	}
	if err := s.conn.Send(typeExtMsgs, share.Pack(nil, d, ring.Bits())); err != nil {
		return nil, fmt.Errorf("ot: send correlations: %w", err)
	}
	return x, nil
}

// ReceiveCorrelated is the receiver's side of SendCorrelated.
func (r *Receiver) ReceiveCorrelated(choices []uint8, ring share.Ring) ([]uint64, error) {
	t, first, err := r.extend(choices)
	if err != nil {
		return nil, err
	}
	msg, err := r.conn.RecvType(typeExtMsgs)
	if err != nil {
		return nil, fmt.Errorf("ot: receive correlations: %w", err)
	}
	d, err := share.Unpack(msg, len(choices), ring.Bits())
	if err != nil {
		return nil, fmt.Errorf("ot: correlations: %w", err)
	}
	out := make([]uint64, len(choices))
	for j := range t {
		c := uint64(choices[j])
		out[j] = ring.Add(pad64(crh(first+uint64(j), t[j])), d[j]&(-c))
	}
	return out, nil
}

// SendRandom runs n random OTs and returns both keys of each (one flight).
func (s *Sender) SendRandom(n int) ([][2]Key, error) {
	q, first, err := s.extend(n)
	if err != nil {
		return nil, err
	}
	keys := make([][2]Key, n)
	for j := range q {
		idx := first + uint64(j)
		keys[j] = [2]Key{toKey(crh(idx, q[j])), toKey(crh(idx, q[j].xor(s.s)))}
	}
	return keys, nil
}

// ReceiveRandom is the receiver's side of SendRandom: the key of each choice.
func (r *Receiver) ReceiveRandom(choices []uint8) ([]Key, error) {
	t, first, err := r.extend(choices)
	if err != nil {
		return nil, err
	}
	keys := make([]Key, len(choices))
	for j := range t {
		keys[j] = toKey(crh(first+uint64(j), t[j]))
	}
	return keys, nil
}

// MaxLogN bounds k in 1-out-of-2^k OT.
const MaxLogN = 8

// nPad is the mask of message v of an instance whose random-OT keys start at
// global index idx: H(idx, v, K_1^{v_1}, …, K_k^{v_k}).
func nPad(idx uint64, v int, keys [][2]Key) uint64 {
	var buf [16 + 16*MaxLogN]byte
	binary.LittleEndian.PutUint64(buf[0:], idx)
	binary.LittleEndian.PutUint64(buf[8:], uint64(v))
	for i := range keys {
		copy(buf[16+16*i:], keys[i][v>>i&1][:])
	}
	h := sha256.Sum256(buf[:16+16*len(keys)])
	return binary.LittleEndian.Uint64(h[:8])
}

// SendN runs len(msgs) instances of 1-out-of-2^logN OT: instance i transfers
// msgs[i][c_i], where every msgs[i] holds 2^logN values of `bits` bits.
func (s *Sender) SendN(msgs [][]uint64, logN, bits int) error {
	if logN < 1 || logN > MaxLogN {
		return fmt.Errorf("ot: 1-out-of-2^%d OT: log N outside [1, %d]", logN, MaxLogN)
	}
	if err := checkBits(bits); err != nil {
		return err
	}
	N := 1 << logN
	for i, m := range msgs {
		if len(m) != N {
			return fmt.Errorf("ot: 1-out-of-%d OT instance %d has %d messages", N, i, len(m))
		}
	}
	if len(msgs)*logN > MaxBatch {
		return fmt.Errorf("ot: %d instances of 1-out-of-%d OT exceed the batch limit", len(msgs), N)
	}
	keys, err := s.SendRandom(len(msgs) * logN)
	if err != nil {
		return err
	}
	first := s.next - uint64((len(msgs)*logN+63)/64*64)
	y := make([]uint64, 0, len(msgs)*N)
	for i, m := range msgs {
		ks := keys[i*logN : (i+1)*logN]
		idx := first + uint64(i*logN)
		for v := 0; v < N; v++ {
			y = append(y, m[v]^nPad(idx, v, ks))
		}
	}
	if err := s.conn.Send(typeExtMsgs, share.Pack(nil, y, bits)); err != nil {
		return fmt.Errorf("ot: send 1-out-of-%d messages: %w", N, err)
	}
	return nil
}

// ReceiveN is the receiver's side of SendN; each choice is in [0, 2^logN).
func (r *Receiver) ReceiveN(choices []uint16, logN, bits int) ([]uint64, error) {
	if logN < 1 || logN > MaxLogN {
		return nil, fmt.Errorf("ot: 1-out-of-2^%d OT: log N outside [1, %d]", logN, MaxLogN)
	}
	if err := checkBits(bits); err != nil {
		return nil, err
	}
	N := 1 << logN
	if len(choices)*logN > MaxBatch {
		return nil, fmt.Errorf("ot: %d instances of 1-out-of-%d OT exceed the batch limit", len(choices), N)
	}
	cb := make([]uint8, 0, len(choices)*logN)
	for i, c := range choices {
		if int(c) >= N {
			return nil, fmt.Errorf("ot: choice %d is %d, not below %d", i, c, N)
		}
		for b := 0; b < logN; b++ {
			cb = append(cb, uint8(c>>b&1))
		}
	}
	keys, err := r.ReceiveRandom(cb)
	if err != nil {
		return nil, err
	}
	first := r.next - uint64((len(cb)+63)/64*64)
	msg, err := r.conn.RecvType(typeExtMsgs)
	if err != nil {
		return nil, fmt.Errorf("ot: receive 1-out-of-%d messages: %w", N, err)
	}
	y, err := share.Unpack(msg, len(choices)*N, bits)
	if err != nil {
		return nil, fmt.Errorf("ot: 1-out-of-%d messages: %w", N, err)
	}
	m := share.Mask(bits)
	out := make([]uint64, len(choices))
	ks := make([][2]Key, logN)
	for i, c := range choices {
		for b := 0; b < logN; b++ {
			// The receiver knows only K^{c_b}; put it on both sides (the pad
			// reads side c_b only).
			k := keys[i*logN+b]
			ks[b] = [2]Key{k, k}
		}
		idx := first + uint64(i*logN)
		// Table lookup at a secret index is a cache side channel; scan all.
		var yc uint64
		for v := 0; v < N; v++ {
			eq := -uint64(subtle.ConstantTimeEq(int32(v), int32(c)))
			yc |= y[i*N+v] & eq
		}
		out[i] = (yc ^ nPad(idx, int(c), ks)) & m
	}
	return out, nil
}
