package ot

import (
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user and system time so far: the core-seconds
// a benchmark's goroutines spent, whatever else the machine runs (it is
// shared, and wall times move with its load).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// lpnEncodeRows is lpnEncode as it was before the assembly decoded the
// stream (issue 41), on its pure-Go path: chunk by chunk, the indices drawn
// into an array, then lpnGather and the bits (in parallel, as it was). It is the reference the
// encodings must equal bit for bit: the code is public and both parties,
// old and new, must agree on it.
func lpnEncodeRows(p ferretParams, secret, out []block, bits, bitsOut []uint8) {
	chunks := (p.n + lpnRowChunk - 1) / lpnRowChunk
	inParallel(chunks, func(lo, hi int) {
		stream := make([]byte, 4*lpnWeight*lpnRowChunk)
		idx := make([]int32, lpnWeight*lpnRowChunk)
		var iv [16]byte
		k := uint64(p.k)
		for c := lo; c < hi; c++ {
			binary.LittleEndian.PutUint64(iv[:], uint64(p.k))
			binary.LittleEndian.PutUint64(iv[8:], uint64(c)<<32)
			clear(stream)
			cipher.NewCTR(lpnKey, iv[:]).XORKeyStream(stream, stream)
			rows := min(lpnRowChunk, p.n-c*lpnRowChunk)
			for i := range idx[:rows*lpnWeight] {
				idx[i] = int32(uint64(binary.LittleEndian.Uint32(stream[4*i:])) * k >> 32)
			}
			lpnGather(secret, idx, out[c*lpnRowChunk:c*lpnRowChunk+rows])
			if bits != nil {
				bdst := bitsOut[c*lpnRowChunk : c*lpnRowChunk+rows]
				for r := range bdst {
					ix := idx[r*lpnWeight : r*lpnWeight+lpnWeight]
					bdst[r] ^= bits[ix[0]] ^ bits[ix[1]] ^ bits[ix[2]] ^ bits[ix[3]] ^ bits[ix[4]] ^
						bits[ix[5]] ^ bits[ix[6]] ^ bits[ix[7]] ^ bits[ix[8]] ^ bits[ix[9]]
				}
			}
		}
	})
}

// lpnEncode equals lpnEncodeRows on the outputs and the bits, whole, for
// both parameter sets, for row counts that end inside a chunk or inside
// the prefetch distance, for tiny tables, and with the chunks split over
// several workers; the sender's call (no bits) leaves bitsOut alone.
func TestLPNEncodeMatchesRows(t *testing.T) {
	regular, _ := FerretRegular.params()
	small, _ := FerretSmall.params()
	defer func(m, w int) { parallelMin, parallelWidth = m, w }(parallelMin, parallelWidth)
	parallelMin = 1
	for _, c := range []struct {
		p ferretParams
		w int
	}{
		{regular, 0}, {small, 0}, {small, 3},
		{ferretParams{n: 1, k: 1}, 0}, {ferretParams{n: 5, k: 2}, 0},
		{ferretParams{n: 3*lpnRowChunk + 7, k: 3}, 2},
		{ferretParams{n: 5*lpnRowChunk - 1, k: 36288}, 4},
	} {
		parallelWidth = c.w
		t.Run(fmt.Sprintf("n=%d/k=%d/w=%d", c.p.n, c.p.k, c.w), func(t *testing.T) {
			if c.p == regular && !useAsmGather {
				// The Go path is the reference's loop; with purego's
				// crypto too, the regular set takes ≈ 18 s.
				t.Skip("regular set: the assembly path only")
			}
			secret, bits, want, wantBits := lpnTables(t, c.p) // on huge pages: the regular set's misses are TLB misses too otherwise
			for i := range want {
				want[i] = block{uint64(i) * 0x9e3779b97f4a7c15, ^uint64(i)}
			}
			got := append([]block(nil), want...)
			gotBits := append([]uint8(nil), wantBits...)
			sent := append([]block(nil), want...)
			untouched := append([]uint8(nil), wantBits...)
			lpnEncodeRows(c.p, secret, want, bits, wantBits)
			lpnEncode(c.p, secret, got, bits, gotBits)
			lpnEncode(c.p, secret, sent, nil, untouched)
			for j := range want {
				if got[j] != want[j] || sent[j] != want[j] || gotBits[j] != wantBits[j] || untouched[j] != uint8(j) {
					t.Fatalf("row %d: %x (sender %x), bits %d (sender's %d), want %x, bits %d (sender's %d)",
						j, got[j], sent[j], gotBits[j], untouched[j], want[j], wantBits[j], uint8(j))
				}
			}
		})
	}
}

// lpnTables returns a random table of p.k blocks on huge pages (as a
// pool's base is), its choice bits and outputs for both.
func lpnTables(b testing.TB, p ferretParams) (secret []block, bits []uint8, out []block, bitsOut []uint8) {
	secret, free := hugeBlocks(p.k)
	b.Cleanup(free)
	copy(secret, randBlocks(b, p.k))
	bits = make([]uint8, p.k)
	for i, x := range secret {
		bits[i] = uint8(x[1] & 1)
	}
	out, bitsOut = make([]block, p.n), make([]uint8, p.n)
	for i := range out { // fault the pages in here, not in the first timed run
		out[i], bitsOut[i] = block{uint64(i)}, uint8(i)
	}
	return secret, bits, out, bitsOut
}

// BenchmarkLPNEncode times a whole regular-set lpnEncode on all cores: the
// sender's (blocks only), the receiver's (blocks and bits), and both at
// once over two tables, as the parties of one process run it.
func BenchmarkLPNEncode(b *testing.B) {
	p, _ := FerretRegular.params()
	sk, _, sOut, _ := lpnTables(b, p)
	rk, rBits, rOut, rBitsOut := lpnTables(b, p)
	var cpu time.Duration
	report := func(b *testing.B, parties int) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*parties*p.n*lpnWeight), "ns/gather")
		b.ReportMetric(float64((cpuTime()-cpu).Milliseconds())/float64(b.N), "cpu-ms/op")
	}
	b.Run("sender", func(b *testing.B) {
		cpu = cpuTime()
		for i := 0; i < b.N; i++ {
			lpnEncode(p, sk, sOut, nil, nil)
		}
		report(b, 1)
	})
	b.Run("receiver", func(b *testing.B) {
		cpu = cpuTime()
		for i := 0; i < b.N; i++ {
			lpnEncode(p, rk, rOut, rBits, rBitsOut)
		}
		report(b, 1)
	})
	b.Run("both", func(b *testing.B) {
		cpu = cpuTime()
		for i := 0; i < b.N; i++ {
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); lpnEncode(p, sk, sOut, nil, nil) }()
			lpnEncode(p, rk, rOut, rBits, rBitsOut)
			wg.Wait()
		}
		report(b, 2)
	})
}
