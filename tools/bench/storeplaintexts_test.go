package bench

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/pir"
)

// smallPIR writes a seeded database of records 256-byte records (bgv-13,
// 16 KiB plaintexts, the only PIR preset the loader writes) into a store in
// a fresh directory.
func smallPIR(t *testing.T, records int) (string, fhe.Preset, pir.Shape) {
	t.Helper()
	preset, err := fhe.Lookup("bgv-13")
	if err != nil {
		t.Fatal(err)
	}
	params, err := preset.BGVParameters()
	if err != nil {
		t.Fatal(err)
	}
	shape, err := pir.NewShape(params, 256, records)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := store.Open(dir, layout.Layout{Channels: 4, PageSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := client.WriteSeededPIR(context.Background(), storeSink(st), benchDB, shape, 7, nil); err != nil {
		t.Fatal(err)
	}
	return dir, preset, shape
}

// TestLattigoBaselineReadsEachObjectOnce: the host-only query over a 16 MiB
// store (4 rows × 256 columns in five objects, each needed by every row)
// answers the record and reads every stored object once: the database's
// bytes.
func TestLattigoBaselineReadsEachObjectOnce(t *testing.T) {
	dir, preset, shape := smallPIR(t, 64*4*256)
	if shape.Rows != 4 || shape.Cols != 256 || shape.Plaintexts != shape.Rows*shape.Cols {
		t.Fatalf("shape %+v, want 4 × 256 full", shape)
	}
	params, _ := preset.BGVParameters()
	sk := rlwe.NewKeyGenerator(params).GenSecretKeyNew()
	rep := &PIRReport{Indices: []int{shape.Records - 1 - 64*300}, DBBytes: int64(shape.Rows*shape.Cols) * int64(2*shape.N)}
	opt := PIROptions{RecordSize: 256, Seed: 7, StoreDir: dir}
	if err := lattigoBaseline(context.Background(), opt, preset, shape, sk, rep, t.Logf); err != nil {
		t.Fatal(err)
	}
	if !rep.LattigoCorrect {
		t.Errorf("record %d differs", rep.Indices[0])
	}
	if rep.LattigoBytesRead != rep.DBBytes {
		t.Errorf("lattigo_bytes_read %d, database %d bytes", rep.LattigoBytesRead, rep.DBBytes)
	}
}

// TestStorePlaintexts scans in the reference server's order (rows split
// between three workers, each row left to right) a database of 2049
// plaintexts in 16 × 256: the first tile of eight rows fills nine objects
// (more than the old eight-object cache held), split between two workers,
// the second tile holds one plaintext and padding. Every plaintext equals
// the records' encoding, every object holding one is read once, the
// padding's objects never; asking again after the scan is a second read,
// which the check reports.
func TestStorePlaintexts(t *testing.T) {
	dir, _, shape := smallPIR(t, 64*2049)
	if shape.Rows != 16 || shape.Cols != 256 || shape.Plaintexts != 2049 {
		t.Fatalf("shape %+v, want 2049 plaintexts in 16 × 256", shape)
	}
	st, err := store.Open(dir, layout.Layout{Channels: 4, PageSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	db := newStorePlaintexts(st, benchDB, shape)
	var wg sync.WaitGroup
	const workers = 3
	errs := make([]error, workers)
	var mu sync.Mutex
	sample := map[int][]uint64{} // every 37th plaintext and the last, checked below
	for w := range workers {
		wg.Go(func() {
			got := make([]uint64, shape.N)
			for r := w * shape.Rows / workers; r < (w+1)*shape.Rows/workers; r++ {
				for c := range shape.Cols {
					p := r*shape.Cols + c
					if p >= shape.Plaintexts {
						break
					}
					if err := db.Plaintext(ctx, p, got); err != nil {
						errs[w] = err
						return
					}
					if p%37 == 0 || p == shape.Plaintexts-1 {
						mu.Lock()
						sample[p] = slices.Clone(got)
						mu.Unlock()
					}
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for p, got := range sample {
		var block []byte
		for i := p * shape.PerPlaintext; i < min((p+1)*shape.PerPlaintext, shape.Records); i++ {
			rec, err := client.SeededRecord(7, shape, i)
			if err != nil {
				t.Fatal(err)
			}
			block = append(block, rec...)
		}
		want, err := pir.EncodePlaintext(shape, block)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("plaintext %d differs from its records' encoding", p)
		}
	}
	read, err := db.scannedOnce()
	if err != nil {
		t.Fatal(err)
	}
	infos, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	// Tile one's 2048 plaintexts fill objects 0–8 (255 each), object 8 also
	// holding the one plaintext of tile two; objects 9–16 hold padding.
	var needed int64
	objects := 0
	for _, info := range infos {
		if !strings.HasPrefix(info.Name, benchDB+"/pt/") {
			continue
		}
		objects++
		j, err := strconv.Atoi(strings.TrimPrefix(info.Name, benchDB+"/pt/"))
		if err != nil {
			t.Fatal(err)
		}
		if want := j <= 8; (db.reads[info.Name] == 1) != want || db.reads[info.Name] > 1 {
			t.Errorf("object %s read %d times", info.Name, db.reads[info.Name])
		} else if want {
			needed += info.Bytes
		}
	}
	if objects != 17 || len(db.reads) != 9 || read != needed || len(db.objs) != 0 {
		t.Errorf("read %d bytes, %d of %d objects (want %d bytes, 9 of 17), %d held after the scan", read, len(db.reads), objects, needed, len(db.objs))
	}
	if err := db.Plaintext(ctx, 0, make([]uint64, shape.N)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.scannedOnce(); err == nil {
		t.Error("a second read of plaintext 0's object passed the check")
	}
}
