package lwepir

import "fmt"

// A packer's precomputation, stored and loaded: a device keeps a
// generation's factors beside its tiles (N-word polynomials, as the hint's
// diagonals are kept) and rebuilds the Packer from them when it opens the
// generation. Which factor multiplies which key variant is a function of
// the shape alone (TestPackLayoutIsAFunctionOfTheShape), so only the
// values are stored.

// Factors returns pack k's factors, N words a polynomial (NTT domain,
// Montgomery form), in the order Prepare reads them; nil for a packer
// used in place (LoadPackerPieces). Read only.
func (pk *Packer) Factors(k int) []uint64 { return pk.pre[k] }

// AParts returns pack k's a-part rounded to 2^LogQA (N words). Read only.
func (pk *Packer) AParts(k int) []uint32 { return pk.aOut[k] }

// LoadPacker rebuilds the packer of shape from stored factors and
// a-parts (Factors and AParts of each pack), refusing any of the wrong
// size or with a value out of its range.
func LoadPacker(p Params, shape Shape, factors [][]uint64, aParts [][]uint32) (*Packer, error) {
	pk, err := packerLayout(p, shape, p.Pack().Absorb)
	if err != nil {
		return nil, err
	}
	n := p.N()
	if len(factors) != pk.packs || len(aParts) != pk.packs {
		return nil, fmt.Errorf("%w: %d packs of factors and %d of a-parts, want %d", ErrParams, len(factors), len(aParts), pk.packs)
	}
	for k := range pk.packs {
		want := pk.factorPolys(k) * n
		if len(factors[k]) != want || len(aParts[k]) != n {
			return nil, fmt.Errorf("%w: pack %d: %d factor words (want %d), %d a-part words", ErrParams, k, len(factors[k]), want, len(aParts[k]))
		}
		for _, w := range factors[k] {
			if w >= pk.pr.q {
				return nil, fmt.Errorf("%w: pack %d: a factor not below Q", ErrParams, k)
			}
		}
		for _, w := range aParts[k] {
			if w>>pk.pr.pp.LogQA != 0 {
				return nil, fmt.Errorf("%w: pack %d: an a-part word out of range", ErrParams, k)
			}
		}
		pk.pre[k], pk.aOut[k] = factors[k], aParts[k]
	}
	pk.polysOfPre()
	return pk, nil
}

// LoadPackerPieces is LoadPacker with the factors used where they are (a
// store's mapped pages): factor(k, j) returns pack k's factor polynomial j
// (in stored order) as pieces of pieceWords words each — a divisor of N
// and a multiple of 4 — which the packer keeps and reads at every query.
// The pieces' values are not checked: a factor out of its range spoils
// the answers (which the client authenticates), never memory. guard, if
// not nil, runs every unit of Prepare's work on the goroutine that reads
// the pieces (a reader of mapped files turns a fault into an error there:
// a fault is per goroutine).
func LoadPackerPieces(p Params, shape Shape, pieceWords int, factor func(k, j int) ([][]uint64, error), aParts [][]uint32,
	guard func(func() error) error) (*Packer, error) {
	pk, err := packerLayout(p, shape, p.Pack().Absorb)
	if err != nil {
		return nil, err
	}
	n := p.N()
	if pieceWords < 4 || pieceWords%4 != 0 || n%pieceWords != 0 {
		return nil, fmt.Errorf("%w: factor pieces of %d words for N = %d", ErrParams, pieceWords, n)
	}
	if len(aParts) != pk.packs {
		return nil, fmt.Errorf("%w: %d packs of a-parts, want %d", ErrParams, len(aParts), pk.packs)
	}
	pk.pieceWords = n
	pk.polys = make([][][][]uint64, pk.packs)
	for k := range pk.packs {
		if len(aParts[k]) != n {
			return nil, fmt.Errorf("%w: pack %d: %d a-part words", ErrParams, k, len(aParts[k]))
		}
		for _, w := range aParts[k] {
			if w>>pk.pr.pp.LogQA != 0 {
				return nil, fmt.Errorf("%w: pack %d: an a-part word out of range", ErrParams, k)
			}
		}
		pk.pre[k], pk.aOut[k] = nil, aParts[k]
		pk.polys[k] = make([][][]uint64, pk.factorPolys(k))
		for j := range pk.polys[k] {
			pieces, err := factor(k, j)
			if err != nil {
				return nil, err
			}
			if len(pieces) != n/pieceWords {
				return nil, fmt.Errorf("%w: pack %d, factor %d: %d pieces, want %d", ErrParams, k, j, len(pieces), n/pieceWords)
			}
			for _, piece := range pieces {
				if len(piece) != pieceWords {
					return nil, fmt.Errorf("%w: pack %d, factor %d: a piece of %d words, want %d", ErrParams, k, j, len(piece), pieceWords)
				}
			}
			pk.polys[k][j] = pieces
		}
	}
	pk.pieceWords, pk.guard = pieceWords, guard
	return pk, nil
}

// factorPolys is how many factor polynomials pack k has.
func (pk *Packer) factorPolys(k int) int {
	if pk.pr.pp.TwoKeys {
		return pk.twoKeyFactorPolys()
	}
	var c int
	for _, node := range pk.nodes[k] {
		c += len(node.terms)
	}
	return c
}

// packerLayout is a packer of shape without values: its nodes and their
// key variants, as precomputePack lays them out (the same walk on the
// variants alone, mergeFormal's order of insertion), and the variants'
// permutations.
func packerLayout(p Params, shape Shape, absorb int) (*Packer, error) {
	if err := shape.Validate(p); err != nil {
		return nil, err
	}
	pr, err := p.packRing()
	if err != nil {
		return nil, err
	}
	n := p.N()
	pk := &Packer{p: p, pr: pr, shape: shape, absorb: max(1, min(absorb, pr.logN)), varIndex: map[variant]int{}}
	pk.perPack, pk.stride, pk.packs = packLayout(n, shape.Rows)
	pk.nodes = make([][]packNode, pk.packs)
	pk.pre = make([][]uint64, pk.packs)
	pk.aOut = make([][]uint32, pk.packs)
	twoN := uint64(2 * n)
	for k := range pk.packs {
		if pr.pp.TwoKeys {
			continue // no tree: every pack stores the same switchings
		}
		off := 0
		emit := func(level int, vs []variant) {
			node := packNode{level: level, off: off, terms: make([]int, len(vs))}
			for i, v := range vs {
				idx, ok := pk.varIndex[v]
				if !ok {
					idx = len(pk.variants)
					pk.varIndex[v] = idx
					pk.variants = append(pk.variants, v)
				}
				node.terms[i] = idx
			}
			off += len(vs) * n
			pk.nodes[k] = append(pk.nodes[k], node)
		}
		var walk func(level, off, step int) ([]variant, bool)
		walk = func(level, off, step int) ([]variant, bool) {
			if level == 0 {
				return nil, pk.leafRow(k, off) >= 0
			}
			fe, eok := walk(level-1, off, 2*step)
			fo, ook := walk(level-1, off+step, 2*step)
			if !eok && !ook {
				return nil, false
			}
			var own []variant
			for j := 0; j < pr.pp.Digits; j++ {
				own = append(own, variant{lev: level, g: 1, j: j})
			}
			if level > pk.absorb {
				emit(level, own)
				return nil, true
			}
			var f []variant
			add := func(v variant) {
				for _, w := range f {
					if w == v {
						return
					}
				}
				f = append(f, v)
			}
			for _, child := range [][]variant{fe, fo} {
				for _, v := range child {
					add(v)
					add(variant{lev: v.lev, g: v.g * pr.galEls[level] % twoN, j: v.j})
				}
			}
			for _, v := range own {
				add(v)
			}
			if level == pk.absorb {
				emit(level, f)
				return nil, true
			}
			return f, true
		}
		if _, ok := walk(pr.logN, 0, 1); !ok {
			return nil, fmt.Errorf("lwepir: pack %d holds no row", k)
		}
	}
	if err := pk.variantTables(); err != nil {
		return nil, err
	}
	return pk, nil
}

// PackerFactorWords returns, for each pack of shape, the number of words
// of its factors (what Factors returns and LoadPacker expects): a function
// of the parameters and the shape alone, so that a device reading stored
// factors knows their sizes before it reads them.
func PackerFactorWords(p Params, shape Shape) ([]int, error) {
	pk, err := packerLayout(p, shape, p.Pack().Absorb)
	if err != nil {
		return nil, err
	}
	out := make([]int, pk.packs)
	for k := range pk.packs {
		out[k] = pk.factorPolys(k) * p.N()
	}
	return out, nil
}

// PackerStoredBytes is what a packer of shape occupies stored as the
// device reads it: each pack's factors and its a-part, 8 bytes a word.
func PackerStoredBytes(p Params, shape Shape) (int64, error) {
	words, err := PackerFactorWords(p, shape)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, w := range words {
		n += 8 * int64(w+p.N())
	}
	return n, nil
}

// TileBytesTotal is what shape's tiles occupy stored (StoredBytes less the
// diagonals).
func (s Shape) TileBytesTotal(p Params) int64 { return int64(s.Tiles(p)) * int64(s.TileBytes(p)) }
