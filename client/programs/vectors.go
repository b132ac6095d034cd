package programs

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strings"

	"github.com/rosemary-fhe/rosemary/client/internal/session"
	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
)

// VectorPerObject is the number of plaintexts per store object of a
// vector database: its stored nodes interleave over one sequence of
// objects, which stays small enough for the device's object cache.
const VectorPerObject = 64

// VectorDBScale is log2 of the scale database vectors are encoded at.
const VectorDBScale = 26

// VectorShape is the HEVEC scan of n vectors of coeffs coefficients each
// on preset (its ring of N coefficients holds N/slot vectors per
// plaintext, slot the next power of two ≥ coeffs), merging up to 256 score
// ciphertexts into each one returned.
func VectorShape(preset string, n, coeffs int) (workload.HEVECShape, error) {
	if coeffs < 1 {
		return workload.HEVECShape{}, fmt.Errorf("session: vectors of %d coefficients", coeffs)
	}
	slot := max(2, 1<<bits.Len(uint(coeffs-1)))
	s := workload.HEVECShape{Name: "vectors", Params: preset, Vectors: int64(n), Dim: slot, Pack: min(slot, 256)}
	_, err := s.Layout()
	return s, err
}

// vectorPrefix and monomialPrefix name a vector database's objects.
func vectorPrefix(db string) string { return db + "/vec/" }

func monomialPrefix(db, name string) string {
	return db + "/" + strings.ReplaceAll(name, "/", "-") + "/"
}

// VectorLoader writes a vector database from its vectors in order,
// streaming: plaintext p holds vectors p·PerPt …, stored at position p of
// one sequence of objects (VectorPerObject each) — stored node
// "vectors/<i>" reads every Pack-th position from i on.
type VectorLoader struct {
	sink  session.ObjectSink
	db    string
	codec *workload.HEVECCodec
	logN  int
	enc   *rlwe.Encryptor // the owner's key, if the shape stores ciphertexts

	buf      [][]float64
	n        int
	obj      [][]byte
	objIndex int64
	pts      int64
	written  int64
}

// NewVectorLoader starts a database of the shape's vectors under db. A
// shape of encrypted vectors (shape.Encrypted) needs the owner's secret
// key sk: each plaintext is encrypted here before it is written, so the
// sink (the device) receives ciphertexts only; sk is ignored otherwise.
func NewVectorLoader(sink session.ObjectSink, db string, shape workload.HEVECShape, sk *rlwe.SecretKey) (*VectorLoader, error) {
	params, codec, err := vectorCodec(shape)
	if err != nil {
		return nil, err
	}
	l := &VectorLoader{sink: sink, db: db, codec: codec, logN: params.LogN()}
	if shape.Encrypted {
		if sk == nil {
			return nil, errors.New("session: encrypted vectors need the owner's secret key")
		}
		l.enc = rlwe.NewEncryptor(params, sk)
	}
	return l, nil
}

// polys is how many polynomials one stored plaintext position takes: 2
// for a ciphertext.
func (l *VectorLoader) polys() int {
	if l.enc != nil {
		return 2
	}
	return 1
}

// vectorCodec is the CKKS parameters of the shape's preset and the codec
// that a loader and a session of the same shape must share to agree on
// the stored plaintexts.
func vectorCodec(shape workload.HEVECShape) (ckks.Parameters, *workload.HEVECCodec, error) {
	params, err := ckksParameters(shape.Params)
	if err != nil {
		return params, nil, err
	}
	codec, err := workload.NewHEVECCodec(shape, params, VectorDBScale)
	return params, codec, err
}

func ckksParameters(preset string) (ckks.Parameters, error) {
	p, err := fhe.Lookup(preset)
	if err != nil {
		return ckks.Parameters{}, err
	}
	return p.CKKSParameters()
}

// Add appends a vector (its coefficients, at most the shape's slot).
func (l *VectorLoader) Add(ctx context.Context, v []float64) error {
	if l.n >= int(l.codec.Shape.Vectors) {
		return fmt.Errorf("session: more than the %d vectors the database was sized for", l.codec.Shape.Vectors)
	}
	if len(v) > l.codec.Shape.Dim {
		return fmt.Errorf("session: vector %d has %d coefficients, the database's slot holds %d", l.n, len(v), l.codec.Shape.Dim)
	}
	l.buf = append(l.buf, append([]float64(nil), v...))
	l.n++
	if len(l.buf) == l.codec.Layout.PerPt {
		return l.flushPlaintext(ctx)
	}
	return nil
}

func (l *VectorLoader) flushPlaintext(ctx context.Context) error {
	pt, err := l.codec.Plaintext(l.buf)
	if err != nil {
		return err
	}
	l.buf = l.buf[:0]
	if l.enc != nil {
		ct, err := l.enc.EncryptNew(pt)
		if err != nil {
			return fmt.Errorf("session: encrypt vectors: %w", err)
		}
		l.obj = append(l.obj, limbBytes8(append(append([][]uint64(nil), ct.Value[0].Coeffs...), ct.Value[1].Coeffs...)))
	} else {
		l.obj = append(l.obj, limbBytes8(pt.Value.Coeffs))
	}
	l.pts++
	if len(l.obj) == VectorPerObject {
		return l.flushObject(ctx)
	}
	return nil
}

func limbBytes8(limbs [][]uint64) []byte {
	out := make([]byte, 0, 8*len(limbs)*len(limbs[0]))
	for _, limb := range limbs {
		for _, c := range limb {
			out = binary.LittleEndian.AppendUint64(out, c)
		}
	}
	return out
}

func (l *VectorLoader) flushObject(ctx context.Context) error {
	if len(l.obj) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// A position is one plaintext (one poly) or one ciphertext (two
	// consecutive polys), each poly of every limb.
	limbs := l.codec.Params.MaxLevel() + 1
	raw := make([][]byte, 0, len(l.obj)*l.polys()*limbs)
	for _, pt := range l.obj {
		for i := 0; i < l.polys()*limbs; i++ {
			raw = append(raw, pt[i*8<<l.logN:(i+1)*8<<l.logN])
		}
	}
	name := api.StoredObjectName(vectorPrefix(l.db), l.objIndex)
	shp := object.Shape{Polys: len(l.obj) * l.polys(), Limbs: limbs, LogN: uint8(l.logN), WordSize: 8}
	if err := l.sink(ctx, name, shp, raw); err != nil {
		return fmt.Errorf("session: write %s: %w", name, err)
	}
	l.written += shp.Bytes()
	l.objIndex++
	l.obj = l.obj[:0]
	return nil
}

// Finish writes what is held, the zero plaintexts that complete the last
// group and the packing tree's monomials; it returns the bytes written.
func (l *VectorLoader) Finish(ctx context.Context) (int64, error) {
	if l.n != int(l.codec.Shape.Vectors) {
		return 0, fmt.Errorf("session: %d vectors added, the database was sized for %d", l.n, l.codec.Shape.Vectors)
	}
	if len(l.buf) > 0 {
		if err := l.flushPlaintext(ctx); err != nil {
			return 0, err
		}
	}
	for l.pts < l.codec.Layout.Plaintexts {
		if err := l.flushPlaintext(ctx); err != nil {
			return 0, err
		}
	}
	if err := l.flushObject(ctx); err != nil {
		return 0, err
	}
	mono, err := l.codec.Monomials()
	if err != nil {
		return 0, err
	}
	for name, pt := range mono {
		limbs := len(pt.Value.Coeffs)
		raw := make([][]byte, limbs)
		b := limbBytes8(pt.Value.Coeffs)
		for i := range raw {
			raw[i] = b[i*8<<l.logN : (i+1)*8<<l.logN]
		}
		obj := api.StoredObjectName(monomialPrefix(l.db, name), 0)
		shp := object.Shape{Polys: 1, Limbs: limbs, LogN: uint8(l.logN), WordSize: 8}
		if err := l.sink(ctx, obj, shp, raw); err != nil {
			return 0, fmt.Errorf("session: write %s: %w", obj, err)
		}
		l.written += shp.Bytes()
	}
	return l.written, nil
}

// VectorSession is a vector database on a device, ready for queries: the
// HEVEC scan compiled for its shape, its device segment set on the device,
// the evaluation keys stored. A query is encrypted here; every score comes
// back encrypted and is decrypted here.
type VectorSession struct {
	Shape  workload.HEVECShape
	Plan   *compiler.Plan
	Stream *lower.StreamProgram

	dev      api.Device
	db       string
	codec    *workload.HEVECCodec
	params   ckks.Parameters
	enc      *rlwe.Encryptor
	dec      *rlwe.Decryptor
	progName string
	query    int
	scores   int
	stored   []*devicepb.StoredBinding
	keys     []*devicepb.KeyBinding
	meta     rlwe.MetaData
}

// NewVectorSession prepares queries over the vector database db (written
// by a VectorLoader of the same shape).
func NewVectorSession(ctx context.Context, dev api.Device, db string, shape workload.HEVECShape, sk *rlwe.SecretKey,
	opt session.Options) (*VectorSession, error) {
	if opt.KeyPrefix == "" {
		opt.KeyPrefix = db + "/keys"
	}
	params, codec, err := vectorCodec(shape)
	if err != nil {
		return nil, err
	}
	prog, err := shape.Program()
	if err != nil {
		return nil, err
	}
	plan, err := compileForRosemary(prog)
	if err != nil {
		return nil, err
	}
	// A vector database lives on the device (see compiler.Plan.AllOnDevice).
	plan, seg := plan.AllOnDevice()
	s := &VectorSession{Shape: shape, Plan: plan, dev: dev, db: db, codec: codec, params: params,
		enc: rlwe.NewEncryptor(params, sk), dec: rlwe.NewDecryptor(params, sk), query: -1, scores: -1}
	if s.Stream, err = plan.StreamSegment(seg, lower.RingOf(params.Parameters), fhe.CKKS, 0); err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	for _, sn := range s.Stream.Nodes {
		switch {
		case sn.Kind == lower.StreamInput && sn.Role == ir.RoleQuery:
			s.query = sn.Node
		case sn.Kind == lower.StreamStored && strings.HasPrefix(sn.Name, "vectors/"):
			var i int64
			if _, err := fmt.Sscanf(sn.Name, "vectors/%d", &i); err != nil {
				return nil, fmt.Errorf("session: stored node %q", sn.Name)
			}
			s.stored = append(s.stored, &devicepb.StoredBinding{Node: uint32(sn.Node), Prefix: vectorPrefix(db), PerObject: VectorPerObject,
				Stride: uint32(shape.Pack), Offset: uint32(i)})
		case sn.Kind == lower.StreamStored:
			s.stored = append(s.stored, &devicepb.StoredBinding{Node: uint32(sn.Node), Prefix: monomialPrefix(db, sn.Name), PerObject: 1})
		case sn.Out:
			s.scores = sn.Node
		}
	}
	if s.query < 0 || s.scores < 0 {
		return nil, errors.New("session: the vector scan's device segment does not take the query and return the scores")
	}
	if s.progName, _, err = setStream(ctx, dev, "vectors", s.Stream); err != nil {
		return nil, err
	}
	if s.keys, _, _, err = storeStreamKeys(ctx, dev, params.Parameters, s.Stream, sk, opt); err != nil {
		return nil, err
	}
	// Metadata: the query's, the database's and the monomials'.
	qpt, err := codec.Query(nil)
	if err != nil {
		return nil, err
	}
	dbpt, err := codec.Plaintext(nil)
	if err != nil {
		return nil, err
	}
	sources := map[string]rlwe.MetaData{"query": *qpt.MetaData}
	mono, err := codec.Monomials()
	if err != nil {
		return nil, err
	}
	for _, n := range plan.Program.Nodes {
		if n.Op == ir.OpStored {
			if pt, ok := mono[n.Name]; ok {
				sources[n.Name] = *pt.MetaData
			} else {
				sources[n.Name] = *dbpt.MetaData
			}
		}
	}
	md, err := engine.ProgramMeta(plan.Program, params, params, sources)
	if err != nil {
		return nil, err
	}
	s.meta = md[s.scores]
	return s, nil
}

// Scores encrypts a query vector (its coefficients, at most the slot),
// runs the scan on the device and returns the decrypted inner products
// with every database vector, in database order.
func (s *VectorSession) Scores(ctx context.Context, q []float64) ([]float64, *devicepb.RunStreamResponse, error) {
	pt, err := s.codec.Query(q)
	if err != nil {
		return nil, nil, err
	}
	ct, err := s.enc.EncryptNew(pt)
	if err != nil {
		return nil, nil, err
	}
	var limbs engine.Limbs
	for _, p := range ct.Value {
		limbs = append(limbs, p.Coeffs...)
	}
	resp, err := s.dev.RunStream(ctx, &devicepb.RunStreamRequest{Program: s.progName,
		Inputs: []*devicepb.StreamValues{{Node: uint32(s.query), Instances: api.Instances([]engine.Limbs{limbs})}}, Stored: s.stored, Keys: s.keys})
	if err != nil {
		return nil, nil, err
	}
	out, err := api.Outputs(resp, s.scores)
	if err != nil {
		return nil, resp, err
	}
	if int64(len(out)) != s.codec.Layout.Groups {
		return nil, resp, fmt.Errorf("session: the device returned %d score ciphertexts, want %d", len(out), s.codec.Layout.Groups)
	}
	pts := make([]*rlwe.Plaintext, len(out))
	for g, limbs := range out {
		ct := rlwe.NewCiphertext(s.params, 1, 0)
		*ct.MetaData = s.meta
		if !engine.CopyLimbs(limbs, ct.Value, 1) {
			return nil, resp, fmt.Errorf("session: score ciphertext %d of %d limbs", g, len(limbs))
		}
		pts[g] = s.dec.DecryptNew(ct)
	}
	scores, err := s.codec.Scores(pts, int(s.Shape.Vectors))
	return scores, resp, err
}

// QueryBytes is the size of an encrypted query (8-byte words, as the wire
// carries them); AnswerBytes that of the returned scores.
func (s *VectorSession) QueryBytes() int64 {
	return 2 * int64(s.params.MaxLevel()+1) * int64(s.params.N()) * engine.WordBytes
}

// AnswerBytes is the size of the returned score ciphertexts.
func (s *VectorSession) AnswerBytes() int64 {
	return s.codec.Layout.Groups * 2 * int64(s.params.N()) * engine.WordBytes
}
