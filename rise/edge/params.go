package edge

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// Params is a CKKS parameter set for the edge: ring degree N, the RNS primes
// and the default scale Δ = 2^LogScale.
type Params struct {
	Name     string
	N        int
	Q        []uint64
	LogScale int
	Source   string // where the set comes from
}

// seal30 are SEAL-Embedded's 30-bit primes (device/lib/parameters.c,
// set_parms_ckks_30bit_helper), all ≡ 1 mod 2^16 so usable up to N = 2^15.
var seal30 = []uint64{1053818881, 1054015489, 1054212097, 1055260673, 1056178177, 1056440321,
	1058209793, 1060175873, 1060700161, 1060765697, 1061093377, 1062469633, 1062535169}

// seal27 are SEAL-Embedded's 27-bit primes (set_parms_ckks_27bit_helper),
// ≡ 1 mod 8192.
var seal27 = []uint64{134012929, 134111233, 134176769}

// Presets are the RISE / SEAL-Embedded points, N = 1024 … 16384.
var Presets = []Params{
	{Name: "N1024", N: 1024, Q: seal27[:1], LogScale: 20,
		Source: "SEAL-Embedded set_parms_ckks(1024): one 27-bit prime, scale 2^20 (RISE Fig. 7 smallest point)"},
	{Name: "N2048", N: 2048, Q: seal27[:1], LogScale: 25,
		Source: "SEAL-Embedded set_parms_ckks(2048): one 27-bit prime, scale 2^25"},
	{Name: "N4096", N: 4096, Q: seal30[:3], LogScale: 25,
		Source: "SEAL-Embedded set_parms_ckks(4096): three 30-bit primes, scale 2^25 (RISE §II-D: N=4096, log Q=90)"},
	{Name: "N8192", N: 8192, Q: seal30[:6], LogScale: 25,
		Source: "SEAL-Embedded set_parms_ckks(8192): six 30-bit primes, scale 2^25"},
	{Name: "N16384", N: 16384, Q: seal30[:13], LogScale: 25,
		Source: "SEAL-Embedded set_parms_ckks(16384): thirteen 30-bit primes, scale 2^25 (RISE §II-D: N=16384, log Q=390)"},
}

// Preset returns the preset for ring degree n.
func Preset(n int) (Params, error) {
	for _, p := range Presets {
		if p.N == n {
			p.Q = append([]uint64(nil), p.Q...)
			return p, nil
		}
	}
	return Params{}, fmt.Errorf("edge: no preset for N=%d (have 1024, 2048, 4096, 8192, 16384)", n)
}

// Slots is the number of real slots, N/2.
func (p Params) Slots() int { return p.N / 2 }

// LogQ returns log2 of the product of the primes.
func (p Params) LogQ() float64 {
	s := 0.0
	for _, q := range p.Q {
		s += math.Log2(float64(q))
	}
	return s
}

// limb is one RNS prime with its NTT.
type limb struct {
	mod   Modulus
	ntt   NTT
	small bool // q < 2^30 off the rns paths: 32-bit Montgomery products
	r32   uint64
	// rns paths: the lean table header (scalars, for Retarget), the shared
	// forward table (PathRNSShared) and the rns form of the modulus.
	hdr, fwd *rns.NTTTable
	rmod     rns.Modulus
}

// Context is the immutable per-parameter state shared by encryptors and
// decryptors: the primes and their NTTs.
type Context struct {
	params Params
	logN   int
	limbs  []limb
	path   NTTPath
}

// Option configures a Context.
type Option func(*Context)

// WithTableNTT makes the context use precomputed twiddle tables (faster,
// 4 words per coefficient per limb) instead of on-the-fly twiddles.
func WithTableNTT() Option { return WithPath(PathTable) }

// NewContext validates p and prepares its NTTs.
func NewContext(p Params, opts ...Option) (*Context, error) {
	if p.N < 16 || p.N > 1<<16 || p.N&(p.N-1) != 0 {
		return nil, fmt.Errorf("edge: ring degree %d not a power of two in [16, 65536]", p.N)
	}
	if len(p.Q) == 0 || len(p.Q) > 64 {
		return nil, fmt.Errorf("edge: need 1..64 primes, have %d", len(p.Q))
	}
	if p.LogScale < 1 || p.LogScale > 60 {
		return nil, fmt.Errorf("edge: log scale %d out of range [1, 60]", p.LogScale)
	}
	c := &Context{params: p, logN: bits.Len(uint(p.N)) - 1}
	for _, o := range opts {
		o(c)
	}
	switch c.path {
	case "":
		c.path = DefaultPath(p)
	case PathFly, PathTable, PathRNS, PathRNSShared:
	default:
		return nil, fmt.Errorf("edge: unknown NTT path %q", c.path)
	}
	seen := map[uint64]bool{}
	for i, q := range p.Q {
		if seen[q] {
			return nil, fmt.Errorf("edge: prime %d repeated", q)
		}
		seen[q] = true
		var ntt NTT
		var err error
		switch {
		case c.path == PathTable:
			ntt, err = NewTableNTT(p.N, q)
		default:
			ntt, err = NewFlyNTT(p.N, q)
		}
		if err != nil {
			return nil, fmt.Errorf("edge: limb %d: %w", i, err)
		}
		l := limb{mod: *ntt.Modulus(), ntt: ntt, small: q < small30}
		l.r32 = (uint64(1) << 32) % q
		if c.path.isRNS() {
			if err := c.setupRNS(&l); err != nil {
				return nil, fmt.Errorf("edge: limb %d: %w", i, err)
			}
		}
		c.limbs = append(c.limbs, l)
	}
	return c, nil
}

// Params returns the parameters.
func (c *Context) Params() Params { return c.params }

// TwiddleBytes is the memory of the NTT twiddles the context holds for all
// limbs: the tables, or the root registers of the on-the-fly NTT (which
// the rns paths keep for key generation and symmetric encryption) plus the
// rns table headers and shared tables. An rns encryptor's own table is in
// its WorkingBytes.
func (c *Context) TwiddleBytes() int {
	s := 0
	for _, l := range c.limbs {
		if t, ok := l.ntt.(*TableNTT); ok {
			s += t.TableBytes()
		} else {
			s += 8 * (2*(c.logN+1) + 2)
		}
		if l.hdr != nil {
			s += rnsHeaderBytes + l.hdr.TableBytes()
		}
	}
	return s
}

// toMont returns a in the limb's multiplication form: a·2^32 mod q for
// q < 2^30, a·2^64 mod q otherwise.
func (l *limb) toMont(a uint64) uint64 {
	if l.small {
		return l.mod.BRed(a, l.r32)
	}
	return l.mod.MForm(a)
}

// mulAdd sets acc[j] = acc[j] + a[j]·bm[j] mod q, with bm in the limb's
// multiplication form and all inputs < q.
func (l *limb) mulAdd(acc, a, bm []uint64) {
	q := l.mod.Q
	a = a[:len(acc)]
	bm = bm[:len(acc)]
	if l.small {
		qi := l.mod.MRedConst
		for j := range acc {
			acc[j] = condSub(acc[j]+condSub(mred32(a[j], bm[j], q, qi), q), q)
		}
		return
	}
	for j := range acc {
		acc[j] = condSub(acc[j]+l.mod.MRed(a[j], bm[j]), q)
	}
}

// mulAdd2 sets c0 += u·p0 and c1 += u·p1 in one sweep over u.
func (l *limb) mulAdd2(c0, c1, u, p0, p1 []uint64) {
	if !l.small {
		l.mulAdd(c0, u, p0)
		l.mulAdd(c1, u, p1)
		return
	}
	q, qi := l.mod.Q, l.mod.MRedConst
	c1, u, p0, p1 = c1[:len(c0)], u[:len(c0)], p0[:len(c0)], p1[:len(c0)]
	for j := range c0 {
		x := u[j]
		c0[j] = condSub(c0[j]+condSub(mred32(x, p0[j], q, qi), q), q)
		c1[j] = condSub(c1[j]+condSub(mred32(x, p1[j], q, qi), q), q)
	}
}

// mulSub sets acc[j] = acc[j] - a[j]·bm[j] mod q.
func (l *limb) mulSub(acc, a, bm []uint64) {
	q := l.mod.Q
	a = a[:len(acc)]
	bm = bm[:len(acc)]
	if l.small {
		qi := l.mod.MRedConst
		for j := range acc {
			acc[j] = condSub(acc[j]+q-condSub(mred32(a[j], bm[j], q, qi), q), q)
		}
		return
	}
	for j := range acc {
		acc[j] = condSub(acc[j]+q-l.mod.MRed(a[j], bm[j]), q)
	}
}
