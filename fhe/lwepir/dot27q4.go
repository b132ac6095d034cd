package lwepir

// A batch's queries share the factors: Prepare multiplies each stored
// word by every waiting query's key. dotQ4 runs four queries a call
// (dot27q4), four coefficients at a time over all the terms, so that a
// factor is loaded and split into limbs once for the four and their twelve
// sums stay in registers. The keys are split ahead, once a query
// (splitKey27), and read as memory operands: a product is then three
// multiplications and three additions, against the single-query kernel's
// twelve vector operations and its sums' loads and stores. The factors of
// a block are copied once a batch into strips of four coefficients, every
// term in turn (load), so that the kernel reads them in order: read in
// place, a strip's terms lie a polynomial apart, in as many cache lines
// that share a set, and the kernel ran at half the single-query speed.

// dot27KeyStride is the distance in words between a split key's three
// vectors (k0, k1, k0 + k1): a constant of dot27q4's addressing, the
// default ring's degree (keys are a ring element's N words) and a cache
// line more. A multiple of 4 KiB would put the twelve vectors a call reads
// in one set of the first-level cache, which holds eight: the kernel ran
// at a third of its speed.
const dot27KeyStride = 2048 + 8

// splitKey27 lays key out in dst for dot27q4: k0, then k1 and k0 + k1,
// each dot27KeyStride words on (len(key) ≤ dot27KeyStride, len(dst) ≥
// splitLen27(len(key))).
func splitKey27(dst, key []uint64) {
	_ = dst[splitLen27(len(key))-1]
	for i, v := range key {
		lo, hi := v&(1<<27-1), v>>27
		dst[i], dst[dot27KeyStride+i], dst[2*dot27KeyStride+i] = lo, hi, lo+hi
	}
}

// splitLen27 is the words a split key of n words takes.
func splitLen27(n int) int { return 2*dot27KeyStride + n }

// dotQ4Fits reports whether dotQ4 sums these operands: the limb kernels'
// conditions (dot27Fits), a block dotQ4's sums hold, at least one term,
// and keys no longer than the split stride.
func dotQ4Fits(n, terms, keyLen int, q uint64) bool {
	return dot27Fits(n, terms, q) && n <= dotBlock && terms >= 1 && keyLen <= dot27KeyStride
}

// dotQ4 is dot27q4's scratch: a block's factors transposed, the keys'
// pointers and the sums.
type dotQ4 struct {
	pt    []uint64
	n, tn int // the loaded block's coefficients and terms
	rows  []*uint64
	kp    []*uint64
	acc   [4 * 3 * dotBlock]uint64
}

// dot27StripPad is the words left between two strips of a loaded block
// (a constant of dot27q4): a strip is 4·terms words, a multiple of 4 KiB
// whenever the terms are a multiple of 128 (a block's last run of terms
// can be), and strips that far apart would share cache sets as the rows
// do.
const dot27StripPad = 8

// load copies a block's factors (ps[t], t < terms, each of n words) into
// strips of four coefficients, all terms in turn, each strip
// dot27StripPad words after the last. Rows are read in order, each while
// the row four ahead is prefetched (dot27load): they lie a polynomial
// (16 KiB) apart, come from memory, and reading several at once would
// have them share cache sets.
func (d *dotQ4) load(ps [][]uint64) {
	d.n, d.tn = len(ps[0]), len(ps)
	stride := 4*d.tn + dot27StripPad
	need := d.n / 4 * stride
	if cap(d.pt) < need {
		d.pt = make([]uint64, need)
	}
	d.pt = d.pt[:need]
	if d.n%8 == 0 {
		d.rows = d.rows[:0]
		for _, p := range ps {
			_ = p[d.n-1]
			d.rows = append(d.rows, &p[0])
		}
		dot27load(&d.pt[0], &d.rows[0], d.tn, d.n, stride)
		return
	}
	for t, p := range ps {
		p = p[:d.n]
		o := 4 * t
		for s := 0; s < d.n; s += 4 {
			w, v := d.pt[o:o+4:o+4], p[s:s+4:s+4]
			w[0], w[1], w[2], w[3] = v[0], v[1], v[2], v[3]
			o += stride
		}
	}
}

// sum sets out[j][i] = Σ_t ps[t][i]·k_{j,t}[i]·2^-64 mod q for the four
// queries j over the loaded block (dotQ4Fits must hold), where ks[t] is
// the first query's key for term t, split by splitKey27 and sliced at the
// term's first coefficient, and query j's is j·qs words further on.
func (d *dotQ4) sum(out *[4][]uint64, ks [][]uint64, qs int, q, mred uint64) {
	n := d.n
	if len(ks) != d.tn {
		panic("lwepir: dotQ4: keys for another block's terms")
	}
	// The kernel writes 12·n sums and its limb sums stay exact for
	// dot27MaxTerms terms: checked here, not only by the caller's dotQ4Fits.
	if n > dotBlock || n%4 != 0 || d.tn < 1 || d.tn > dot27MaxTerms {
		panic("lwepir: dotQ4: a block the kernel cannot sum")
	}
	d.kp = d.kp[:0]
	for _, k := range ks {
		_ = k[3*qs+splitLen27(n)-1] // the kernel reads this far
		d.kp = append(d.kp, &k[0])
	}
	dot27q4(&d.acc[0], n, d.tn, &d.pt[0], &d.kp[0], 8*qs)
	for j := range 4 {
		a := d.acc[3*j*n : 3*(j+1)*n]
		reduce27(out[j][:n], a[:n], a[n:2*n], a[2*n:], q, mred)
	}
}
