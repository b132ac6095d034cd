package edge

import "fmt"

// Phase names one step of a conversion, for counting the instructions each
// step executes (rise/soc measures them under qemu-riscv64 through
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
// what ran since the previous mark to p: the same code as Encrypt, so the
// same ciphertext (tested). On the rns paths it returns an error, as their
// kernels fuse the steps.
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
	return e.encryptEncoded(scale, ct, mark)
}

// DecryptPhased is Decrypt on the fly and table paths with mark(p) called
// as each phase's work ends (see EncryptPhased); the same code as Decrypt.
func (d *Decryptor) DecryptPhased(ct *Ciphertext, out []float64, mark func(Phase)) error {
	if d.itab != nil {
		return fmt.Errorf("edge: DecryptPhased follows the fly and table paths, the context takes %s", d.ctx.path)
	}
	return d.decrypt(ct, out, mark)
}

// markPhase calls mark(p) unless mark is nil (Encrypt and Decrypt pass nil).
func markPhase(mark func(Phase), p Phase) {
	if mark != nil {
		mark(p)
	}
}
