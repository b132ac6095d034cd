package linear

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"unsafe"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
)

// A weight file holds one layer's Weights as PrepareWeights encoded them,
// so that a server can encode ahead of its sessions without holding every
// layer in memory: WriteWeights stores a layer, ReadWeights loads it back
// as the session reaches it. Layout (little-endian):
//
//	magic "RSW1" | digest [32] | plaintexts uint32 | lazy uint8
//	per plaintext, in plainRefs order:
//	  level uint8 | log t uint8 | NNZ uint32 | MaxAbs float64 | L1 float64
//	  (level+1) limbs × N coefficients uint64, NTT and Montgomery form
//
// The digest is SHA-256 over the plan (variant, shape, options, ring
// degree, moduli, t) and the weights, so a file encoded for other weights
// or another plan is refused rather than used. Coefficients are stored at
// 8 bytes: in NTT form they are uniform mod q_i and do not compress, and a
// fixed width loads without arithmetic (packing PN13's 60+49+49-bit limbs
// would save 18% of the bytes for a bit-unpacking pass over every one).
// ReadWeights checks every coefficient against its modulus.
const weightMagic = "RSW1"

// weightDigest binds a weight file to its plan and weights.
func (pl *Plan) weightDigest(w []uint64) [32]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%s|%+v|%+v|N=%d|L=%d|t=%d|q=%v|", pl.Variant(), pl.Shape, pl.Opt,
		pl.Params.N(), pl.Params.MaxLevel(), pl.LogTp, pl.Params.RingQ().ModuliChain())
	var b [8]byte
	for _, v := range w {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	var d [32]byte
	h.Sum(d[:0])
	return d
}

// WriteWeights writes ws (prepared for pl) to dst in the weight-file
// layout above.
func (pl *Plan) WriteWeights(dst io.Writer, ws *Weights) error {
	if ws == nil || ws.pl != pl {
		return errors.New("linear: weights prepared for another plan")
	}
	refs := pl.plainRefs()
	bw := bufio.NewWriterSize(dst, 1<<20)
	d := pl.weightDigest(ws.w)
	bw.WriteString(weightMagic)
	bw.Write(d[:])
	var hdr [5]byte
	binary.LittleEndian.PutUint32(hdr[:4], uint32(len(refs)))
	if ws.Lazy() {
		hdr[4] = 1
	}
	bw.Write(hdr[:])
	if !ws.Lazy() {
		buf := make([]byte, 8*pl.Params.N())
		for _, ref := range refs {
			pt := ws.plains[ref]
			if pt == nil {
				return fmt.Errorf("linear: internal: plaintext %+v not prepared", ref)
			}
			var ph [22]byte
			ph[0], ph[1] = byte(pt.Level), byte(pt.LogT)
			binary.LittleEndian.PutUint32(ph[2:], uint32(pt.NNZ))
			binary.LittleEndian.PutUint64(ph[6:], math.Float64bits(pt.MaxAbs))
			binary.LittleEndian.PutUint64(ph[14:], math.Float64bits(pt.L1))
			bw.Write(ph[:])
			for _, limb := range pt.Value.Coeffs[:pt.Level+1] {
				for j, c := range limb {
					binary.LittleEndian.PutUint64(buf[8*j:], c)
				}
				if _, err := bw.Write(buf); err != nil {
					return err
				}
			}
		}
	}
	return bw.Flush()
}

// weightHeader is the header's size: magic, digest, count, lazy flag.
const weightHeader = 4 + 32 + 5

// readWeightHeader reads and checks a weight file's header for w and
// returns its lazy flag.
func (pl *Plan) readWeightHeader(r io.Reader, w []uint64) (bool, error) {
	var hdr [weightHeader]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return false, fmt.Errorf("linear: weight file header: %w", err)
	}
	if string(hdr[:4]) != weightMagic {
		return false, errors.New("linear: not a weight file")
	}
	if d := pl.weightDigest(w); string(hdr[4:36]) != string(d[:]) {
		return false, errors.New("linear: weight file encoded for another plan or other weights")
	}
	if n := binary.LittleEndian.Uint32(hdr[36:40]); int(n) != len(pl.plainRefs()) || hdr[40] > 1 {
		return false, fmt.Errorf("linear: weight file holds %d plaintexts, the plan %d", n, len(pl.plainRefs()))
	}
	return hdr[40] == 1, nil
}

// CheckWeightFile reports whether a weight file of size bytes, whose start
// r reads, was written for this plan and the weights w and has the length
// its header implies (its coefficients are checked when ReadWeights reads
// them).
func (pl *Plan) CheckWeightFile(r io.Reader, size int64, w []uint64) error {
	if err := pl.checkWeights(w); err != nil {
		return err
	}
	lazy, err := pl.readWeightHeader(r, w)
	if err != nil {
		return err
	}
	want := int64(weightHeader)
	if !lazy {
		want += int64(len(pl.plainRefs())) * (22 + pl.plainBytes())
	}
	if size != want {
		return fmt.Errorf("linear: weight file of %d bytes, want %d", size, want)
	}
	return nil
}

// littleEndian: the host stores a uint64 as the file does, so a limb is
// read into its own memory (no decoding pass).
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// readLimb reads one limb of little-endian coefficients into limb: on a
// little-endian host straight into its memory, else through buf (8 bytes a
// coefficient).
func readLimb(r io.Reader, limb []uint64, buf []byte) error {
	if littleEndian {
		_, err := io.ReadFull(r, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(limb))), 8*len(limb)))
		return err
	}
	if _, err := io.ReadFull(r, buf[:8*len(limb)]); err != nil {
		return err
	}
	for j := range limb {
		limb[j] = binary.LittleEndian.Uint64(buf[8*j:])
	}
	return nil
}

// ReadWeights reads a layer written by WriteWeights for the same plan and
// weights w (OIHW mod 2^ℓ, checked as PrepareWeights checks them); the
// result equals what PrepareWeights returns.
func (pl *Plan) ReadWeights(src io.Reader, w []uint64) (*Weights, error) {
	if err := pl.checkWeights(w); err != nil {
		return nil, err
	}
	// A small buffer: the limbs (8N bytes each) are read past it, straight
	// into the plaintexts' memory (readLimb).
	br := bufio.NewReaderSize(src, 16<<10)
	lazy, err := pl.readWeightHeader(br, w)
	if err != nil {
		return nil, err
	}
	refs := pl.plainRefs()
	ws := &Weights{pl: pl, w: w}
	if lazy {
		if _, err := br.ReadByte(); err != io.EOF {
			return nil, errors.New("linear: weight file: data after a lazy layer's header")
		}
		return ws, nil // encoded on use
	}
	ws.plains = make(map[plainRef]*cheetah.Plaintext, len(refs))
	moduli := pl.Params.RingQ().ModuliChain()
	var buf []byte
	if !littleEndian {
		buf = make([]byte, 8*pl.Params.N())
	}
	for _, ref := range refs {
		var ph [22]byte
		if _, err := io.ReadFull(br, ph[:]); err != nil {
			return nil, fmt.Errorf("linear: weight file: %w", err)
		}
		level, logT := int(ph[0]), int(ph[1])
		if level > pl.Params.MaxLevel() || logT != pl.LogTp {
			return nil, fmt.Errorf("linear: weight file: plaintext at level %d, t = 2^%d", level, logT)
		}
		pt := &cheetah.Plaintext{Value: pl.Params.RingQ().AtLevel(level).NewPoly(), Level: level, LogT: logT,
			NNZ:    int(binary.LittleEndian.Uint32(ph[2:])),
			MaxAbs: math.Float64frombits(binary.LittleEndian.Uint64(ph[6:])),
			L1:     math.Float64frombits(binary.LittleEndian.Uint64(ph[14:]))}
		for i, limb := range pt.Value.Coeffs[:level+1] {
			if err := readLimb(br, limb, buf); err != nil {
				return nil, fmt.Errorf("linear: weight file: %w", err)
			}
			var top uint64 // branch-free: the largest coefficient
			for _, c := range limb {
				top = max(top, c)
			}
			if top >= moduli[i] {
				return nil, fmt.Errorf("linear: weight file: a coefficient of %+v not below q_%d", ref, i)
			}
		}
		ws.plains[ref] = pt
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, errors.New("linear: weight file: data after the last plaintext")
	}
	return ws, nil
}
