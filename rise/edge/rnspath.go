package edge

import (
	"fmt"
	"unsafe"

	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// NTTPath names the implementation of the per-limb transforms and products.
type NTTPath string

// The paths a Context can take (WithPath).
const (
	// PathFly is the RISE design point: scalar Go NTT with twiddles computed
	// on the fly from log N+1 root registers; O(log N) words per limb. The
	// default where the rns kernels do not run (riscv64, CPUs without
	// AVX-512 IFMA).
	PathFly NTTPath = "fly"
	// PathTable is the scalar Go NTT with precomputed Shoup tables (4N
	// words per limb).
	PathTable NTTPath = "table"
	// PathRNS runs the rns package's AVX-512 IFMA NTT and Montgomery
	// multiply-accumulate kernels with one lean twiddle table (2N words,
	// rns.NewNTTTableLean) per encryptor (and one per decryptor), refilled
	// for each limb as it streams through (rns.NTTTable.Retarget): the
	// default on amd64 with IFMA when every prime is below 2^50.
	PathRNS NTTPath = "rns"
	// PathRNSShared is PathRNS with one lean forward table per prime built
	// once in the Context and shared by its encryptors: no refill per limb,
	// 2N words per limb of memory.
	PathRNSShared NTTPath = "rns-shared"
)

// DefaultPath is the path NewContext takes for p without WithPath: PathRNS
// when the rns kernels serve every prime on this CPU, else PathFly.
func DefaultPath(p Params) NTTPath {
	for _, q := range p.Q {
		if !rns.LeanNTTSupported(q) {
			return PathFly
		}
	}
	if len(p.Q) == 0 {
		return PathFly
	}
	return PathRNS
}

// WithPath selects the transform path (see NTTPath). PathRNS and
// PathRNSShared are valid on every platform and for primes below 2^50, but
// without AVX-512 IFMA they run rns's slow Go fallback.
func WithPath(p NTTPath) Option { return func(c *Context) { c.path = p } }

// Path returns the path the context takes.
func (c *Context) Path() NTTPath { return c.path }

func (p NTTPath) isRNS() bool { return p == PathRNS || p == PathRNSShared }

// setupRNS prepares limb l for the rns paths: the lean table header (for
// Retarget) or the shared forward table, and the rns modulus.
func (c *Context) setupRNS(l *limb) error {
	dirs := rns.NTTDirection(0)
	if c.path == PathRNSShared {
		dirs = rns.NTTForward
	}
	t, err := rns.NewNTTTableLean(c.params.N, l.mod.Q, dirs)
	if err != nil {
		return err
	}
	l.hdr, l.rmod = t, t.Modulus
	if c.path == PathRNSShared {
		l.fwd = t
	}
	// Multiplication form 2^64 (rns.MACMont), not the 32-bit one.
	l.small = false
	return nil
}

// rnsHeaderBytes is what an rns table header holds (no arrays).
const rnsHeaderBytes = int(unsafe.Sizeof(rns.NTTTable{}))

// leanTable returns a lean table of the context's degree for dirs, built
// for limb 0 (to be retargeted).
func (c *Context) leanTable(dirs rns.NTTDirection) (*rns.NTTTable, error) {
	t, err := rns.NewNTTTableLean(c.params.N, c.limbs[0].mod.Q, dirs)
	if err != nil {
		return nil, fmt.Errorf("edge: rns table: %w", err)
	}
	return t, nil
}

// tableFor returns the lean table serving limb i: the shared one, or own
// refilled for limb i if it holds another prime.
func (c *Context) tableFor(own *rns.NTTTable, i int) (*rns.NTTTable, error) {
	l := &c.limbs[i]
	if l.fwd != nil {
		return l.fwd, nil
	}
	if own.Q != l.hdr.Q {
		if err := own.Retarget(l.hdr); err != nil {
			return nil, fmt.Errorf("edge: limb %d: %w", i, err)
		}
	}
	return own, nil
}

// reverseLimbs reports whether to process the limbs last to first: they
// are independent, so when the refilled table own already holds the last
// limb (as after the previous encryption) the reverse order saves a refill.
func (c *Context) reverseLimbs(own *rns.NTTTable) bool {
	return own != nil && len(c.limbs) > 1 && own.Q == c.limbs[len(c.limbs)-1].hdr.Q
}

// encryptRNS is Encrypt's limb loop on the rns paths: the three forward
// transforms and the two products c0 += u·pk0, c1 += u·pk1 run in the rns
// kernels.
func (e *Encryptor) encryptRNS(ct *Ciphertext) error {
	c := e.ctx
	m := ints(e.bg0)
	rev := c.reverseLimbs(e.tab)
	for k := range c.limbs {
		i := k
		if rev {
			i = len(c.limbs) - 1 - k
		}
		l := &c.limbs[i]
		t, err := c.tableFor(e.tab, i)
		if err != nil {
			return err
		}
		q := l.mod.Q
		c0, c1 := ct.C0[i], ct.C1[i]
		smallToMod(e.bg1, e.u, q)
		for j, x := range m {
			c0[j] = l.mod.ReduceSigned(x)
		}
		smallToMod(c1, e.e1, q)
		t.Forward(e.bg1, e.bg1)
		t.Forward(c0, c0)
		t.Forward(c1, c1)
		rns.MACMont(e.bg1, e.pk.p0[i], c0, &l.rmod)
		rns.MACMont(e.bg1, e.pk.p1[i], c1, &l.rmod)
	}
	return nil
}
