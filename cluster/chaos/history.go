package chaos

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"time"
)

// attempt is one load: its data and when it ran. A load publishes, if at
// all, between its start and its end.
type attempt struct {
	id         int
	data       []byte
	start, end time.Time // end zero while it runs
	generation uint64    // the generation it published, when acknowledged
}

// history is every load the run attempted and which load each generation
// was answered from.
type history struct {
	attempts []*attempt
	answered map[uint64]int // generation → the attempt its answers came from
}

// attemptData is attempt id's records: its own, so an answer names the
// load that wrote it.
func attemptData(seed uint64, id, records, size int) []byte {
	b := make([]byte, records*size)
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	binary.LittleEndian.PutUint64(key[8:], uint64(id))
	rand.NewChaCha8(key).Read(b)
	return b
}

// writer finds the attempt whose record i is rec (nil: none).
func (h *history) writer(i, size int, rec []byte) *attempt {
	for _, a := range h.attempts {
		if bytes.Equal(a.data[i*size:(i+1)*size], rec) {
			return a
		}
	}
	return nil
}

// staleAfter reports a generation newer than g acknowledged before t: a
// query that started at t must not be answered from g.
func (h *history) staleAfter(g uint64, t time.Time) *attempt {
	for _, a := range h.attempts {
		if a.generation > g && !a.end.IsZero() && a.end.Before(t) {
			return a
		}
	}
	return nil
}
