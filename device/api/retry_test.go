package api

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
)

// A call refused as busy — in process or as a status over the wire — is
// asked again until it goes through; other errors, and a context that
// ends, stop the tries at once.
func TestRetryBusy(t *testing.T) {
	ctx := context.Background()
	wireBusy := fmt.Errorf("device: Put: %w: 4 calls going", ErrBusy)
	st := StatusOf(wireBusy, wireBusy)
	if st.Code() != codes.ResourceExhausted {
		t.Fatalf("busy crosses the wire as %v", st.Code())
	}
	wire := st.Err()
	for _, busy := range []error{fmt.Errorf("runstream: %w", ErrBusy), wire} {
		calls := 0
		err := RetryBusy(ctx, func() error {
			if calls++; calls < 4 {
				return busy
			}
			return nil
		})
		if err != nil || calls != 4 {
			t.Fatalf("busy three times, then through: %v after %d calls", err, calls)
		}
	}
	for _, other := range []error{ErrExhausted, ErrDiskFull, StatusOf(ErrExhausted, ErrExhausted).Err(), errors.New("x")} {
		calls := 0
		if err := RetryBusy(ctx, func() error { calls++; return other }); err != other || calls != 1 {
			t.Fatalf("%v: %v after %d calls, want one call", other, err, calls)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	calls := 0
	err := RetryBusy(cctx, func() error {
		if calls++; calls == 2 {
			cancel()
		}
		return ErrBusy
	})
	if !errors.Is(err, ErrBusy) || calls != 2 {
		t.Fatalf("a context that ends: %v after %d calls", err, calls)
	}
}
