package linear

import (
	"crypto/rand"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
)

func randVec(t testing.TB, n, bits int) []uint64 {
	t.Helper()
	buf := make([]byte, 8*n)
	if _, err := rand.Read(buf); err != nil {
		t.Fatal(err)
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(buf[8*i:]) & (1<<uint(bits) - 1)
	}
	return out
}

// randWeights returns weights mod 2^logT whose centered values lie in
// [-2^(wb-1), 2^(wb-1)).
func randWeights(t testing.TB, n, wb, logT int) []uint64 {
	w := randVec(t, n, wb)
	for i := range w {
		w[i] = (w[i] - 1<<uint(wb-1)) & (1<<uint(logT) - 1)
	}
	return w
}

// refConv is the brute-force convolution mod 2^logT (OIHW weights, CHW input).
func refConv(s ConvShape, x, w, bias []uint64, logT int) []uint64 {
	mask := uint64(1)<<uint(logT) - 1
	oh, ow := s.OutH(), s.OutW()
	out := make([]uint64, s.Co*oh*ow)
	for o := 0; o < s.Co; o++ {
		for i := 0; i < oh; i++ {
			for j := 0; j < ow; j++ {
				var acc uint64
				if bias != nil {
					acc = bias[o]
				}
				for c := 0; c < s.Ci; c++ {
					for ki := 0; ki < s.Kh; ki++ {
						for kj := 0; kj < s.Kw; kj++ {
							wi, ok := s.weightIndex(o, c, ki, kj)
							if !ok {
								continue
							}
							y := i*s.Stride + ki - s.Pad
							xx := j*s.Stride + kj - s.Pad
							if y < 0 || y >= s.H || xx < 0 || xx >= s.W {
								continue
							}
							acc += w[wi] * x[(c*s.H+y)*s.W+xx]
						}
					}
				}
				out[(o*oh+i)*ow+j] = acc & mask
			}
		}
	}
	return out
}

type protoCase struct {
	name  string
	lit   cheetah.Literal
	proto Protocol
	shape ConvShape
	opt   Options
}

// runProtocol runs client and server in-process and checks that the shares
// reconstruct the exact convolution (with bias) mod 2^ℓ.
func runProtocol(t *testing.T, tc protoCase, cli *Client) {
	t.Helper()
	p := cli.Params
	pl, err := NewPlan(tc.proto, p, tc.shape, tc.opt)
	if err != nil {
		t.Fatalf("%s: plan: %v", tc.name, err)
	}
	l := pl.Opt.LogT
	s := tc.shape
	x := randVec(t, s.InputLen(), l)
	xc := randVec(t, s.InputLen(), l)
	xs := make([]uint64, len(x))
	for i := range x {
		xs[i] = (x[i] - xc[i]) & (1<<uint(l) - 1)
	}
	w := randWeights(t, s.WeightLen(), pl.Opt.WeightBits, l)
	bias := randVec(t, s.Co, l)

	gks, err := cli.GaloisKeys(pl)
	if err != nil {
		t.Fatal(err)
	}
	ev := cheetah.NewEvaluator(p, cli.Keys.PK, gks)
	in, err := pl.EncryptInput(cli, xc)
	if err != nil {
		t.Fatalf("%s: %v", tc.name, err)
	}
	out, serverShare, err := pl.Evaluate(ev, w, bias, xs, in)
	if err != nil {
		t.Fatalf("%s: evaluate: %v", tc.name, err)
	}
	clientShare, err := pl.DecryptOutput(cli, out)
	if err != nil {
		t.Fatalf("%s: decrypt: %v", tc.name, err)
	}
	want := refConv(s, x, w, bias, l)
	// The same layer on three workers (own evaluators) gives a correct
	// result too.
	ws, err := pl.PrepareWeights(ev, w)
	if err != nil {
		t.Fatal(err)
	}
	evs := []*cheetah.Evaluator{ev, cheetah.NewEvaluator(p, cli.Keys.PK, gks), cheetah.NewEvaluator(p, cli.Keys.PK, gks)}
	pout, pshare, err := pl.EvaluateParallel(evs, ws, bias, xs, in)
	if err != nil {
		t.Fatalf("%s: parallel: %v", tc.name, err)
	}
	pcli, err := pl.DecryptOutput(cli, pout)
	if err != nil {
		t.Fatalf("%s: parallel decrypt: %v", tc.name, err)
	}
	for i := range want {
		if got := (pcli[i] + pshare[i]) & (1<<uint(l) - 1); got != want[i] {
			t.Fatalf("%s (%s, parallel): output %d = %d, want %d", tc.name, tc.proto, i, got, want[i])
		}
	}
	// Written to a weight file and read back: the same plaintexts.
	checkWeightFile(t, pl, ws)
	// Over the budget the plaintexts are encoded on use: same result.
	old := weightBudget
	weightBudget = 0
	lws, err := pl.PrepareWeights(ev, w)
	weightBudget = old
	if err != nil || !lws.Lazy() || ws.Lazy() {
		t.Fatalf("%s: lazy weights %v (lazy %v, eager %v)", tc.name, err, lws != nil && lws.Lazy(), ws.Lazy())
	}
	checkWeightFile(t, pl, lws)
	lout, lshare, err := pl.EvaluateParallel(evs[:2], lws, bias, xs, in)
	if err != nil {
		t.Fatalf("%s: lazy: %v", tc.name, err)
	}
	lcli, err := pl.DecryptOutput(cli, lout)
	if err != nil {
		t.Fatalf("%s: lazy decrypt: %v", tc.name, err)
	}
	for i := range want {
		if got := (lcli[i] + lshare[i]) & (1<<uint(l) - 1); got != want[i] {
			t.Fatalf("%s (%s, lazy weights): output %d = %d, want %d", tc.name, tc.proto, i, got, want[i])
		}
	}
	for i := range want {
		if got := (clientShare[i] + serverShare[i]) & (1<<uint(l) - 1); got != want[i] {
			t.Fatalf("%s (%s, plan Cb=%d Hb=%d Wb=%d C=%d B=%d): output %d = %d, want %d",
				tc.name, tc.proto, pl.Cb, pl.Hb, pl.Wb, pl.C(), pl.Baby, i, got, want[i])
		}
	}
	t.Logf("%s %s %+v: Cb=%d Hb=%d Wb=%d tiles=%d C=%d B=%d matvec=%v d0=%d d1=%d noise=2^%.1f %+v", tc.name, tc.proto, s, pl.Cb, pl.Hb, pl.Wb, pl.Tiles(), pl.C(), pl.Baby, pl.MatVec, pl.D0, pl.D1, pl.Flood.Log2(), pl.Counters)
	// Bytes and counts actually sent equal the plan's counters.
	var c2s, s2c int64
	for _, m := range in {
		c2s += int64(len(m))
	}
	for _, m := range out {
		s2c += int64(len(m))
	}
	if c2s != pl.Counters.BytesC2S || s2c != pl.Counters.BytesS2C ||
		int64(len(in)) != pl.Counters.InputCts || int64(len(out)) != pl.Counters.OutputCts {
		t.Fatalf("%s: sent %d/%d bytes in %d/%d cts, counters %+v", tc.name, c2s, s2c, len(in), len(out), pl.Counters)
	}
	if strings.Contains(tc.name, "tiles") && pl.Tiles() < 2 {
		t.Errorf("%s: expected several spatial tiles, plan has %d", tc.name, pl.Tiles())
	}
	if tc.proto != Cheetah && pl.LogC > 0 && pl.Counters.Automorphisms == 0 {
		t.Errorf("%s: packed protocol with C=%d used no automorphism", tc.name, pl.C())
	}
}

// randShape draws a small random convolution shape.
func randShape(t *testing.T) ConvShape {
	r := randVec(t, 7, 8)
	k := 1 + int(r[0]%3)*2 - int(r[6]%2)*int(r[0]%3) // 1, 2, 3, 5-ish
	if k < 1 {
		k = 1
	}
	s := ConvShape{
		Ci:     1 + int(r[1]%6),
		H:      k + int(r[2]%7),
		W:      k + int(r[3]%7),
		Co:     1 + int(r[4]%7),
		Kh:     k,
		Kw:     k,
		Stride: 1 + int(r[5]%2),
		Pad:    int(r[6] % 2),
	}
	return s
}

func TestProtocolsExactRandomShapes(t *testing.T) {
	p12, err := cheetah.NewParameters(cheetah.PN12)
	if err != nil {
		t.Fatal(err)
	}
	p13, err := cheetah.NewParameters(cheetah.PN13)
	if err != nil {
		t.Fatal(err)
	}
	c12, c13 := NewClient(p12), NewClient(p13)
	fixed := []protoCase{
		{"3x3 s1 p1", cheetah.PN12, Cheetah, ConvShape{Ci: 3, H: 7, W: 6, Co: 4, Kh: 3, Kw: 3, Stride: 1, Pad: 1}, Options{LogT: 21, WeightBits: 8}},
		{"3x3 s2 p1 ℓ37", cheetah.PN12, Cheetah, ConvShape{Ci: 5, H: 9, W: 9, Co: 3, Kh: 3, Kw: 3, Stride: 2, Pad: 1}, Options{LogT: 37, WeightBits: 4}},
		{"fc", cheetah.PN12, Cheetah, FCShape(70, 9), Options{LogT: 21, WeightBits: 8}},
		{"ℓ45", cheetah.PN12, Cheetah, ConvShape{Ci: 4, H: 6, W: 6, Co: 3, Kh: 3, Kw: 3, Stride: 1, Pad: 1}, Options{LogT: 45, WeightBits: 8}},
		{"oe ℓ40", cheetah.PN13, OptiEncode, ConvShape{Ci: 4, H: 6, W: 6, Co: 3, Kh: 3, Kw: 3, Stride: 1, Pad: 1}, Options{LogT: 40, WeightBits: 8}},
		{"channel blocks", cheetah.PN12, Cheetah, ConvShape{Ci: 40, H: 14, W: 14, Co: 2, Kh: 3, Kw: 3, Stride: 1, Pad: 1}, Options{LogT: 21, WeightBits: 8}},
		{"spatial tiles", cheetah.PN12, Cheetah, ConvShape{Ci: 2, H: 80, W: 75, Co: 2, Kh: 3, Kw: 3, Stride: 1, Pad: 1}, Options{LogT: 21, WeightBits: 8}},
		{"oe spatial tiles", cheetah.PN12, OptiEncode, ConvShape{Ci: 2, H: 80, W: 75, Co: 3, Kh: 3, Kw: 3, Stride: 2, Pad: 1}, Options{LogT: 21, WeightBits: 8}},
		{"bsgs spatial tiles", cheetah.PN13, OptiEncodeBSGS, ConvShape{Ci: 3, H: 100, W: 90, Co: 3, Kh: 3, Kw: 3, Stride: 1, Pad: 0}, Options{LogT: 21, WeightBits: 8}},
		{"oe 3x3 s1 p1", cheetah.PN12, OptiEncode, ConvShape{Ci: 3, H: 7, W: 6, Co: 5, Kh: 3, Kw: 3, Stride: 1, Pad: 1}, Options{LogT: 21, WeightBits: 8}},
		{"oe s2", cheetah.PN13, OptiEncode, ConvShape{Ci: 6, H: 8, W: 8, Co: 9, Kh: 3, Kw: 3, Stride: 2, Pad: 1}, Options{LogT: 21, WeightBits: 8}},
		{"oe fc", cheetah.PN13, OptiEncode, FCShape(33, 7), Options{LogT: 21, WeightBits: 8}},
		{"bsgs fc", cheetah.PN13, OptiEncodeBSGS, FCShape(40, 11), Options{LogT: 21, WeightBits: 8}},
		{"bsgs 3x3 s1 p1", cheetah.PN13, OptiEncodeBSGS, ConvShape{Ci: 3, H: 7, W: 6, Co: 5, Kh: 3, Kw: 3, Stride: 1, Pad: 1}, Options{LogT: 21, WeightBits: 8}},
		{"depthwise", cheetah.PN12, Cheetah, ConvShape{Ci: 6, H: 7, W: 7, Co: 6, Kh: 3, Kw: 3, Stride: 2, Pad: 1, Groups: 6}, Options{LogT: 21, WeightBits: 8}},
		{"oe depthwise", cheetah.PN13, OptiEncode, ConvShape{Ci: 6, H: 7, W: 7, Co: 6, Kh: 3, Kw: 3, Stride: 1, Pad: 1, Groups: 6}, Options{LogT: 21, WeightBits: 8}},
		{"bsgs grouped", cheetah.PN13, OptiEncodeBSGS, ConvShape{Ci: 8, H: 6, W: 6, Co: 4, Kh: 3, Kw: 3, Stride: 1, Pad: 1, Groups: 2}, Options{LogT: 21, WeightBits: 8}},
		{"bsgs s2 full weights", cheetah.PN13, OptiEncodeBSGS, ConvShape{Ci: 6, H: 8, W: 8, Co: 9, Kh: 3, Kw: 3, Stride: 2, Pad: 1}, Options{LogT: 16}},
	}
	for _, tc := range fixed {
		cli := c12
		if tc.lit.LogN == 13 {
			cli = c13
		}
		runProtocol(t, tc, cli)
	}
	for i := 0; i < 6; i++ {
		s := randShape(t)
		if i%3 == 2 && s.Ci == s.Co {
			s.Groups = s.Ci // depthwise
		}
		for _, proto := range Protocols {
			runProtocol(t, protoCase{name: "random", lit: cheetah.PN13, proto: proto, shape: s, opt: Options{LogT: 20, WeightBits: 8}}, c13)
		}
	}
}

func TestFuseBatchNorm(t *testing.T) {
	s := ConvShape{Ci: 2, H: 5, W: 5, Co: 3, Kh: 3, Kw: 3, Stride: 1, Pad: 1}
	l := 20
	x := randVec(t, s.InputLen(), l)
	w := randWeights(t, s.WeightLen(), 6, l)
	bias := randVec(t, s.Co, l)
	scale := randWeights(t, s.Co, 4, l)
	shift := randVec(t, s.Co, l)
	wf, bf, err := FuseBatchNorm(s, w, bias, scale, shift, l)
	if err != nil {
		t.Fatal(err)
	}
	z := refConv(s, x, w, bias, l)
	got := refConv(s, x, wf, bf, l)
	plane := s.OutH() * s.OutW()
	for i := range z {
		o := i / plane
		if want := (scale[o]*z[i] + shift[o]) & (1<<uint(l) - 1); got[i] != want {
			t.Fatalf("fused output %d = %d, want %d", i, got[i], want)
		}
	}
	if _, _, err := FuseBatchNorm(s, w[:3], bias, scale, shift, l); err == nil {
		t.Error("mismatched sizes accepted")
	}
	// And through the protocol: the fused layer reconstructs exactly.
	p, err := cheetah.NewParameters(cheetah.PN12)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := NewPlan(Cheetah, p, s, Options{LogT: l}) // fused weights use the full range
	if err != nil {
		t.Fatal(err)
	}
	cli := NewClient(p)
	ev := cheetah.NewEvaluator(p, cli.Keys.PK, nil)
	xc := randVec(t, len(x), l)
	xs := make([]uint64, len(x))
	for i := range xs {
		xs[i] = (x[i] - xc[i]) & (1<<uint(l) - 1)
	}
	in, err := pl.EncryptInput(cli, xc)
	if err != nil {
		t.Fatal(err)
	}
	out, ss, err := pl.Evaluate(ev, wf, bf, xs, in)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := pl.DecryptOutput(cli, out)
	if err != nil {
		t.Fatal(err)
	}
	for i := range z {
		o := i / plane
		if got, want := (cs[i]+ss[i])&(1<<uint(l)-1), (scale[o]*z[i]+shift[o])&(1<<uint(l)-1); got != want {
			t.Fatalf("protocol with fused BN: output %d = %d, want %d", i, got, want)
		}
	}
}

func TestRejectsBadInputs(t *testing.T) {
	p, err := cheetah.NewParameters(cheetah.PN12)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewPlan(Cheetah, p, ConvShape{Ci: 0, H: 1, W: 1, Co: 1, Kh: 1, Kw: 1, Stride: 1}, Options{LogT: 20}); err == nil {
		t.Error("empty shape accepted")
	}
	if _, err := NewPlan(Cheetah, p, ConvShape{Ci: 1, H: 4, W: 4, Co: 1, Kh: 3, Kw: 3, Stride: 1}, Options{LogT: 50}); err == nil {
		t.Error("ℓ=50 accepted")
	}
	s := ConvShape{Ci: 2, H: 4, W: 4, Co: 2, Kh: 3, Kw: 3, Stride: 1, Pad: 1}
	pl, err := NewPlan(Cheetah, p, s, Options{LogT: 20, WeightBits: 4})
	if err != nil {
		t.Fatal(err)
	}
	cli := NewClient(p)
	ev := cheetah.NewEvaluator(p, cli.Keys.PK, nil)
	in, err := pl.EncryptInput(cli, make([]uint64, s.InputLen()))
	if err != nil {
		t.Fatal(err)
	}
	big := make([]uint64, s.WeightLen())
	big[0] = 100 // above ±8
	if _, _, err := pl.Evaluate(ev, big, nil, make([]uint64, s.InputLen()), in); err == nil {
		t.Error("weight above the public bound accepted")
	}
	if _, _, err := pl.Evaluate(ev, make([]uint64, s.WeightLen()), nil, make([]uint64, s.InputLen()), in[:0]); err == nil {
		t.Error("missing input messages accepted")
	}
	bad := append([]byte(nil), in[0]...)
	bad[0] ^= 1
	if _, _, err := pl.Evaluate(ev, make([]uint64, s.WeightLen()), nil, make([]uint64, s.InputLen()), [][]byte{bad}); err == nil {
		t.Error("corrupt input message accepted")
	}
	if _, err := pl.EncryptInput(cli, []uint64{1 << 20}); err == nil {
		t.Error("wrong-size share accepted")
	}
}

// mulMonomialPoly returns a·X^k mod (X^N+1, 2^logT), 0 ≤ k < N.
func mulMonomialPoly(a []uint64, k, logT int) []uint64 {
	N := len(a)
	mask := uint64(1)<<uint(logT) - 1
	out := make([]uint64, N)
	for i, v := range a {
		if e := i + k; e < N {
			out[e] = (out[e] + v) & mask
		} else {
			out[e-N] = (out[e-N] - v) & mask
		}
	}
	return out
}

// TestBSGSPlaintextsDense checks the sparse construction of the BSGS
// plaintexts against the dense definition
// σ_{γ^{-uB}}(Σ_i X^i·σ_{γ^{uB+v}}(K_i)).
func TestBSGSPlaintextsDense(t *testing.T) {
	p, err := cheetah.NewParameters(cheetah.PN13)
	if err != nil {
		t.Fatal(err)
	}
	s := ConvShape{Ci: 5, H: 6, W: 7, Co: 11, Kh: 3, Kw: 3, Stride: 2, Pad: 1}
	pl, err := NewPlan(OptiEncodeBSGS, p, s, Options{LogT: 21, WeightBits: 8})
	if err != nil {
		t.Fatal(err)
	}
	if !pl.BSGS || pl.Baby < 2 {
		t.Fatalf("plan does not use BSGS baby steps: %+v", pl)
	}
	w := randWeights(t, s.WeightLen(), 8, 21)
	N, C := p.N(), pl.C()
	m := uint64(2 * N)
	mask := uint64(1)<<uint(pl.LogTp) - 1
	for g := 0; g < pl.Groups(); g++ {
		for u := 0; u < C/pl.Baby; u++ {
			for v := 0; v < pl.Baby; v++ {
				for cb := 0; cb < pl.Inputs(); cb++ {
					acc := make([]uint64, N)
					for i := 0; i < C && g*C+i < s.Co; i++ {
						k := automorphPoly(pl.kernelPoly(w, g*C+i, cb), powMod(pl.gamma, u*pl.Baby+v, m), pl.LogTp)
						k = mulMonomialPoly(k, i, pl.LogTp)
						for j := range acc {
							acc[j] = (acc[j] + k[j]) & mask
						}
					}
					want := automorphPoly(acc, powMod(pl.gamma, (C-u*pl.Baby)%C, m), pl.LogTp)
					got := pl.bsgsPoly(w, g, u, v, cb)
					for j := range want {
						if got[j] != want[j] {
							t.Fatalf("g=%d u=%d v=%d cb=%d: coefficient %d = %d, want %d", g, u, v, cb, j, got[j], want[j])
						}
					}
				}
			}
		}
	}
}
