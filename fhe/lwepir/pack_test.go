package lwepir

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"math/bits"
	mrand "math/rand/v2"
	"sync"
	"testing"

	"github.com/rosemary-fhe/rosemary/fhe/matvec"
)

// packedPIR is a database with its packer, a client and a server.
type packedPIR struct {
	p     Params
	shape Shape
	tiles MemTiles
	cols  [][]byte
	h     []uint32
	pk    *Packer
	cl    *Client
	srv   *Server
}

func newPackedPIR(t *testing.T, p Params, shape Shape) *packedPIR {
	t.Helper()
	tiles, cols := testDB(t, p, shape)
	var seed [SeedSize]byte
	if _, err := rand.Read(seed[:]); err != nil {
		t.Fatal(err)
	}
	h, err := ComputeHint(context.Background(), p, shape, seed, tiles)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := NewPacker(context.Background(), p, shape, seed, h)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := NewPackedClient(p, shape, seed)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(p, shape)
	if err != nil {
		t.Fatal(err)
	}
	return &packedPIR{p: p, shape: shape, tiles: tiles, cols: cols, h: h, pk: pk, cl: cl, srv: srv}
}

// answer runs the scan for q and packs its answer, through the wire
// encodings of the keys and the answer.
func (pp *packedPIR) answer(t *testing.T, q *PackedQuery) *PackedAnswer {
	t.Helper()
	rawKeys, err := MarshalPackingKeys(pp.p, q.Keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(rawKeys) != PackingKeysBytes(pp.p) {
		t.Fatalf("keys of %d bytes, PackingKeysBytes says %d", len(rawKeys), PackingKeysBytes(pp.p))
	}
	keys, err := UnmarshalPackingKeys(pp.p, rawKeys)
	if err != nil {
		t.Fatal(err)
	}
	cols, err := pp.srv.Scan(context.Background(), []*matvec.Query{matvec.NewQuery(q.Vector)}, pp.tiles, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := pp.pk.Pack(context.Background(), keys, q.Vector, cols[0])
	if err != nil {
		t.Fatal(err)
	}
	raw, err := MarshalPackedAnswer(pp.p, pp.shape, a)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != PackedAnswerBytes(pp.p, pp.shape) {
		t.Fatalf("answer of %d bytes, PackedAnswerBytes says %d", len(raw), PackedAnswerBytes(pp.p, pp.shape))
	}
	back, err := UnmarshalPackedAnswer(pp.p, pp.shape, raw)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// Packed answers decrypt to the database's columns, byte for byte, with
// real keys and ciphertexts: fewer rows than N (the upper levels are the
// trace), rows not a power of two, exactly N rows, and several packs.
func TestPackedQueryDecodesColumns(t *testing.T) {
	for _, v := range []PackVersion{PackV2, PackV3} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) { testPackedQueryDecodesColumns(t, must(Test().WithPacking(v))) })
	}
}

func testPackedQueryDecodesColumns(t *testing.T, p Params) {
	n := p.N()
	for _, shape := range []Shape{
		{Rows: 1, Cols: n, RecordSize: 1}, // PackV3: no switching at all
		{Rows: 2, Cols: n, RecordSize: 2}, // PackV3: the conjugation's only
		{Rows: 3, Cols: n, RecordSize: 3},
		{Rows: 8, Cols: 2 * n, RecordSize: 8},
		{Rows: 100, Cols: n, RecordSize: 10},
		{Rows: n, Cols: 2 * n, RecordSize: 16},
		{Rows: 4*n + 3, Cols: n, RecordSize: 16}, // five packs, the last with 3 rows
	} {
		t.Run(fmt.Sprintf("%dx%d", shape.Rows, shape.Cols), func(t *testing.T) {
			pp := newPackedPIR(t, p, shape)
			if want := (shape.Rows + n - 1) / n; pp.pk.packs != want {
				t.Fatalf("%d packs, want %d", pp.pk.packs, want)
			}
			for _, col := range []int{0, 1, shape.Cols - 1, shape.Cols / 3} {
				q, st, err := pp.cl.PackedQuery(col)
				if err != nil {
					t.Fatal(err)
				}
				got, err := pp.cl.DecodePacked(st, pp.answer(t, q))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, pp.cols[col]) {
					t.Fatalf("column %d: decoded %x…, want %x…", col, got[:min(8, len(got))], pp.cols[col][:min(8, len(got))])
				}
			}
		})
	}
}

// At the default parameters (N = 2048, Q < 2^54), two packs: every column
// queried decodes exactly, and the packing's own noise (the packed phase
// minus the LWE phase scaled to Q) stays far below what decoding tolerates.
func TestPackedDefaultParams(t *testing.T) {
	if testing.Short() {
		t.Skip("default parameters: a few seconds")
	}
	// Decoding tolerates Q/512 ≈ 2^45 in all; the LWE noise alone is
	// ≈ 2^14·Q/2^32 here (2048 columns), 2^40.4 at 2^19 columns. The
	// package doc puts the packing's σ at 2^36.6 for PackV1 (2^35.4
	// without the keys' trimming), the largest of 12,288 values near
	// 2^38.6, and PackV2's below it. PackV3's Q is 2^52: its threshold
	// Q/512 is 2^43, and its packing σ ≈ 2^37 (pack_twokeys.go).
	for _, c := range []struct {
		v     PackVersion
		worst float64 // log2 of the largest packing noise allowed
	}{{PackV1, 40}, {PackV2, 39.5}, {PackV3, 39.5}} {
		p, err := Default().WithPacking(c.v)
		if err != nil {
			t.Fatal(err)
		}
		n := p.N()
		shape := Shape{Rows: 2 * n, Cols: n, RecordSize: 256}
		pp := newPackedPIR(t, p, shape)
		var worst, sumSq float64
		var count int
		for _, col := range []int{0, 777, n - 1} {
			q, st, err := pp.cl.PackedQuery(col)
			if err != nil {
				t.Fatal(err)
			}
			a := pp.answer(t, q)
			got, err := pp.cl.DecodePacked(st, a)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, pp.cols[col]) {
				t.Fatalf("version %d: column %d does not decode", c.v, col)
			}
			w, s, n := pp.packNoise(t, q, st)
			worst, sumSq, count = max(worst, w), sumSq+s, count+n
		}
		sigma := math.Sqrt(sumSq / float64(count))
		t.Logf("version %d: packing noise σ = 2^%.1f, max 2^%.1f over %d coefficients (Q = 2^%.2f)",
			c.v, math.Log2(sigma), math.Log2(worst), count, math.Log2(float64(pp.pk.pr.q)))
		if worst > math.Exp2(c.worst) {
			t.Fatalf("version %d: packing noise reaches 2^%.1f, above 2^%.1f", c.v, math.Log2(worst), c.worst)
		}
	}
}

// packNoise recomputes one query's packed phase b − a·s modulo Q (before
// the download's rounding) and returns the largest and the summed squares
// of its difference from the LWE phase of each row scaled to Q.
func (pp *packedPIR) packNoise(t *testing.T, q *PackedQuery, st *State) (worst, sumSq float64, count int) {
	t.Helper()
	pk, pr := pp.pk, pp.pk.pr
	r, n := pr.r, pp.p.N()
	cols, err := pp.srv.Scan(context.Background(), []*matvec.Query{matvec.NewQuery(q.Vector)}, pp.tiles, nil)
	if err != nil {
		t.Fatal(err)
	}
	preps, err := pk.Prepare(context.Background(), []*PackingKeys{q.Keys}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	sumQ := SumQuery(q.Vector)
	sP := r.NewPoly()
	for i, x := range st.s {
		sP.Coeffs[0][i] = uint64(x) + pr.q&uint64(x>>63)
	}
	r.NTT(sP, sP)
	aP := r.NewPoly()
	for k := range pk.packs {
		copy(aP.Coeffs[0], pk.aRoot[k])
		r.NTT(aP, aP)
		r.MulCoeffsBarrett(aP, sP, aP)
		r.INTT(aP, aP)
		for row := 0; row < pk.perPack && k*pk.perPack+row < pp.shape.Rows; row++ {
			i := k*pk.perPack + row
			c := row * pk.stride
			b := preps[0].c[k][c] + pr.scaleFrom32(cols[0][i]-centre*sumQ)
			phase := int64((b + 2*pr.q - aP.Coeffs[0][c]) % pr.q)
			if phase > int64(pr.q/2) {
				phase -= int64(pr.q)
			}
			// The LWE phase: b_i − ⟨H'_i, s⟩ mod 2^32, centred.
			var hs uint32
			for j, x := range pp.h[i*n : (i+1)*n] {
				hs += x * uint32(st.s[j])
			}
			lwe := float64(int32(cols[0][i]-centre*sumQ-hs)) * float64(pr.q) / math.Exp2(32)
			// Both phases are taken modulo their moduli: compare modulo Q.
			d := math.Mod(float64(phase)-lwe, float64(pr.q))
			if d > float64(pr.q)/2 {
				d -= float64(pr.q)
			} else if d < -float64(pr.q)/2 {
				d += float64(pr.q)
			}
			worst = max(worst, math.Abs(d))
			sumSq += d * d
			count++
		}
	}
	return worst, sumSq, count
}

// Keys of another secret do not decrypt: the test above could fail.
func TestPackedWrongKeysFail(t *testing.T) {
	p := Test()
	shape := Shape{Rows: 64, Cols: p.N(), RecordSize: 8}
	pp := newPackedPIR(t, p, shape)
	q, st, err := pp.cl.PackedQuery(5)
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := pp.cl.PackedQuery(5)
	if err != nil {
		t.Fatal(err)
	}
	q.Keys = other.Keys
	got, err := pp.cl.DecodePacked(st, pp.answer(t, q))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, pp.cols[5]) {
		t.Fatal("keys of another secret decoded the column")
	}
}

// A batch's prepared halves equal each query's own, bit for bit, whatever
// the workers and the batch's size: with the limb kernels, batches of
// three (a group of four padded), four, five (a group and one left to the
// single-query kernel) and seven (a group and a padded one).
func TestPackedBatchEqualsSingle(t *testing.T) {
	p := Test()
	shape := Shape{Rows: 2 * p.N(), Cols: p.N(), RecordSize: 8}
	pp := newPackedPIR(t, p, shape)
	var keys []*PackingKeys
	var alone []*Prepared
	for range 7 {
		q, _, err := pp.cl.PackedQuery(0)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, q.Keys)
		one, err := pp.pk.Prepare(context.Background(), []*PackingKeys{q.Keys}, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		alone = append(alone, one[0])
	}
	for _, size := range []int{3, 4, 5, 7} {
		for _, workers := range []int{1, 2, 8} {
			batch, err := pp.pk.Prepare(context.Background(), keys[:size], workers, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := range size {
				for pack := range alone[i].c {
					if fmt.Sprint(alone[i].c[pack]) != fmt.Sprint(batch[i].c[pack]) {
						t.Fatalf("batch of %d, workers %d: query %d, pack %d differs in a batch", size, workers, i, pack)
					}
				}
			}
		}
	}
}

// The gadget decomposition recomposes (to within the rounded bits) and
// keeps its digits small, in both packing versions.
func TestPackDecompose(t *testing.T) {
	for _, v := range []PackVersion{PackV1, PackV2} {
		p, err := Default().WithPacking(v)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := p.packRing()
		if err != nil {
			t.Fatal(err)
		}
		q := pr.q
		digits := make([]uint64, pr.pp.Digits)
		for _, x := range []uint64{0, 1, q - 1, q / 2, q/2 + 1, 1 << 17, 1<<18 - 1, q - 1<<17, 1<<21 - 1, 1 << 21, 1<<22 + 1<<21} {
			checkDecompose(t, pr, x, digits)
		}
		for range 10000 {
			checkDecompose(t, pr, mrand.Uint64N(q), digits)
		}
	}
}

func checkDecompose(t *testing.T, pr *packRing, x uint64, digits []uint64) {
	q, lb, drop := pr.q, pr.pp.LogBase, pr.pp.DropBits
	pr.decompose(x, digits)
	var sum uint64
	for j := len(digits) - 1; j >= 0; j-- {
		d := digits[j]
		mag := d
		if d > q/2 {
			mag = q - d
		}
		if mag > 1<<(lb-1) {
			t.Fatalf("digit %d of %d is %d in magnitude, above B/2", j, x, mag)
		}
		hi, lo := bits.Mul64(sum, 1<<lb)
		_, sum = bits.Div64(hi, lo, q)
		sum = (sum + d) % q
	}
	hi, lo := bits.Mul64(sum, 1<<drop)
	_, sum = bits.Div64(hi, lo, q)
	diff := (x + q - sum) % q // what the rounding left, centred below
	if diff > q/2 {
		diff = q - diff
	}
	if drop == 0 && diff != 0 || drop > 0 && diff > 1<<(drop-1) {
		t.Fatalf("digits of %d recompose to %d·2^%d, %d away", x, sum, drop, diff)
	}
}

// The prime is NTT-friendly for N = 2048 and the largest such below
// 2^LogQ: 2^54 (the standard's bound) for the tree's versions, 2^52 for
// PackV3 (IFMA's words).
func TestPackModulus(t *testing.T) {
	for v, logQ := range map[PackVersion]int{PackV1: 54, PackV2: 54, PackV3: 52} {
		pr, err := must(Default().WithPacking(v)).packRing()
		if err != nil {
			t.Fatal(err)
		}
		if pr.q>>logQ != 0 || pr.q%(2*2048) != 1 || pr.q < 1<<(logQ-1) {
			t.Fatalf("version %d: Q = %d", v, pr.q)
		}
	}
}

// Malformed keys and answers are refused with ErrParams before any use.
func TestPackedDecodersRefuseMalformed(t *testing.T) {
	p := Test()
	shape := Shape{Rows: 16, Cols: p.N(), RecordSize: 8}
	pp := newPackedPIR(t, p, shape)
	q, _, err := pp.cl.PackedQuery(0)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := MarshalPackingKeys(p, q.Keys)
	if err != nil {
		t.Fatal(err)
	}
	ans := pp.answer(t, q)
	rawAns, err := MarshalPackedAnswer(p, shape, ans)
	if err != nil {
		t.Fatal(err)
	}
	w := bits.Len64(pp.pk.pr.q)
	tooBig := append([]byte(nil), raw...)
	// Set the first coefficient to all ones: 2^w − 1 ≥ Q.
	for i := 0; i < w; i++ {
		tooBig[i/8] |= 1 << (i % 8)
	}
	for name, b := range map[string][]byte{
		"empty": nil, "short": raw[:len(raw)-1], "long": append(append([]byte(nil), raw...), 0), "above Q": tooBig,
	} {
		if _, err := UnmarshalPackingKeys(p, b); !errors.Is(err, ErrParams) {
			t.Errorf("keys %s: %v", name, err)
		}
	}
	for name, b := range map[string][]byte{
		"empty": nil, "short": rawAns[:len(rawAns)-1], "long": append(append([]byte(nil), rawAns...), 0),
	} {
		if _, err := UnmarshalPackedAnswer(p, shape, b); !errors.Is(err, ErrParams) {
			t.Errorf("answer %s: %v", name, err)
		}
	}
	if _, err := pp.pk.Prepare(context.Background(), []*PackingKeys{{B: q.Keys.B[1:]}}, 1, nil); !errors.Is(err, ErrParams) {
		t.Errorf("Prepare with a key short of a polynomial: %v", err)
	}
	bad := &PackedAnswer{A: ans.A, B: [][]uint32{make([]uint32, p.N()+1)}}
	if _, err := pp.cl.DecodePacked(&State{s: make([]int64, p.N())}, bad); !errors.Is(err, ErrParams) {
		t.Errorf("DecodePacked of a malformed answer: %v", err)
	}
	if _, err := pp.pk.Finish(&Prepared{}, 0, make([]uint32, shape.Rows)); !errors.Is(err, ErrParams) {
		t.Errorf("Finish without prepared packs: %v", err)
	}
}

// FuzzUnmarshalPackingKeys: no input panics, and what decodes re-encodes
// to itself (the encoding is canonical).
func FuzzUnmarshalPackingKeys(f *testing.F) {
	p := Test()
	f.Add([]byte{})
	f.Add(make([]byte, PackingKeysBytes(p)))
	f.Add(bytes.Repeat([]byte{0xff}, PackingKeysBytes(p)))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 0 && len(b) < PackingKeysBytes(p) {
			// Stretch short inputs to the right size so the value checks run.
			b = append(b, make([]byte, PackingKeysBytes(p)-len(b))...)
		}
		keys, err := UnmarshalPackingKeys(p, b)
		if err != nil {
			if !errors.Is(err, ErrParams) {
				t.Fatalf("error not ErrParams: %v", err)
			}
			return
		}
		back, err := MarshalPackingKeys(p, keys)
		if err != nil || !bytes.Equal(back, b) {
			t.Fatalf("re-encoding: %v, equal %v", err, bytes.Equal(back, b))
		}
	})
}

// FuzzUnmarshalPackedAnswer: as above, for answers, and a decoded answer
// decodes to a column without error.
func FuzzUnmarshalPackedAnswer(f *testing.F) {
	p := Test()
	shape := Shape{Rows: 2*p.N() + 5, Cols: p.N(), RecordSize: 8}
	size := PackedAnswerBytes(p, shape)
	f.Add([]byte{})
	f.Add(make([]byte, size))
	f.Add(bytes.Repeat([]byte{0xff}, size))
	cl, err := NewPackedClient(p, shape, [SeedSize]byte{})
	if err != nil {
		f.Fatal(err)
	}
	st := &State{s: make([]int64, p.N())}
	st.s[3] = -1
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 0 && len(b) < size {
			b = append(b, make([]byte, size-len(b))...)
		}
		a, err := UnmarshalPackedAnswer(p, shape, b)
		if err != nil {
			if !errors.Is(err, ErrParams) {
				t.Fatalf("error not ErrParams: %v", err)
			}
			return
		}
		back, err := MarshalPackedAnswer(p, shape, a)
		if err != nil || !bytes.Equal(back, b) {
			t.Fatalf("re-encoding: %v, equal %v", err, bytes.Equal(back, b))
		}
		if col, err := cl.DecodePacked(st, a); err != nil || len(col) != shape.Rows {
			t.Fatalf("decoding a well-formed answer: %v", err)
		}
	})
}

// The three-digit kernels equal the generic ones on random residues,
// extremes included.
func TestPackKernelsEqualGeneric(t *testing.T) {
	pr, err := Default().packRing()
	if err != nil {
		t.Fatal(err)
	}
	q, n := pr.q, pr.r.N()
	rnd := func() []uint64 {
		v := make([]uint64, n)
		for i := range v {
			v[i] = mrand.Uint64N(q)
		}
		v[0], v[1] = q-1, 0
		return v
	}
	ds, ks := [][]uint64{rnd(), rnd(), rnd()}, [][]uint64{rnd(), rnd(), rnd()}
	e, o, init := rnd(), rnd(), rnd()
	want, got := make([]uint64, n), make([]uint64, n)
	macMont(want, ds, ks, q, pr.mred)
	macMont3(got, ds[0], ds[1], ds[2], ks[0], ks[1], ks[2], q, pr.mred)
	if fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatal("macMont3 differs")
	}
	uw, ug := make([]uint64, n), make([]uint64, n)
	mergeSums(want, uw, e, o, pr.mono[2], q, pr.mred)
	mergeSumsBoth(got, ug, e, o, pr.mono[2], q, pr.mred)
	if fmt.Sprint(want) != fmt.Sprint(got) || fmt.Sprint(uw) != fmt.Sprint(ug) {
		t.Fatal("mergeSumsBoth differs")
	}
	copy(want, init)
	copy(got, init)
	mergeAutoMac(want, uw, pr.auto[5], ds, ks, q, pr.mred)
	mergeAutoMac3(got, ug, pr.auto[5], ds[0], ds[1], ds[2], ks[0], ks[1], ks[2], q, pr.mred)
	if fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatal("mergeAutoMac3 differs")
	}
	copy(want, init)
	copy(got, init)
	mergeAutoMac(want, uw, pr.auto[5], ds[:2], ks[:2], q, pr.mred)
	mergeAutoMac2(got, ug, pr.auto[5], ds[0], ds[1], ks[0], ks[1], q, pr.mred)
	if fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatal("mergeAutoMac2 differs")
	}
	for _, v := range got {
		if v >= q {
			t.Fatal("a result not reduced")
		}
	}
}

// countGate counts the cores taken and given back; fail makes Acquire
// refuse after that many.
type countGate struct {
	mu           sync.Mutex
	taken, given int
	fail         int
}

var errGate = errors.New("gate closed")

func (g *countGate) Acquire(context.Context) (func(), error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fail > 0 && g.taken >= g.fail {
		return nil, errGate
	}
	g.taken++
	return func() { g.mu.Lock(); g.given++; g.mu.Unlock() }, nil
}

// Prepare holds a core of its gate for each stored node and gives every
// one back; a gate's refusal ends it with the gate's error.
func TestPackPrepareGate(t *testing.T) {
	p := Test()
	shape := Shape{Rows: 2 * p.N(), Cols: p.N(), RecordSize: 8}
	pp := newPackedPIR(t, p, shape)
	q, _, err := pp.cl.PackedQuery(0)
	if err != nil {
		t.Fatal(err)
	}
	g := &countGate{}
	if _, err := pp.pk.Prepare(context.Background(), []*PackingKeys{q.Keys, q.Keys}, 2, g); err != nil {
		t.Fatal(err)
	}
	var nodes int
	for _, ns := range pp.pk.nodes {
		nodes += len(ns)
	}
	if g.taken == 0 || g.taken != g.given || g.taken < nodes {
		t.Fatalf("%d cores taken, %d given back, %d stored nodes", g.taken, g.given, nodes)
	}
	if _, err := pp.pk.Prepare(context.Background(), []*PackingKeys{q.Keys}, 1, &countGate{fail: 3}); !errors.Is(err, errGate) {
		t.Fatalf("a refusing gate: %v", err)
	}
}

// The keys' wire size is what the trimming gives: level k's coefficients
// in 51 − k bits at the default parameters (Q of 54 bits, 3 + k dropped).
func TestPackingKeysBytes(t *testing.T) {
	for _, c := range []struct {
		v      PackVersion
		digits int
		want   int // 11 levels, level k's coefficients in 51 − k bits
	}{{PackV1, 3, 380160}, {PackV2, 2, 253440}} {
		p, err := Default().WithPacking(c.v)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for k := 1; k <= p.LogN; k++ {
			want += c.digits * 2048 * (51 - k) / 8
		}
		if want != c.want {
			t.Fatalf("version %d: the formula gives %d, want %d", c.v, want, c.want)
		}
		if got := PackingKeysBytes(p); got != want {
			t.Fatalf("version %d: PackingKeysBytes = %d, want %d", c.v, got, want)
		}
	}
	// PackV3: two keys of one digit, 2048 untrimmed coefficients of 52 bits.
	p, err := Default().WithPacking(PackV3)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := PackingKeysBytes(p), 2*2048*52/8; got != want || want != 26624 {
		t.Fatalf("version 3: PackingKeysBytes = %d, want %d", got, want)
	}
}

// A packing version, once stores hold its packers, never changes: its
// parameters fix the stored layout and the keys' size, and a changed
// PackV1 would read every PackV1 packer as garbage of the right length.
func TestPackVersionsPinned(t *testing.T) {
	for _, c := range []struct {
		v    PackVersion
		want PackParams
	}{
		{0, PackParams{LogQ: 54, Digits: 3, LogBase: 18, Absorb: 4, QueryBits: 32, LogQA: 21, LogQB: 16, KeyDrop: 3}},
		{PackV1, PackParams{LogQ: 54, Digits: 3, LogBase: 18, Absorb: 4, QueryBits: 32, LogQA: 21, LogQB: 16, KeyDrop: 3}},
		{PackV2, PackParams{LogQ: 54, Digits: 2, LogBase: 16, DropBits: 22, Absorb: 5, QueryBits: 28, LogQA: 21, LogQB: 16, KeyDrop: 3}},
		{PackV3, PackParams{LogQ: 52, Digits: 1, LogBase: 25, DropBits: 27, TwoKeys: true, QueryBits: 28, LogQA: 21, LogQB: 16}},
	} {
		p, err := Default().WithPacking(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Pack(); got != c.want {
			t.Errorf("version %d: %+v, pinned %+v", c.v, got, c.want)
		}
	}
	if _, err := Default().WithPacking(4); !errors.Is(err, ErrParams) {
		t.Errorf("version 4: %v, want ErrParams", err)
	}
	if p := Default(); p.Packing != PackLatest {
		t.Errorf("new databases are written with version %d", p.Packing)
	}
}
