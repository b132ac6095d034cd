package ot

import (
	"crypto/aes"
	"crypto/rand"
	"testing"
)

func randBlocks(t testing.TB, n int) []block {
	buf := make([]byte, 16*n)
	if _, err := rand.Read(buf); err != nil {
		t.Fatal(err)
	}
	out := make([]block, n)
	for j := range out {
		out[j] = getBlock(buf[16*j:])
	}
	return out
}

// The expanded key and the kernel agree with crypto/aes block for block,
// for random keys and every tail length of the eight-block loop.
func TestFixedAESMatchesCryptoAES(t *testing.T) {
	for trial := 0; trial < 4; trial++ {
		var key [16]byte
		if _, err := rand.Read(key[:]); err != nil {
			t.Fatal(err)
		}
		c, err := aes.NewCipher(key[:])
		if err != nil {
			t.Fatal(err)
		}
		f := &fixedAES{c: c}
		expandKey128(key[:], &f.rk)
		for _, n := range []int{1, 7, 8, 9, 16, 23, 300} {
			src := randBlocks(t, n)
			dst := make([]block, n)
			f.encrypt(dst, src)
			var buf [32]byte
			for j := range src {
				src[j].put(buf[:16])
				c.Encrypt(buf[16:], buf[:16])
				if want := getBlock(buf[16:]); dst[j] != want {
					t.Fatalf("key %x, %d blocks: block %d = %x, crypto/aes %x (AES-NI kernel: %v)", key, n, j, dst[j], want, useAESNI)
				}
			}
			f.encrypt(src, src) // in place
			for j := range src {
				if src[j] != dst[j] {
					t.Fatalf("in place, block %d differs", j)
				}
			}
		}
	}
}

// FIPS 197 Appendix C.1: AES-128 of 00112233…eeff under 000102…0f.
func TestFixedAESKnownAnswer(t *testing.T) {
	var key [16]byte
	var pt [16]byte
	for i := range key {
		key[i] = byte(i)
		pt[i] = byte(i * 0x11)
	}
	f := &fixedAES{}
	expandKey128(key[:], &f.rk)
	f.c, _ = aes.NewCipher(key[:])
	out := make([]block, 9) // nine copies: the eight-block loop and the tail
	in := make([]block, 9)
	for j := range in {
		in[j] = getBlock(pt[:])
	}
	f.encrypt(out, in)
	want := []byte{0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a}
	for j := range out {
		var got [16]byte
		out[j].put(got[:])
		if string(got[:]) != string(want) {
			t.Fatalf("block %d: %x, want %x", j, got, want)
		}
	}
}

// crhBlocks is π(π(x ⊕ d) ⊕ (i, 0)) ⊕ π(x ⊕ d), checked against crypto/aes.
func TestCRHBlocksDefinition(t *testing.T) {
	const n = 2*tccrChunk + 5
	x := randBlocks(t, n)
	d := randBlocks(t, 1)[0]
	out, tmp := make([]block, n), make([]block, tccrChunk)
	const first = 1<<40 + 3
	crhBlocks(first, x, d, out, tmp)
	pi := func(b block) block {
		var buf [32]byte
		b.put(buf[:16])
		crhCipher.c.Encrypt(buf[16:], buf[:16])
		return getBlock(buf[16:])
	}
	for j := range x {
		a := pi(x[j].xor(d))
		want := pi(a.xor(block{first + uint64(j), 0})).xor(a)
		if out[j] != want {
			t.Fatalf("H(%d, x ⊕ d) = %x, want %x", j, out[j], want)
		}
	}
	if got := crhOne(first+7, x[7].xor(d)); got != out[7] {
		t.Fatalf("crhOne %x, crhBlocks %x", got, out[7])
	}
}

func BenchmarkFixedAES(b *testing.B) {
	src := randBlocks(b, 1024)
	b.SetBytes(16 * 1024)
	for i := 0; i < b.N; i++ {
		crhCipher.encrypt(src, src)
	}
}

func BenchmarkCRHBlocks(b *testing.B) {
	x := randBlocks(b, 1024)
	out, tmp := make([]block, 1024), make([]block, tccrChunk)
	b.SetBytes(16 * 1024)
	for i := 0; i < b.N; i++ {
		crhBlocks(uint64(i), x, block{}, out, tmp)
	}
}

// ggmExpand's leaves and level sums follow the definition node by node:
// children π0(x) ⊕ x and π1(x) ⊕ x (crypto/aes), node j's at 2j and 2j+1,
// for trees wider than a chunk.
func TestGGMExpandDefinition(t *testing.T) {
	pi := func(b int, x block) block {
		var buf [32]byte
		x.put(buf[:16])
		ggmAES[b].c.Encrypt(buf[16:], buf[:16])
		return getBlock(buf[16:]).xor(x)
	}
	for _, h := range []int{1, 3, 9, 11} {
		root := randBlocks(t, 1)[0]
		level := []block{root}
		sums := make([][2]block, h)
		for l := 0; l < h; l++ {
			next := make([]block, 2*len(level))
			for j, x := range level {
				next[2*j], next[2*j+1] = pi(0, x), pi(1, x)
				sums[l][0] = sums[l][0].xor(next[2*j])
				sums[l][1] = sums[l][1].xor(next[2*j+1])
			}
			level = next
		}
		tree := make([]block, 1<<h)
		tree[0] = root
		got := make([][2]block, h)
		ggmExpand(new(hasher), tree, h, got)
		for j := range tree {
			if tree[j] != level[j] {
				t.Fatalf("h=%d: leaf %d = %x, want %x", h, j, tree[j], level[j])
			}
		}
		for l := range got {
			if got[l] != sums[l] {
				t.Fatalf("h=%d: level %d sums differ", h, l)
			}
		}
	}
}

// The assembly gather (decoding, prefetching, with and without the bits)
// equals lpnIndices then lpnGather and lpnGatherBits, for row counts around
// its prefetch distance and a whole chunk, and tables of 1, 3 and 5000.
func TestLPNGather(t *testing.T) {
	if !useAsmGather {
		t.Skip("no assembly gather here")
	}
	for _, k := range []int{1, 3, 5000} {
		secret := randBlocks(t, k)
		bits := make([]uint8, k)
		if _, err := rand.Read(bits); err != nil {
			t.Fatal(err)
		}
		for _, rows := range []int{1, 2, 5, 6, 7, 8, 13, lpnRowChunk} {
			u := make([]byte, 4*lpnWeight*rows)
			if _, err := rand.Read(u); err != nil {
				t.Fatal(err)
			}
			idx := make([]int32, lpnWeight*rows)
			lpnIndices(u, k, idx)
			want := randBlocks(t, rows)
			wantBits := make([]uint8, rows)
			if _, err := rand.Read(wantBits); err != nil {
				t.Fatal(err)
			}
			got := append([]block(nil), want...)
			gotBits := append([]uint8(nil), wantBits...)
			alone := append([]block(nil), want...)
			lpnGather(secret, idx, want)
			lpnGatherBits(bits, idx, wantBits)
			lpnGatherAsm(&secret[0], &u[0], uint64(k), &got[0], rows, &bits[0], &gotBits[0], &lpnRK, nil, 0, 0)
			lpnGatherAsm(&secret[0], &u[0], uint64(k), &alone[0], rows, nil, nil, &lpnRK, nil, 0, 0)
			for r := range got {
				if got[r] != want[r] || alone[r] != want[r] || gotBits[r] != wantBits[r] {
					t.Fatalf("k=%d, %d rows: row %d = %x, %x alone, bits %d, want %x, bits %d",
						k, rows, r, got[r], alone[r], gotBits[r], want[r], wantBits[r])
				}
			}
		}
	}
}

// The assembly gather's side job, the next chunk's AES-CTR stream, equals
// lpnStream's (crypto/cipher's CTR) for chunks whose IV bytes differ in
// every position the counter's byte swap moves, for block counts that are
// and are not whole triples, with and without rows to gather meanwhile; it
// writes no more than two blocks past the count.
func TestLPNStreamAsm(t *testing.T) {
	if !useAsmGather || !useAESNI {
		t.Skip("no AES-NI gather here")
	}
	secret := randBlocks(t, 7)
	u := make([]byte, 4*lpnWeight*lpnRowChunk)
	dst := make([]block, lpnRowChunk)
	for _, p := range []ferretParams{{n: 10608640, k: 589824}, {n: 649728, k: 36288}, {n: 3, k: 3}} {
		for _, c := range []int{0, 1, 255, 256, 0x10203, 10360} {
			for _, rows := range []int{0, 5, 7, lpnRowChunk} {
				for _, blocks := range []int{1, 2, 3, 4, 2500, 2560} {
					want := make([]byte, 16*blocks)
					lpnStream(p, c, want)
					got := make([]byte, 16*blocks+48)
					for i := range got {
						got[i] = 0xa5
					}
					lpnGatherAsm(&secret[0], &u[0], uint64(p.k), &dst[0], rows, nil, nil, &lpnRK, &got[0], blocks, lpnCounter(p, c))
					if string(got[:16*blocks]) != string(want) {
						t.Fatalf("k=%d, chunk %d, %d rows, %d blocks: stream differs from lpnStream's", p.k, c, rows, blocks)
					}
					for i := 16 * (blocks + 2); i < len(got); i++ {
						if got[i] != 0xa5 {
							t.Fatalf("%d blocks: byte %d written", blocks, i)
						}
					}
				}
			}
		}
	}
}

// The gathers over a regular-set table on huge pages, 2^20 rows, one core,
// decoding included (lpnIndices on the Go path).
func benchGather(b *testing.B, asm bool) {
	p, _ := FerretRegular.params()
	secret, free := hugeBlocks(p.k)
	defer free()
	copy(secret, randBlocks(b, p.k))
	const rows = 1 << 20
	u := make([]byte, 4*lpnWeight*rows)
	if _, err := rand.Read(u); err != nil {
		b.Fatal(err)
	}
	idx := make([]int32, lpnWeight*rows)
	dst := make([]block, rows)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if asm {
			lpnGatherAsm(&secret[0], &u[0], uint64(p.k), &dst[0], rows, nil, nil, &lpnRK, nil, 0, 0)
		} else {
			lpnIndices(u, p.k, idx)
			lpnGather(secret, idx, dst)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows*lpnWeight), "ns/gather")
}

func BenchmarkLPNGatherGo(b *testing.B) { benchGather(b, false) }

func BenchmarkLPNGatherAsm(b *testing.B) {
	if !useAsmGather {
		b.Skip("no assembly gather here")
	}
	benchGather(b, true)
}

// BenchmarkGGMExpand expands one regular-set tree (2^13 leaves); /blocks
// runs π per chunk through fixedAES.encrypt and the XORs in Go, /fused the
// assembly pass that also XORs and sums.
func BenchmarkGGMExpand(b *testing.B) {
	const h = 13
	tree := make([]block, 1<<h)
	sums := make([][2]block, h)
	hs := new(hasher)
	run := func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			tree[0] = block{uint64(i), 1}
			ggmExpand(hs, tree, h, sums)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N<<h), "ns/leaf")
	}
	if useGGMAsm {
		b.Run("fused", run)
		useGGMAsm = false
		defer func() { useGGMAsm = true }()
	}
	b.Run("blocks", run)
}
