package ot

import (
	"sync"
	"testing"
)

// lpnTables returns a random table of p.k blocks on huge pages (as a
// pool's base is), its choice bits and outputs for both.
func lpnTables(b *testing.B, p ferretParams) (secret []block, bits []uint8, out []block, bitsOut []uint8) {
	secret, free := hugeBlocks(p.k)
	b.Cleanup(free)
	copy(secret, randBlocks(b, p.k))
	bits = make([]uint8, p.k)
	for i, x := range secret {
		bits[i] = uint8(x[0] & 1)
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
	report := func(b *testing.B, parties int) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*parties*p.n*lpnWeight), "ns/gather")
	}
	b.Run("sender", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			lpnEncode(p, sk, sOut, nil, nil)
		}
		report(b, 1)
	})
	b.Run("receiver", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			lpnEncode(p, rk, rOut, rBits, rBitsOut)
		}
		report(b, 1)
	})
	b.Run("both", func(b *testing.B) {
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
