package edge

import "fmt"

// PublicKey is an RLWE public key (pk0, pk1) = (-a·s + e, a) in the NTT
// domain, one slice of N words per limb, held in the limbs' multiplication
// form (Montgomery) so that encryption needs one reduction per product.
type PublicKey struct {
	p0, p1 [][]uint64
}

// SecretKey is a ternary secret s in the NTT domain (standard form).
type SecretKey struct {
	s [][]uint64
	// sm is s in the multiplication form, for decryption and symmetric encryption.
	sm [][]uint64
}

// Bytes returns the memory held by the key.
func (pk *PublicKey) Bytes() int { return 8 * 2 * len(pk.p0) * len(pk.p0[0]) }

func (c *Context) checkPolys(name string, v [][]uint64) error {
	if len(v) != len(c.limbs) {
		return fmt.Errorf("edge: %s has %d limbs, want %d", name, len(v), len(c.limbs))
	}
	for i, p := range v {
		if len(p) != c.params.N {
			return fmt.Errorf("edge: %s limb %d has %d coefficients, want %d", name, i, len(p), c.params.N)
		}
		q := c.limbs[i].mod.Q
		for j, x := range p {
			if x >= q {
				return fmt.Errorf("edge: %s limb %d coefficient %d = %d not below q=%d", name, i, j, x, q)
			}
		}
	}
	return nil
}

// importPolys copies NTT-domain limbs into multiplication form. montgomery64
// says the input is in 64-bit Montgomery form (a·2^64 mod q), Lattigo's key
// layout.
func (c *Context) importPolys(v [][]uint64, montgomery64 bool, mult bool) [][]uint64 {
	out := make([][]uint64, len(v))
	for i, p := range v {
		l := &c.limbs[i]
		o := make([]uint64, len(p))
		for j, x := range p {
			if montgomery64 {
				x = l.mod.MRed(x, 1)
			}
			if mult {
				x = l.toMont(x)
			}
			o[j] = x
		}
		out[i] = o
	}
	return out
}

// ImportPublicKey converts a server public key, given per limb in the NTT
// domain (Lattigo's pk.Value[0].Q.Coeffs and pk.Value[1].Q.Coeffs, which are
// in 64-bit Montgomery form: montgomery64 = true), once at setup.
func (c *Context) ImportPublicKey(pk0, pk1 [][]uint64, montgomery64 bool) (*PublicKey, error) {
	if err := c.checkPolys("pk0", pk0); err != nil {
		return nil, err
	}
	if err := c.checkPolys("pk1", pk1); err != nil {
		return nil, err
	}
	return &PublicKey{p0: c.importPolys(pk0, montgomery64, true), p1: c.importPolys(pk1, montgomery64, true)}, nil
}

// ImportSecretKey converts a secret key given per limb in the NTT domain
// (Lattigo's sk.Value.Q.Coeffs: montgomery64 = true).
func (c *Context) ImportSecretKey(s [][]uint64, montgomery64 bool) (*SecretKey, error) {
	if err := c.checkPolys("sk", s); err != nil {
		return nil, err
	}
	return &SecretKey{s: c.importPolys(s, montgomery64, false), sm: c.importPolys(s, montgomery64, true)}, nil
}

// ExportPublicKey returns (pk0, pk1) per limb, NTT domain, standard form.
func (c *Context) ExportPublicKey(pk *PublicKey) (pk0, pk1 [][]uint64) {
	return c.fromMult(pk.p0), c.fromMult(pk.p1)
}

// ExportSecretKey returns s per limb, NTT domain, standard form.
func (c *Context) ExportSecretKey(sk *SecretKey) [][]uint64 {
	out := make([][]uint64, len(sk.s))
	for i := range sk.s {
		out[i] = append([]uint64(nil), sk.s[i]...)
	}
	return out
}

func (c *Context) fromMult(v [][]uint64) [][]uint64 {
	out := make([][]uint64, len(v))
	for i, p := range v {
		l := &c.limbs[i]
		o := make([]uint64, len(p))
		for j, x := range p {
			if l.small {
				o[j] = condSub(mred32(x, 1, l.mod.Q, l.mod.MRedConst), l.mod.Q)
			} else {
				o[j] = l.mod.MRed(x, 1)
			}
		}
		out[i] = o
	}
	return out
}

// GenKeys generates a ternary secret key and its public key from a fresh
// crypto/rand seed. (The edge normally imports the server's public key; this
// is for self-contained use such as the CLI demo.)
func (c *Context) GenKeys() (*SecretKey, *PublicKey, error) {
	seed, err := NewSeed()
	if err != nil {
		return nil, nil, err
	}
	sk, pk := c.genKeysFromSeed(seed)
	return sk, pk, nil
}

func (c *Context) genKeysFromSeed(seed [SeedSize]byte) (*SecretKey, *PublicKey) {
	n := c.params.N
	prng := NewPRNG(seed)
	s8 := make([]int8, n)
	e8 := make([]int8, n)
	prng.Seek(StreamSecret, 0)
	prng.SampleTernary(s8)
	prng.Seek(StreamKeyErr, 0)
	prng.SampleBinomial(e8)
	sk := &SecretKey{}
	pk := &PublicKey{}
	for i := range c.limbs {
		l := &c.limbs[i]
		q := l.mod.Q
		s := make([]uint64, n)
		smallToMod(s, s8, q)
		l.ntt.Forward(s)
		sm := make([]uint64, n)
		for j := range s {
			sm[j] = l.toMont(s[j])
		}
		a := make([]uint64, n)
		prng.Seek(StreamA+uint64(i)<<8, 0)
		prng.SampleUniform(a, q)
		p0 := make([]uint64, n)
		smallToMod(p0, e8, q)
		l.ntt.Forward(p0)
		l.mulSub(p0, a, sm)
		for j := range a {
			p0[j] = l.toMont(p0[j])
			a[j] = l.toMont(a[j])
		}
		sk.s = append(sk.s, s)
		sk.sm = append(sk.sm, sm)
		pk.p0 = append(pk.p0, p0)
		pk.p1 = append(pk.p1, a)
	}
	return sk, pk
}
