package ot

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/rosemary-fhe/rosemary/hempc/share"
	"github.com/rosemary-fhe/rosemary/hempc/transport"
)

// kkWidth is the code length of the 1-out-of-N extension: the Walsh–Hadamard
// code of 8-bit messages, 256 bits long with minimum distance 128 = κ.
const kkWidth = 256

// MaxKKLogN bounds log N for the KK13 extension (the code encodes 8 bits).
const MaxKKLogN = 8

const kkLabel = "rosemary/hempc/ot.kk13"

type row256 [4]uint64

// whCode returns the Walsh–Hadamard codeword of v: bit i is <v, i> mod 2.
func whCode(v int) row256 {
	var c row256
	for i := 0; i < kkWidth; i++ {
		c[i/64] |= uint64(bits.OnesCount(uint(v&i))&1) << (i % 64)
	}
	return c
}

var whTable = func() (t [1 << MaxKKLogN]row256) {
	for v := range t {
		t[v] = whCode(v)
	}
	return
}()

// NSender is the sender of the 1-out-of-N OT extension of Kolesnikov and
// Kumaresan (CRYPTO 2013). It is not safe for concurrent use.
type NSender struct {
	conn    *transport.Conn
	s       row256
	streams [kkWidth]*share.PRG
	next    uint64
}

// NReceiver is the receiver of the KK13 extension.
type NReceiver struct {
	conn    *transport.Conn
	streams [kkWidth][2]*share.PRG
	next    uint64
}

// NewNSender runs 256 base OTs (as base receiver); the peer calls NewNReceiver.
func NewNSender(conn *transport.Conn) (*NSender, error) {
	var sb [32]byte
	if _, err := rand.Read(sb[:]); err != nil {
		return nil, fmt.Errorf("ot: sample s: %w", err)
	}
	snd := &NSender{conn: conn}
	choices := make([]uint8, kkWidth)
	for i := range snd.s {
		snd.s[i] = binary.LittleEndian.Uint64(sb[8*i:])
	}
	for i := range choices {
		choices[i] = uint8(snd.s[i/64] >> (i % 64) & 1)
	}
	keys, err := BaseReceive(conn, choices)
	if err != nil {
		return nil, fmt.Errorf("ot: KK13 sender setup: %w", err)
	}
	for i := range keys {
		snd.streams[i] = share.NewPRGFromSeed(keys[i][:], kkLabel)
	}
	return snd, nil
}

// NewNReceiver runs 256 base OTs (as base sender); the peer calls NewNSender.
func NewNReceiver(conn *transport.Conn) (*NReceiver, error) {
	keys, err := BaseSend(conn, kkWidth)
	if err != nil {
		return nil, fmt.Errorf("ot: KK13 receiver setup: %w", err)
	}
	r := &NReceiver{conn: conn}
	for i := range keys {
		r.streams[i] = [2]*share.PRG{share.NewPRGFromSeed(keys[i][0][:], kkLabel), share.NewPRGFromSeed(keys[i][1][:], kkLabel)}
	}
	return r, nil
}

// NRequest is the KK13 receiver's state between request and reply.
type NRequest struct {
	t       []row256
	first   uint64
	choices []uint16
	logN    int
}

// transpose256 turns 256 columns of `words` words into words*64 rows.
func transpose256(cols *[kkWidth][]uint64, words int) []row256 {
	rows := make([]row256, words*64)
	var m [64]uint64
	for g := 0; g < 4; g++ {
		for w := 0; w < words; w++ {
			for i := 0; i < 64; i++ {
				m[i] = cols[g*64+i][w]
			}
			transpose64(&m)
			for t := 0; t < 64; t++ {
				rows[w*64+t][g] = m[t]
			}
		}
	}
	return rows
}

func kkHash(j uint64, x row256) uint64 {
	var in [8 + 8 + 32]byte
	copy(in[:8], "RMKK13v1")
	binary.LittleEndian.PutUint64(in[8:], j)
	for i := range x {
		binary.LittleEndian.PutUint64(in[16+8*i:], x[i])
	}
	h := sha256.Sum256(in[:])
	return binary.LittleEndian.Uint64(h[:8])
}

// Request starts len(choices) instances of 1-out-of-2^logN OT and returns
// the u matrix for the sender (32 bytes per instance).
func (r *NReceiver) Request(choices []uint16, logN int) (*NRequest, []byte, error) {
	if logN < 1 || logN > MaxKKLogN {
		return nil, nil, fmt.Errorf("ot: KK13 log N %d outside [1, %d]", logN, MaxKKLogN)
	}
	if err := checkBatch(len(choices)); err != nil {
		return nil, nil, err
	}
	n := len(choices)
	words := (n + 63) / 64
	// Columns of the codeword matrix D whose row j is C(c_j), by transposing
	// 64×64 blocks of the rows.
	var d [kkWidth][]uint64
	for i := range d {
		d[i] = make([]uint64, words)
	}
	var m [64]uint64
	for g := 0; g < 4; g++ {
		for w := 0; w < words; w++ {
			for t := 0; t < 64; t++ {
				m[t] = 0
				if j := w*64 + t; j < n {
					c := choices[j]
					if int(c) >= 1<<logN {
						return nil, nil, fmt.Errorf("ot: choice %d is %d, not below %d", j, c, 1<<logN)
					}
					m[t] = whTable[c][g]
				}
			}
			transpose64(&m)
			for i := 0; i < 64; i++ {
				d[g*64+i][w] = m[i]
			}
		}
	}
	var cols [kkWidth][]uint64
	msg := make([]byte, kkWidth*words*8)
	buf := make([]byte, words*8)
	g1 := make([]uint64, words)
	for i := 0; i < kkWidth; i++ {
		cols[i] = make([]uint64, words)
		readWords(r.streams[i][0], cols[i], buf)
		readWords(r.streams[i][1], g1, buf)
		for w := 0; w < words; w++ {
			binary.LittleEndian.PutUint64(msg[(i*words+w)*8:], cols[i][w]^g1[w]^d[i][w])
		}
	}
	req := &NRequest{t: transpose256(&cols, words)[:n], first: r.next, choices: append([]uint16(nil), choices...), logN: logN}
	r.next += uint64(words * 64)
	return req, msg, nil
}

func checkKK(msgs [][]uint64, logN, bitsW int) error {
	if logN < 1 || logN > MaxKKLogN {
		return fmt.Errorf("ot: KK13 log N %d outside [1, %d]", logN, MaxKKLogN)
	}
	if err := checkBits(bitsW); err != nil {
		return err
	}
	for j, m := range msgs {
		if len(m) != 1<<logN {
			return fmt.Errorf("ot: KK13 instance %d has %d messages, want %d", j, len(m), 1<<logN)
		}
	}
	return checkBatch(len(msgs))
}

// Reply answers a Request: instance j transfers msgs[j][c_j]; every msgs[j]
// holds 2^logN values of `bits` bits.
func (s *NSender) Reply(u []byte, msgs [][]uint64, logN, bitsW int) ([]byte, error) {
	if err := checkKK(msgs, logN, bitsW); err != nil {
		return nil, err
	}
	N, n := 1<<logN, len(msgs)
	words := (n + 63) / 64
	if len(u) != kkWidth*words*8 {
		return nil, fmt.Errorf("ot: KK13 u matrix has %d bytes, want %d for %d instances", len(u), kkWidth*words*8, n)
	}
	var cols [kkWidth][]uint64
	buf := make([]byte, words*8)
	for i := 0; i < kkWidth; i++ {
		cols[i] = make([]uint64, words)
		readWords(s.streams[i], cols[i], buf)
		sel := -(s.s[i/64] >> (i % 64) & 1)
		for w := 0; w < words; w++ {
			cols[i][w] ^= binary.LittleEndian.Uint64(u[(i*words+w)*8:]) & sel
		}
	}
	q := transpose256(&cols, words)[:n]
	first := s.next
	s.next += uint64(words * 64)
	// Precompute C(v) ∧ s for every v.
	cs := make([]row256, N)
	for v := range cs {
		for i := range cs[v] {
			cs[v][i] = whTable[v][i] & s.s[i]
		}
	}
	// N hashes per instance dominate the cost: instances are split over
	// the CPUs.
	y := make([]uint64, n*N)
	inParallel(n, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			m := msgs[j]
			for v := 0; v < N; v++ {
				x := q[j]
				for i := range x {
					x[i] ^= cs[v][i]
				}
				y[j*N+v] = m[v] ^ kkHash(first+uint64(j), x)
			}
		}
	})
	return share.Pack(nil, y, bitsW), nil
}

// Finish decodes the reply to a Request.
func (r *NReceiver) Finish(req *NRequest, reply []byte, bitsW int) ([]uint64, error) {
	if err := checkBits(bitsW); err != nil {
		return nil, err
	}
	N := 1 << req.logN
	y, err := share.Unpack(reply, len(req.choices)*N, bitsW)
	if err != nil {
		return nil, fmt.Errorf("ot: KK13 messages: %w", err)
	}
	m := share.Mask(bitsW)
	out := make([]uint64, len(req.choices))
	inParallel(len(req.choices), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			c := req.choices[j]
			var yc uint64
			for v := 0; v < N; v++ { // scan: no secret-indexed load
				yc |= y[j*N+v] & -uint64(subtle.ConstantTimeEq(int32(v), int32(c)))
			}
			out[j] = (yc ^ kkHash(req.first+uint64(j), req.t[j])) & m
		}
	})
	return out, nil
}

// Send runs KK13 1-out-of-N OT over the connection; see Reply.
func (s *NSender) Send(msgs [][]uint64, logN, bitsW int) error {
	if err := checkKK(msgs, logN, bitsW); err != nil {
		return err
	}
	u, err := s.conn.RecvType(typeExtU)
	if err != nil {
		return fmt.Errorf("ot: KK13 receive u: %w", err)
	}
	reply, err := s.Reply(u, msgs, logN, bitsW)
	if err != nil {
		return err
	}
	if err := s.conn.Send(typeExtMsgs, reply); err != nil {
		return fmt.Errorf("ot: KK13 send messages: %w", err)
	}
	return nil
}

// Receive is the receiver's side of Send.
func (r *NReceiver) Receive(choices []uint16, logN, bitsW int) ([]uint64, error) {
	req, u, err := r.Request(choices, logN)
	if err != nil {
		return nil, err
	}
	if err := r.conn.Send(typeExtU, u); err != nil {
		return nil, fmt.Errorf("ot: KK13 send u: %w", err)
	}
	reply, err := r.conn.RecvType(typeExtMsgs)
	if err != nil {
		return nil, fmt.Errorf("ot: KK13 receive reply: %w", err)
	}
	return r.Finish(req, reply, bitsW)
}
