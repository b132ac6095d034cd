package ot

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/share"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// kappa is the computational security parameter (number of base OTs).
const kappa = 128

// MaxBatch bounds the OTs of one call, so one u matrix (16 bytes per OT)
// stays below the transport's default frame limit.
const MaxBatch = 1 << 23

const streamLabel = "rosemary/hempc/ot.iknp"

// Sender is the IKNP extension sender (the base-OT receiver). It is not
// safe for concurrent use.
type Sender struct {
	conn    *transport.Conn
	s       block
	streams [kappa]*share.PRG // G(k_i^{s_i})
	next    uint64            // index of the next OT
	pool    *senderPool       // silent OT; nil for IKNP
}

// Receiver is the IKNP extension receiver (the base-OT sender). It is not
// safe for concurrent use.
type Receiver struct {
	conn    *transport.Conn
	streams [kappa][2]*share.PRG // G(k_i^0), G(k_i^1)
	next    uint64
	pool    *receiverPool // silent OT; nil for IKNP
}

// NewSender runs the base OTs (as base receiver) and returns an extension
// sender. The peer must call NewReceiver on the other end.
func NewSender(conn *transport.Conn) (*Sender, error) {
	var sb [16]byte
	if _, err := rand.Read(sb[:]); err != nil {
		return nil, fmt.Errorf("ot: sample s: %w", err)
	}
	snd := &Sender{conn: conn, s: block{binary.LittleEndian.Uint64(sb[:8]), binary.LittleEndian.Uint64(sb[8:])}}
	choices := make([]uint8, kappa)
	for i := range choices {
		choices[i] = uint8(snd.s[i/64] >> (i % 64) & 1)
	}
	keys, err := BaseReceive(conn, choices)
	if err != nil {
		return nil, fmt.Errorf("ot: extension sender setup: %w", err)
	}
	for i := range keys {
		snd.streams[i] = share.NewPRGFromSeed(keys[i][:], streamLabel)
	}
	return snd, nil
}

// NewReceiver runs the base OTs (as base sender) and returns an extension
// receiver. The peer must call NewSender on the other end.
func NewReceiver(conn *transport.Conn) (*Receiver, error) {
	keys, err := BaseSend(conn, kappa)
	if err != nil {
		return nil, fmt.Errorf("ot: extension receiver setup: %w", err)
	}
	r := &Receiver{conn: conn}
	for i := range keys {
		r.streams[i] = [2]*share.PRG{share.NewPRGFromSeed(keys[i][0][:], streamLabel), share.NewPRGFromSeed(keys[i][1][:], streamLabel)}
	}
	return r, nil
}

func readWords(g *share.PRG, dst []uint64, buf []byte) {
	g.Read(buf)
	for w := range dst {
		dst[w] = binary.LittleEndian.Uint64(buf[8*w:])
	}
}

func checkBatch(n int) error {
	if n < 0 || n > MaxBatch {
		return fmt.Errorf("ot: batch of %d OTs outside [0, %d]", n, MaxBatch)
	}
	return nil
}

// Request is the receiver's state between sending its u matrix and
// receiving the sender's reply.
type Request struct {
	t       []block
	first   uint64
	choices []uint8  // one bit per OT
	nChoice []uint16 // 1-out-of-N choices, when made by RequestN
	logN    int
}

// Len returns the number of OTs (or 1-out-of-N instances) requested.
func (q *Request) Len() int {
	if q.logN > 0 {
		return len(q.nChoice)
	}
	return len(q.choices)
}

// Request starts len(choices) OTs with the given choice bits and returns the
// message to send to the sender: the u matrix (16 bytes per OT) under IKNP,
// the packed choice corrections (one bit per OT) when silent. It serves
// chosen, correlated and random OT.
func (r *Receiver) Request(choices []uint8) (*Request, []byte, error) {
	if err := checkBatch(len(choices)); err != nil {
		return nil, nil, err
	}
	if r.pool != nil {
		t, msg, err := r.requestSilent(choices)
		if err != nil {
			return nil, nil, err
		}
		req := &Request{t: t, first: r.next, choices: append([]uint8(nil), choices...)}
		r.next += uint64(len(choices))
		return req, msg, nil
	}
	words := (len(choices) + 63) / 64
	rvec := make([]uint64, words)
	for j, c := range choices {
		if c > 1 {
			return nil, nil, fmt.Errorf("ot: choice %d is %d, not a bit", j, c)
		}
		rvec[j/64] |= uint64(c) << (j % 64)
	}
	var cols [kappa][]uint64
	msg := make([]byte, kappa*words*8)
	buf := make([]byte, words*8)
	g1 := make([]uint64, words)
	for i := 0; i < kappa; i++ {
		cols[i] = make([]uint64, words)
		readWords(r.streams[i][0], cols[i], buf)
		readWords(r.streams[i][1], g1, buf)
		for w := 0; w < words; w++ {
			binary.LittleEndian.PutUint64(msg[(i*words+w)*8:], cols[i][w]^g1[w]^rvec[w])
		}
	}
	first := r.next
	r.next += uint64(words * 64)
	req := &Request{t: transposeCols(&cols, words)[:len(choices)], first: first, choices: append([]uint8(nil), choices...)}
	return req, msg, nil
}

// extend sends a request over the connection.
func (r *Receiver) extend(choices []uint8) ([]block, uint64, error) {
	req, u, err := r.Request(choices)
	if err != nil {
		return nil, 0, err
	}
	if err := r.conn.Send(typeExtU, u); err != nil {
		return nil, 0, fmt.Errorf("ot: send u: %w", err)
	}
	return req.t, req.first, nil
}

// process turns a receiver's request for n OTs into rows q_j.
func (s *Sender) process(n int, msg []byte) ([]block, uint64, error) {
	if err := checkBatch(n); err != nil {
		return nil, 0, err
	}
	if s.pool != nil {
		q, err := s.processSilent(n, msg)
		if err != nil {
			return nil, 0, err
		}
		first := s.next
		s.next += uint64(n)
		return q, first, nil
	}
	words := (n + 63) / 64
	if len(msg) != kappa*words*8 {
		return nil, 0, fmt.Errorf("ot: u matrix has %d bytes, want %d for %d OTs", len(msg), kappa*words*8, n)
	}
	var cols [kappa][]uint64
	buf := make([]byte, words*8)
	for i := 0; i < kappa; i++ {
		cols[i] = make([]uint64, words)
		readWords(s.streams[i], cols[i], buf)
		sel := -(s.s[i/64] >> (i % 64) & 1) // all ones iff s_i = 1
		for w := 0; w < words; w++ {
			cols[i][w] ^= binary.LittleEndian.Uint64(msg[(i*words+w)*8:]) & sel
		}
	}
	first := s.next
	s.next += uint64(words * 64)
	return transposeCols(&cols, words)[:n], first, nil
}

// extend receives a u matrix over the connection and processes it.
func (s *Sender) extend(n int) ([]block, uint64, error) {
	if err := checkBatch(n); err != nil {
		return nil, 0, err
	}
	msg, err := s.conn.RecvType(typeExtU)
	if err != nil {
		return nil, 0, fmt.Errorf("ot: receive u: %w", err)
	}
	return s.process(n, msg)
}
