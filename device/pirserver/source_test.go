package pirserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"testing"

	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/fhe/matvec"
)

// A stored tile of 2 KiB rows reaches the scan in pieces of whole row
// blocks of the vector kernels, covering the tile once with its bytes: page
// by page where a page holds whole blocks (16 KiB pages: 8 rows), the limb
// whole where it does not (4 KiB pages: 2 rows, which the kernels would
// leave to their Go loop).
func TestSourceVisitsWholeRowBlocks(t *testing.T) {
	const rowBytes, rows = 2048, 64
	for _, c := range []struct{ page, piece int }{{4096, rows}, {16384, 8}} {
		t.Run(fmt.Sprint(c.page), func(t *testing.T) {
			st, err := store.Open(t.TempDir(), layout.Layout{Channels: 2, PageSize: c.page})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			tile := make([]byte, rows*rowBytes)
			rand.Read(tile)
			// One limb of rows·rowBytes bytes: 2^14 words of 8 bytes.
			sh := object.Shape{Polys: 1, Limbs: 1, LogN: 14, WordSize: 8}
			if _, err := st.Put("db/g1/lwe/t000000", object.KindPlaintext, sh, [][]byte{tile}); err != nil {
				t.Fatal(err)
			}
			o, err := st.Acquire("db/g1/lwe/t000000")
			if err != nil {
				t.Fatal(err)
			}
			defer o.Release()
			src := &source{tiles: []*store.Object{o}, rowBytes: rowBytes, pageBytes: st.PageSize()}
			got := make([]byte, len(tile))
			seen := make([]int, rows)
			var mu sync.Mutex
			err = src.VisitBlock(context.Background(), 0, 0, func(row int, piece []byte) {
				mu.Lock()
				defer mu.Unlock()
				n := len(piece) / rowBytes
				if len(piece)%rowBytes != 0 || n%matvec.RowBlock != 0 || n != c.piece {
					t.Errorf("a piece of %d bytes at row %d, want %d whole rows", len(piece), row, c.piece)
				}
				copy(got[row*rowBytes:], piece)
				for i := row; i < row+n && i < rows; i++ {
					seen[i]++
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tile) {
				t.Fatal("the pieces differ from the tile")
			}
			for i, k := range seen {
				if k != 1 {
					t.Fatalf("row %d visited %d times", i, k)
				}
			}
		})
	}
}
