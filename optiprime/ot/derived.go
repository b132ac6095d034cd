package ot

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/share"
)

// Each OT flavour comes in two forms. The message-level form (Request on the
// receiver, Reply… on the sender, Finish… on the receiver) only produces and
// consumes byte strings, so a caller can bundle OTs running in both
// directions into the same flights (transport.Conn.Exchange). The
// connection-level form (Send…/Receive…) does one flavour over the Conn in
// two flights.

func checkBits(bits int) error {
	if bits < 1 || bits > 64 {
		return fmt.Errorf("ot: message width %d outside [1, 64]", bits)
	}
	return nil
}

// ReplyChosen answers a request for len(m0) chosen OTs: the receiver will
// learn m1[j] if its choice j is 1 and m0[j] otherwise (bits wide, 1 to 64).
func (s *Sender) ReplyChosen(u []byte, m0, m1 []uint64, bits int) ([]byte, error) {
	if len(m0) != len(m1) {
		return nil, fmt.Errorf("ot: chosen OT with %d and %d messages", len(m0), len(m1))
	}
	if err := checkBits(bits); err != nil {
		return nil, err
	}
	q, first, err := s.process(len(m0), u)
	if err != nil {
		return nil, err
	}
	y := make([]uint64, 2*len(m0))
	hashPairs(q, first, s.s, func(lo int, h0, h1 []block) {
		for j := range h0 {
			y[2*(lo+j)] = m0[lo+j] ^ h0[j].lo64()
			y[2*(lo+j)+1] = m1[lo+j] ^ h1[j].lo64()
		}
	})
	return share.Pack(nil, y, bits), nil
}

// FinishChosen decodes the reply to a chosen-OT request.
func (r *Receiver) FinishChosen(req *Request, reply []byte, bits int) ([]uint64, error) {
	if err := checkBits(bits); err != nil {
		return nil, err
	}
	y, err := share.Unpack(reply, 2*len(req.choices), bits)
	if err != nil {
		return nil, fmt.Errorf("ot: chosen messages: %w", err)
	}
	m := share.Mask(bits)
	out := make([]uint64, len(req.choices))
	hashOnes(req.t, req.first, func(lo int, h []block) {
		for i := range h {
			j := lo + i
			c := uint64(req.choices[j])
			yc := y[2*j]&(c-1) | y[2*j+1]&(-c) // select without branching on c
			out[j] = (yc ^ h[i].lo64()) & m
		}
	})
	return out, nil
}

// SendChosen runs chosen OT over the connection; see ReplyChosen.
func (s *Sender) SendChosen(m0, m1 []uint64, bits int) error {
	if len(m0) != len(m1) {
		return fmt.Errorf("ot: chosen OT with %d and %d messages", len(m0), len(m1))
	}
	if err := checkBits(bits); err != nil {
		return err
	}
	u, err := s.conn.RecvType(typeExtU)
	if err != nil {
		return fmt.Errorf("ot: receive u: %w", err)
	}
	reply, err := s.ReplyChosen(u, m0, m1, bits)
	if err != nil {
		return err
	}
	if err := s.conn.Send(typeExtMsgs, reply); err != nil {
		return fmt.Errorf("ot: send chosen messages: %w", err)
	}
	return nil
}

// ReceiveChosen is the receiver's side of SendChosen; choices are 0 or 1.
func (r *Receiver) ReceiveChosen(choices []uint8, bits int) ([]uint64, error) {
	if err := checkBits(bits); err != nil {
		return nil, err
	}
	req, reply, err := r.roundTrip(choices)
	if err != nil {
		return nil, err
	}
	return r.FinishChosen(req, reply, bits)
}

func (r *Receiver) roundTrip(choices []uint8) (*Request, []byte, error) {
	req, u, err := r.Request(choices)
	if err != nil {
		return nil, nil, err
	}
	if err := r.conn.Send(typeExtU, u); err != nil {
		return nil, nil, fmt.Errorf("ot: send u: %w", err)
	}
	reply, err := r.conn.RecvType(typeExtMsgs)
	if err != nil {
		return nil, nil, fmt.Errorf("ot: receive reply: %w", err)
	}
	return req, reply, nil
}

// ReplyCorrelated answers a request for len(delta) additively correlated OTs
// in ring: it returns the sender's uniform x, and the receiver with choice c
// will get x + c·delta.
func (s *Sender) ReplyCorrelated(u []byte, delta []uint64, ring share.Ring) ([]uint64, []byte, error) {
	q, first, err := s.process(len(delta), u)
	if err != nil {
		return nil, nil, err
	}
	x := make([]uint64, len(delta))
	d := make([]uint64, len(delta))
	hashPairs(q, first, s.s, func(lo int, h0, h1 []block) {
		for i := range h0 {
			j := lo + i
			x[j] = ring.Reduce(h0[i].lo64())
			d[j] = ring.Sub(ring.Add(x[j], delta[j]), h1[i].lo64())
		}
	})
	return x, share.Pack(nil, d, ring.Bits()), nil
}

// FinishCorrelated decodes the reply to a correlated-OT request.
func (r *Receiver) FinishCorrelated(req *Request, reply []byte, ring share.Ring) ([]uint64, error) {
	d, err := share.Unpack(reply, len(req.choices), ring.Bits())
	if err != nil {
		return nil, fmt.Errorf("ot: correlations: %w", err)
	}
	out := make([]uint64, len(req.choices))
	hashOnes(req.t, req.first, func(lo int, h []block) {
		for i := range h {
			j := lo + i
			c := uint64(req.choices[j])
			out[j] = ring.Add(h[i].lo64(), d[j]&(-c))
		}
	})
	return out, nil
}

// SendCorrelated runs correlated OT over the connection; see ReplyCorrelated.
func (s *Sender) SendCorrelated(delta []uint64, ring share.Ring) ([]uint64, error) {
	u, err := s.conn.RecvType(typeExtU)
	if err != nil {
		return nil, fmt.Errorf("ot: receive u: %w", err)
	}
	x, reply, err := s.ReplyCorrelated(u, delta, ring)
	if err != nil {
		return nil, err
	}
	if err := s.conn.Send(typeExtMsgs, reply); err != nil {
		return nil, fmt.Errorf("ot: send correlations: %w", err)
	}
	return x, nil
}

// ReceiveCorrelated is the receiver's side of SendCorrelated.
func (r *Receiver) ReceiveCorrelated(choices []uint8, ring share.Ring) ([]uint64, error) {
	req, reply, err := r.roundTrip(choices)
	if err != nil {
		return nil, err
	}
	return r.FinishCorrelated(req, reply, ring)
}

// SendRandom runs n random OTs and returns both keys of each (one flight).
func (s *Sender) SendRandom(n int) ([][2]Key, error) {
	q, first, err := s.extend(n)
	if err != nil {
		return nil, err
	}
	return s.randomKeys(q, first), nil
}

func (s *Sender) randomKeys(q []block, first uint64) [][2]Key {
	keys := make([][2]Key, len(q))
	hashPairs(q, first, s.s, func(lo int, h0, h1 []block) {
		for i := range h0 {
			keys[lo+i] = [2]Key{blockKey(h0[i]), blockKey(h1[i])}
		}
	})
	return keys
}

// ReceiveRandom is the receiver's side of SendRandom: the key of each choice.
func (r *Receiver) ReceiveRandom(choices []uint8) ([]Key, error) {
	t, first, err := r.extend(choices)
	if err != nil {
		return nil, err
	}
	return receiverKeys(t, first), nil
}

func receiverKeys(t []block, first uint64) []Key {
	keys := make([]Key, len(t))
	hashOnes(t, first, func(lo int, h []block) {
		for i := range h {
			keys[lo+i] = blockKey(h[i])
		}
	})
	return keys
}

// hashPairs calls fn(lo, h0, h1) over consecutive chunks of q, in parallel
// ranges: h0[i] = H(first+lo+i, q[lo+i]) and h1[i] = H(first+lo+i,
// q[lo+i] ⊕ Δ), the sender's two pads of each OT (crhBlocks).
func hashPairs(q []block, first uint64, delta block, fn func(lo int, h0, h1 []block)) {
	inParallel(len(q), func(lo, hi int) {
		h0, h1, tmp := make([]block, tccrChunk), make([]block, tccrChunk), make([]block, tccrChunk)
		for c := lo; c < hi; c += tccrChunk {
			e := min(c+tccrChunk, hi)
			crhBlocks(first+uint64(c), q[c:e], block{}, h0, tmp)
			crhBlocks(first+uint64(c), q[c:e], delta, h1, tmp)
			fn(c, h0[:e-c], h1[:e-c])
		}
	})
}

// hashOnes is hashPairs for the receiver, who hashes only its t_j.
func hashOnes(t []block, first uint64, fn func(lo int, h []block)) {
	inParallel(len(t), func(lo, hi int) {
		h, tmp := make([]block, tccrChunk), make([]block, tccrChunk)
		for c := lo; c < hi; c += tccrChunk {
			e := min(c+tccrChunk, hi)
			crhBlocks(first+uint64(c), t[c:e], block{}, h, tmp)
			fn(c, h[:e-c])
		}
	})
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

// slotPad is the mask of message v when the 2^logN messages of an instance
// fit one key (2^logN·bits ≤ 128): the XOR over b of slot v of
// K_b^{v_b}, slot v being bits [v·bits, (v+1)·bits) of the key. This is
// Naor and Pinkas's 1-out-of-N OT from log N 1-out-of-2 OTs of keys
// (STOC 1999, "Oblivious transfer and polynomial evaluation"), pad_v =
// ⊕_b F_{K_b^{v_b}}(v), with F_K(v) = slot v of K: the keys are outputs
// of the correlation-robust hash (crhBlocks) under distinct tweaks, so their
// slots are independent uniform strings, and the receiver, who holds only
// K_b^{c_b}, misses for every v ≠ c at least one key K_b^{1−c_b} whose
// slot v enters pad_v and no other pad: the pads of the messages it did
// not choose are uniform and independent. It replaces N hashes of log N
// keys (nPad) by XORs where the messages are short (the millionaires'
// leaves: 16 messages of 2 bits).
func slotPad(v, bits int, keys [][2]Key) uint64 {
	var pad uint64
	shift := v * bits
	for b := range keys {
		k := &keys[b][v>>b&1]
		lo := binary.LittleEndian.Uint64(k[0:])
		hi := binary.LittleEndian.Uint64(k[8:])
		var x uint64
		switch {
		case shift >= 64:
			x = hi >> (shift - 64)
		case shift == 0:
			x = lo
		default:
			x = lo>>shift | hi<<(64-shift)
		}
		pad ^= x
	}
	return pad & share.Mask(bits)
}

// useSlots reports whether an instance's messages fit one key (slotPad).
func useSlots(logN, bits int) bool { return bits<<logN <= 8*len(Key{}) }

func checkLogN(logN int) error {
	if logN < 1 || logN > MaxLogN {
		return fmt.Errorf("ot: 1-out-of-2^%d OT: log N outside [1, %d]", logN, MaxLogN)
	}
	return nil
}

// RequestN starts len(choices) instances of 1-out-of-2^logN OT.
func (r *Receiver) RequestN(choices []uint16, logN int) (*Request, []byte, error) {
	if err := checkLogN(logN); err != nil {
		return nil, nil, err
	}
	N := 1 << logN
	if len(choices)*logN > MaxBatch {
		return nil, nil, fmt.Errorf("ot: %d instances of 1-out-of-%d OT exceed the batch limit", len(choices), N)
	}
	cb := make([]uint8, 0, len(choices)*logN)
	for i, c := range choices {
		if int(c) >= N {
			return nil, nil, fmt.Errorf("ot: choice %d is %d, not below %d", i, c, N)
		}
		for b := 0; b < logN; b++ {
			cb = append(cb, uint8(c>>b&1))
		}
	}
	req, u, err := r.Request(cb)
	if err != nil {
		return nil, nil, err
	}
	req.nChoice = append([]uint16(nil), choices...)
	req.logN = logN
	return req, u, nil
}

// ReplyN answers a RequestN: instance i transfers msgs[i][c_i], where every
// msgs[i] holds 2^logN values of `bits` bits.
func (s *Sender) ReplyN(u []byte, msgs [][]uint64, logN, bits int) ([]byte, error) {
	if err := checkLogN(logN); err != nil {
		return nil, err
	}
	if err := checkBits(bits); err != nil {
		return nil, err
	}
	N := 1 << logN
	for i, m := range msgs {
		if len(m) != N {
			return nil, fmt.Errorf("ot: 1-out-of-%d OT instance %d has %d messages", N, i, len(m))
		}
	}
	if len(msgs)*logN > MaxBatch {
		return nil, fmt.Errorf("ot: %d instances of 1-out-of-%d OT exceed the batch limit", len(msgs), N)
	}
	q, first, err := s.process(len(msgs)*logN, u)
	if err != nil {
		return nil, err
	}
	keys := s.randomKeys(q, first)
	y := make([]uint64, len(msgs)*N)
	slots := useSlots(logN, bits)
	inParallel(len(msgs), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			ks := keys[i*logN : (i+1)*logN]
			idx := first + uint64(i*logN)
			for v, m := range msgs[i] {
				if slots {
					y[i*N+v] = m ^ slotPad(v, bits, ks)
				} else {
					y[i*N+v] = m ^ nPad(idx, v, ks)
				}
			}
		}
	})
	return share.Pack(nil, y, bits), nil
}

// FinishN decodes the reply to a RequestN.
func (r *Receiver) FinishN(req *Request, reply []byte, bits int) ([]uint64, error) {
	if req.logN == 0 {
		return nil, fmt.Errorf("ot: FinishN on a request not made by RequestN")
	}
	if err := checkBits(bits); err != nil {
		return nil, err
	}
	if w := packedWidth(req.logN, bits); w != 0 {
		return r.finishNPacked(req, reply, bits, w)
	}
	logN, N := req.logN, 1<<req.logN
	y, err := share.Unpack(reply, len(req.nChoice)*N, bits)
	if err != nil {
		return nil, fmt.Errorf("ot: 1-out-of-%d messages: %w", N, err)
	}
	keys := receiverKeys(req.t, req.first)
	m := share.Mask(bits)
	out := make([]uint64, len(req.nChoice))
	slots := useSlots(logN, bits)
	inParallel(len(req.nChoice), func(lo, hi int) {
		ks := make([][2]Key, logN)
		for i := lo; i < hi; i++ {
			c := req.nChoice[i]
			for b := 0; b < logN; b++ {
				// The receiver holds only K^{c_b}; nPad reads side c_b only.
				k := keys[i*logN+b]
				ks[b] = [2]Key{k, k}
			}
			// Indexing a table by a secret is a cache side channel; scan it all.
			var yc uint64
			for v := 0; v < N; v++ {
				yc |= y[i*N+v] & -uint64(subtle.ConstantTimeEq(int32(v), int32(c)))
			}
			if slots {
				out[i] = (yc ^ slotPad(int(c), bits, ks)) & m
			} else {
				out[i] = (yc ^ nPad(req.first+uint64(i*logN), int(c), ks)) & m
			}
		}
	})
	return out, nil
}

// SendN runs 1-out-of-2^logN OT over the connection; see ReplyN.
func (s *Sender) SendN(msgs [][]uint64, logN, bits int) error {
	if err := checkLogN(logN); err != nil {
		return err
	}
	if err := checkBits(bits); err != nil {
		return err
	}
	for i, m := range msgs {
		if len(m) != 1<<logN {
			return fmt.Errorf("ot: 1-out-of-%d OT instance %d has %d messages", 1<<logN, i, len(m))
		}
	}
	u, err := s.conn.RecvType(typeExtU)
	if err != nil {
		return fmt.Errorf("ot: receive u: %w", err)
	}
	reply, err := s.ReplyN(u, msgs, logN, bits)
	if err != nil {
		return err
	}
	if err := s.conn.Send(typeExtMsgs, reply); err != nil {
		return fmt.Errorf("ot: send 1-out-of-%d messages: %w", 1<<logN, err)
	}
	return nil
}

// ReceiveN is the receiver's side of SendN; each choice is in [0, 2^logN).
func (r *Receiver) ReceiveN(choices []uint16, logN, bits int) ([]uint64, error) {
	if err := checkBits(bits); err != nil {
		return nil, err
	}
	req, u, err := r.RequestN(choices, logN)
	if err != nil {
		return nil, err
	}
	if err := r.conn.Send(typeExtU, u); err != nil {
		return nil, fmt.Errorf("ot: send u: %w", err)
	}
	reply, err := r.conn.RecvType(typeExtMsgs)
	if err != nil {
		return nil, fmt.Errorf("ot: receive reply: %w", err)
	}
	return r.FinishN(req, reply, bits)
}
