package session

import (
	"context"
	"testing"

	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
)

// storeSink writes objects straight into a store, before its device
// serves.
func storeSink(st *store.Store) ObjectSink {
	return func(_ context.Context, name string, shape object.Shape, raw [][]byte) error {
		_, err := st.Put(name, object.KindPlaintext, shape, raw)
		return err
	}
}

// openTestStore opens a store of 4 channels of 4 KiB pages in a temporary
// directory, closed when the test ends.
func openTestStore(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(t.TempDir(), layout.Layout{Channels: 4, PageSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
