package pirserver

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"time"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// The packed mode (lwepir's Packer): a request that carries packing keys
// is answered with the scan's column packed into RLWE ciphertexts instead
// of the column and H·s. The packer's precomputation is read from the
// generation's objname.LWEPacker objects when a generation is first
// queried in this mode and kept, per generation, in packerCache; each
// query's Prepare (its keys' products with the stored factors) runs beside
// its scan, which joins the generation's batched pass as in the ring mode.

// ErrPackedMode: a packed-mode request that also names Galois keys or an
// encrypted secret (the two modes are not mixed).
var ErrPackedMode = errors.New("a packed query carries no Galois keys and no encrypted secret")

// maxPackers bounds the generations whose packers are kept, and
// maxPackerBytes their precomputation's bytes (64 MiB a pack of 2048 rows
// at the default parameters, lwepir.PackV2, 96 MiB in PackV1: in PackV2,
// 64 MiB a GiB of database at 2048 rows, 256 MiB at 8192); past either the
// oldest are dropped (a query holding one keeps it until it ends), the
// newest always kept.
const (
	maxPackers     = 4
	maxPackerBytes = 1 << 30
)

// packerCache keeps opened packers by generation and shape.
type packerCache struct {
	mu    sync.Mutex
	m     map[string]*packerEntry
	order []string
}

// packerEntry is one generation's packer, opened once: queries that find
// it being opened wait for it. A packer used in place holds its objects
// pinned and mapped (unmap) until it has left the cache and the last
// query using it is done (users).
type packerEntry struct {
	gen     string
	ready   chan struct{}
	pk      *lwepir.Packer
	err     error
	unmap   func()
	users   int  // queries holding the packer; c.mu
	dropped bool // out of the cache; c.mu
}

// packer returns generation gen's packer for p and shape, reading (or
// mapping) it from the store if it is not kept, and the function that
// ends its use by the query.
func (s *Server) packer(ctx context.Context, gen string, p lwepir.Params, shape lwepir.Shape) (*lwepir.Packer, func(), error) {
	key := generationKey(gen, p, shape)
	c := &s.packers
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*packerEntry{}
	}
	e, ok := c.m[key]
	if !ok {
		e = &packerEntry{gen: gen, ready: make(chan struct{})}
		c.add(key, e)
	}
	// The query holds the entry from here: its mappings outlive any
	// eviction until done.
	e.users++
	c.mu.Unlock()
	var once sync.Once
	done := func() {
		once.Do(func() {
			c.mu.Lock()
			e.users--
			c.unmapIfDone(e)
			c.mu.Unlock()
		})
	}
	if !ok {
		s.cfg.EnterISP()
		pk, unmap, err := s.openPacker(gen, p, shape)
		s.cfg.LeaveISP()
		c.mu.Lock()
		e.pk, e.unmap, e.err = pk, unmap, err
		if err != nil {
			// Not kept: a later query reads it again (the objects may
			// arrive, or a transient read error pass).
			if c.m[key] == e {
				c.drop(key)
				for i, k := range c.order {
					if k == key {
						c.order = append(c.order[:i], c.order[i+1:]...)
						break
					}
				}
			}
		} else {
			c.trim(key)
		}
		c.mu.Unlock()
		close(e.ready)
	}
	select {
	case <-e.ready:
	case <-ctx.Done():
		done()
		return nil, nil, ctx.Err()
	}
	if e.err != nil {
		done()
		return nil, nil, e.err
	}
	return e.pk, done, nil
}

// unmapIfDone releases e's mappings once it is out of the cache and no
// query uses it (a few system calls, under c.mu). c.mu held.
func (c *packerCache) unmapIfDone(e *packerEntry) {
	if e.dropped && e.users == 0 && e.unmap != nil {
		e.unmap()
		e.unmap = nil
	}
}

// drop takes key's entry out of the cache, its mappings released now or
// by the last query using it. c.mu held.
func (c *packerCache) drop(key string) {
	e := c.m[key]
	delete(c.m, key)
	if e == nil {
		return
	}
	e.dropped = true
	c.unmapIfDone(e)
}

// openPacker opens generation gen's packer: in place from the store's
// mappings where it can (the factors are most of a generation's bytes
// beside the tiles: read into memory they would make the device's memory
// grow with the database), else read.
func (s *Server) openPacker(gen string, p lwepir.Params, shape lwepir.Shape) (*lwepir.Packer, func(), error) {
	if pk, unmap, err, ok := s.mapPacker(gen, p, shape); ok {
		return pk, unmap, err
	}
	pk, err := s.readPacker(gen, p, shape)
	return pk, nil, err
}

// readPacker reads generation gen's packer objects (objname.LWEPacker) and
// rebuilds its packer: every object's shape is checked against what the
// parameters and shape imply (the polynomials still to read) before it is
// read.
func (s *Server) readPacker(gen string, p lwepir.Params, shape lwepir.Shape) (*lwepir.Packer, error) {
	words, err := lwepir.PackerFactorWords(p, shape)
	if err != nil {
		return nil, malformed("%v", err)
	}
	n := p.N()
	order, err := packerOrder(words, n)
	if err != nil {
		return nil, err
	}
	total := len(order)
	if err := s.checkPackerTotal(gen, p, total); err != nil {
		return nil, err
	}
	factors := make([][]uint64, len(words))
	aParts := make([][]uint32, len(words))
	for k, w := range words {
		factors[k] = make([]uint64, w)
		aParts[k] = make([]uint32, n)
	}
	logN := uint8(bits.Len(uint(n)) - 1)
	buf := make([]byte, 8*n)
	prefix := objname.LWEPacker(gen)
	for j, i := int64(0), 0; i < total; j++ {
		name := objname.Stored(prefix, j)
		o, err := s.cfg.Store.Acquire(name)
		if err != nil {
			return nil, fmt.Errorf("device: querylwe: %w: stored object %q: %w", api.ErrNotFound, name, err)
		}
		limbs := o.Info().Shape.Limbs
		if err := checkPackerObject(name, o.Info().Shape, logN, total-i); err != nil {
			o.Release()
			return nil, err
		}
		for l := 0; l < limbs; l, i = l+1, i+1 {
			if err := o.ReadLimbInto(buf, 0, l); err != nil {
				o.Release()
				return nil, fmt.Errorf("device: querylwe: packer object %q: %w", name, err)
			}
			sl := order[i]
			if sl.j >= 0 {
				dst := factors[sl.k][sl.j*n : (sl.j+1)*n]
				for c := range dst {
					dst[c] = binary.LittleEndian.Uint64(buf[8*c:])
				}
				continue
			}
			for c := range aParts[sl.k] {
				w := binary.LittleEndian.Uint64(buf[8*c:])
				if w>>32 != 0 {
					o.Release()
					return nil, malformed("packer object %q: an a-part word out of range", name)
				}
				aParts[sl.k][c] = uint32(w)
			}
		}
		o.Release()
	}
	pk, err := lwepir.LoadPacker(p, shape, factors, aParts)
	if err != nil {
		return nil, malformed("packer of %q: %v", gen, err)
	}
	return pk, nil
}

// packerSlot is one stored polynomial of a packer: pack k's factor j, or
// its a-part (j < 0).
type packerSlot struct{ k, j int }

// packerOrder is a packer's polynomials in stored order, each pack's
// factors (words[k] of them, N-word polynomials) then its a-part.
func packerOrder(words []int, n int) ([]packerSlot, error) {
	var order []packerSlot
	for k, w := range words {
		if w%n != 0 {
			return nil, malformed("pack %d: %d factor words", k, w)
		}
		for j := range w / n {
			order = append(order, packerSlot{k, j})
		}
		order = append(order, packerSlot{k, -1})
	}
	return order, nil
}

// checkPackerTotal checks, before a packer is read or mapped, that
// generation gen stores as many packer polynomials as want (what the
// request's parameters, packing version included, imply): a packer of
// another packing version holds another count, and is refused by name
// rather than read as this one. No packer object at all is NotFound.
func (s *Server) checkPackerTotal(gen string, p lwepir.Params, want int) error {
	prefix := objname.LWEPacker(gen)
	total := 0
	var j int64
	for ; total <= want; j++ {
		name := objname.Stored(prefix, j)
		o, err := s.cfg.Store.Acquire(name)
		if err != nil {
			if j == 0 {
				return fmt.Errorf("device: querylwe: %w: stored object %q: %w", api.ErrNotFound, name, err)
			}
			break
		}
		total += o.Info().Shape.Limbs
		o.Release()
	}
	if total != want {
		held := fmt.Sprint(total)
		if total > want {
			held = fmt.Sprint("more than ", want)
		}
		return malformed("the packer of %q holds %s polynomials, packing version %d's has %d: another version's packer, or objects missing",
			gen, held, max(p.Packing, lwepir.PackV1), want)
	}
	return nil
}

// checkPackerObject checks a packer object's shape: 1 to left of the
// packer's N-word polynomials (any cut of the sequence is read; the
// loader's is objname.LWEPackerLimbs), none past its end.
func checkPackerObject(name string, sh object.Shape, logN uint8, left int) error {
	if sh.Polys != 1 || sh.LogN != logN || sh.WordSize != 8 || sh.Limbs < 1 || sh.Limbs > left {
		return malformed("stored object %q is %s, not %d polynomials or fewer of the packer's", name, sh, left)
	}
	return nil
}

// checkPackedRequest checks a packed-mode request's own fields and decodes
// its keys: their size is checked before anything is decoded.
func checkPackedRequest(p lwepir.Params, req *devicepb.LWEQueryRequest) (*lwepir.PackingKeys, error) {
	if req.GetKeys() != "" || len(req.GetSecret()) != 0 {
		return nil, malformed("%v", ErrPackedMode)
	}
	if err := p.Pack().Validate(); err != nil {
		return nil, malformed("%v", err)
	}
	return decodePackingKeys(p, req.GetPackingKeys())
}

// decodePackingKeys decodes one query's packing keys, their size checked
// first.
func decodePackingKeys(p lwepir.Params, b []byte) (*lwepir.PackingKeys, error) {
	if want := lwepir.PackingKeysBytes(p); len(b) != want {
		return nil, malformed("packing keys of %d bytes, want %d", len(b), want)
	}
	keys, err := lwepir.UnmarshalPackingKeys(p, b)
	if err != nil {
		return nil, malformed("packing keys: %v", err)
	}
	return keys, nil
}

// packedQueries decodes a packed request's queries, its own (query, already
// decoded) and its more, each vector and key set checked for its size
// before it is decoded (Query bounds their count first).
func packedQueries(p lwepir.Params, shape lwepir.Shape, query []uint32, req *devicepb.LWEQueryRequest) ([][]uint32, []*lwepir.PackingKeys, error) {
	k, err := checkPackedRequest(p, req)
	if err != nil {
		return nil, nil, err
	}
	queries, keys := [][]uint32{query}, []*lwepir.PackingKeys{k}
	for i, m := range req.GetMore() {
		q, err := lwepir.UnmarshalQuery(p, m.GetQuery(), shape.Cols)
		if err != nil {
			return nil, nil, malformed("query %d: %v", i+1, err)
		}
		k, err := decodePackingKeys(p, m.GetPackingKeys())
		if err != nil {
			return nil, nil, fmt.Errorf("query %d: %w", i+1, err)
		}
		queries, keys = append(queries, q), append(keys, k)
	}
	return queries, keys, nil
}

// queryPacked answers a packed-mode request of one query or several: the
// scan in the generation's batched pass (the request's queries enter it
// together) and, beside it, the packing's key-switching half for all of
// them in the generation's batched Prepare (one pass over the factors for
// the requests that wait together; in a run slot of the caller's), then
// each answer completed from its column (Finish).
func (s *Server) queryPacked(ctx context.Context, start time.Time, caller string, p lwepir.Params, shape lwepir.Shape,
	srv *lwepir.Server, query []uint32, req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
	queries, keys, err := packedQueries(p, shape, query, req)
	if err != nil {
		return nil, err
	}
	s.packers.mu.Lock()
	s.packers.dropDeleted(s.cfg.Store)
	s.packers.mu.Unlock()
	src, err := s.pinTiles(req.GetGeneration(), p, shape)
	if err != nil {
		return nil, err
	}
	defer src.release()
	// The packer is loaded beside the scan, not before it: on a cold
	// device its precomputation is read from the store (0.2 s of a 4 GiB
	// database's cold query, measured), while the scan's reads start.
	var (
		pk            *lwepir.Packer
		packerErr     error
		wait          *prepWait
		batcher       = s.preps.get(generationKey(req.GetGeneration(), p, shape))
		releasePacker = func() {}
	)
	defer func() { releasePacker() }()
	cols, cores, read, err := s.scanBeside(ctx, caller, p, shape, srv, src, queries, req.GetGeneration(), "pack", s.cfg.Cores.For(caller), func(ctx context.Context) error {
		var done func()
		if pk, done, packerErr = s.packer(ctx, req.GetGeneration(), p, shape); packerErr != nil {
			return packerErr
		}
		releasePacker = done
		// The packing's half joins the generation's prepare batcher:
		// requests that wait together share one Prepare's pass over the
		// factors, and its run slot (prepBatcher.run), so a caller's
		// concurrent requests wait there for one Prepare, not for a slot
		// each (one a caller at once: the rest were refused busy after
		// their scans, and asked again).
		wait = &prepWait{pk: pk, keys: keys, caller: caller, done: make(chan struct{})}
		return batcher.prepare(ctx, s, wait)
	})
	// The packer's own error is the cause, unless the scan's failure
	// cancelled its loading (scanBeside then names the scan's).
	if packerErr != nil && !errors.Is(packerErr, context.Canceled) {
		return nil, packerErr
	}
	if err != nil {
		return nil, err
	}
	preps := wait.preps
	// The stage's cores are the Prepare's, which a batch's first caller's
	// share ran.
	cores[0] = CoreUse("pack", time.Duration(cores[0].GetSeconds()*float64(time.Second)), wait.use, wait.batch)
	answers := make([][]byte, len(queries))
	for i, q := range queries {
		ans, err := pk.Finish(preps[i], lwepir.SumQuery(q), cols[i])
		if err != nil {
			return nil, malformed("%v", err)
		}
		if answers[i], err = lwepir.MarshalPackedAnswer(p, shape, ans); err != nil {
			return nil, fmt.Errorf("device: querylwe: %w", err)
		}
	}
	return &devicepb.LWEQueryResponse{Packed: answers[0], MorePacked: answers[1:], StoreBytes: read,
		Cores: cores, Seconds: time.Since(start).Seconds()}, nil
}

// trim drops the oldest packers other than keep's while the loaded ones
// hold more than maxPackerBytes. c.mu held.
func (c *packerCache) trim(keep string) {
	var total int64
	for _, e := range c.m {
		if e.pk != nil {
			total += e.pk.PrecomputedBytes()
		}
	}
	for i := 0; total > maxPackerBytes && i < len(c.order); {
		k := c.order[i]
		e := c.m[k]
		if k == keep || e.pk == nil {
			i++
			continue
		}
		total -= e.pk.PrecomputedBytes()
		c.drop(k)
		c.order = append(c.order[:i], c.order[i+1:]...)
	}
}

// dropDeleted drops the opened packers whose generation's objects are no
// longer stored (a compaction or a drop deleted them): a mapped packer
// pins its objects' pages, which the store reclaims only once they are
// released. A query still using one keeps it until it ends. Every packed
// query looks (one catalog lookup a kept packer, at most maxPackers). c.mu
// held.
func (c *packerCache) dropDeleted(st *store.Store) {
	for i := 0; i < len(c.order); {
		k := c.order[i]
		e := c.m[k]
		if e == nil || e.pk == nil {
			i++
			continue
		}
		if _, err := st.Stat(objname.Stored(objname.LWEPacker(e.gen), 0)); !errors.Is(err, store.ErrNotFound) {
			i++
			continue
		}
		c.drop(k)
		c.order = append(c.order[:i], c.order[i+1:]...)
	}
}

// add keeps e under key, dropping the oldest past maxPackers. c.mu held.
func (c *packerCache) add(key string, e *packerEntry) {
	c.m[key] = e
	c.order = append(c.order, key)
	for len(c.order) > maxPackers {
		c.drop(c.order[0])
		c.order = c.order[1:]
	}
}
