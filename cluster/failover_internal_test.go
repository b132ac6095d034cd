package cluster

import (
	"context"
	"testing"
	"time"
)

func TestAttemptTimeout(t *testing.T) {
	if got := attemptTimeout(context.Background(), 3, time.Minute); got != time.Minute {
		t.Fatalf("no deadline: %v, want the ceiling", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	// An equal share of what is left: a little under an hour over 4.
	if got := attemptTimeout(ctx, 4, 2*time.Hour); got > 15*time.Minute || got < 14*time.Minute {
		t.Fatalf("4 replicas left of an hour: %v, want just under 15m", got)
	}
	if got := attemptTimeout(ctx, 1, time.Minute); got != time.Minute {
		t.Fatalf("the ceiling binds: %v", got)
	}
	if got := attemptTimeout(ctx, 1, 2*time.Hour); got > time.Hour || got < 59*time.Minute {
		t.Fatalf("the last replica gets what is left: %v", got)
	}
}
