package edge

import "fmt"

// Phase names one step of a conversion, for counting the instructions each
// step executes (sim/rise measures them under qemu-riscv64 through
// EncryptPhased and DecryptPhased).
type Phase uint8

// The phases of Encrypt and Decrypt in the order they run; the per-limb
// phases repeat once per limb.
const (
	PhaseEncode     Phase = iota + 1 // encodeInto: slot placement, inverse embedding FFT, scale and round
	PhaseSample                      // PRNG and samplers: e0 (added into the message), u, e1
	PhaseLift                        // per limb: u and e1 to mod q, m+e0 reduced
	PhaseNTT                         // per limb: the three forward NTTs (Forward3)
	PhaseProduct                     // per limb: c0 += pk0·u, c1 += pk1·u
	PhaseDecProduct                  // per limb: range check, c0 + c1·s
	PhaseINTT                        // per limb: the inverse NTT with its N^-1 scaling
	PhaseCRT                         // Garner CRT and 1/scale per coefficient
	PhaseDecode                      // forward embedding FFT, slots read out
)

// Phases lists every phase in order.
var Phases = []Phase{PhaseEncode, PhaseSample, PhaseLift, PhaseNTT, PhaseProduct,
	PhaseDecProduct, PhaseINTT, PhaseCRT, PhaseDecode}

var phaseNames = [...]string{"", "encode", "sample", "lift", "ntt", "product", "dec-product", "intt", "crt", "decode"}

func (p Phase) String() string {
	if int(p) < len(phaseNames) && p != 0 {
		return phaseNames[p]
	}
	return fmt.Sprintf("phase(%d)", uint8(p))
}

// ParsePhase returns the phase named s.
func ParsePhase(s string) (Phase, error) {
	for _, p := range Phases {
		if p.String() == s {
			return p, nil
		}
	}
	return 0, fmt.Errorf("edge: unknown phase %q", s)
}

// EncryptPhased is Encrypt on the fly and table paths (riscv64's path)
// with mark(p) called as each phase's work ends, so a caller can attribute
// what ran since the previous mark to p. It runs the same functions in the
// same order as Encrypt and produces the same ciphertext (tested); on the
// rns paths it returns an error, as their kernels fuse the steps.
func (e *Encryptor) EncryptPhased(values []float64, scale float64, ct *Ciphertext, mark func(Phase)) error {
	c := e.ctx
	if c.path.isRNS() {
		return fmt.Errorf("edge: EncryptPhased follows the fly and table paths, the context takes %s", c.path)
	}
	if err := c.checkCiphertext(ct); err != nil {
		return err
	}
	if err := encodeInto(e.bg0, values, scale, c.logN); err != nil {
		return err
	}
	mark(PhaseEncode)
	e.nonce++
	p := e.prng
	p.Seek(stream(StreamE0, e.nonce), 0)
	p.addBinomial(ints(e.bg0))
	p.Seek(stream(StreamU, e.nonce), 0)
	p.SampleTernary(e.u)
	p.Seek(stream(StreamE1, e.nonce), 0)
	p.SampleBinomial(e.e1)
	mark(PhaseSample)
	m := ints(e.bg0)
	for i := range c.limbs {
		l := &c.limbs[i]
		q := l.mod.Q
		c0, c1 := ct.C0[i], ct.C1[i]
		smallToMod(e.bg1, e.u, q)
		for j, x := range m {
			c0[j] = l.mod.ReduceSigned(x)
		}
		smallToMod(c1, e.e1, q)
		mark(PhaseLift)
		l.ntt.Forward3(e.bg1, c0, c1)
		mark(PhaseNTT)
		l.mulAdd2(c0, c1, e.bg1, e.pk.p0[i], e.pk.p1[i])
		mark(PhaseProduct)
	}
	ct.Scale = scale
	return nil
}

// DecryptPhased is Decrypt on the fly and table paths with mark(p) called
// as each phase's work ends (see EncryptPhased); same result as Decrypt.
func (d *Decryptor) DecryptPhased(ct *Ciphertext, out []float64, mark func(Phase)) error {
	c := d.ctx
	if d.itab != nil {
		return fmt.Errorf("edge: DecryptPhased follows the fly and table paths, the context takes %s", c.path)
	}
	if err := c.checkCiphertext(ct); err != nil {
		return err
	}
	if !(ct.Scale >= 1) {
		return fmt.Errorf("edge: ciphertext scale %v invalid", ct.Scale)
	}
	for k := 0; k < d.nl; k++ {
		l := &c.limbs[k]
		q := l.mod.Q
		for j, x := range ct.C0[k] {
			if x >= q || ct.C1[k][j] >= q {
				return fmt.Errorf("edge: ciphertext limb %d coefficient %d not reduced", k, j)
			}
		}
		a := d.acc[k]
		copy(a, ct.C0[k])
		l.mulAdd(a, ct.C1[k], d.sk.sm[k])
		mark(PhaseDecProduct)
		l.ntt.Inverse(a)
		mark(PhaseINTT)
	}
	f := floats(d.buf)
	inv := 1 / ct.Scale
	for j := range f {
		f[j] = d.crt(j) * inv
	}
	mark(PhaseCRT)
	err := decodeFrom(d.buf, out, c.logN)
	mark(PhaseDecode)
	return err
}
