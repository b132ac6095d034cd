package cluster

import (
	"context"
	"fmt"
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

// A device's circuit opens at its third failure in a row, sends it behind
// the other replicas for the cooldown, lets it back in order afterwards
// (half-open: one more failure reopens it) and closes on a success.
func TestBreaker(t *testing.T) {
	now := time.Unix(1000, 0)
	b := &breakers{now: func() time.Time { return now }}
	addr := func(id string) string { return "addr-" + id }
	order := func() string {
		ids := []string{"d0", "d1", "d2"}
		b.order(ids, addr)
		return ids[0] + ids[1] + ids[2]
	}
	for i := range breakerFailures - 1 {
		if b.failed("addr-d0") {
			t.Fatalf("opened after %d failures", i+1)
		}
	}
	if got := order(); got != "d0d1d2" {
		t.Fatalf("closed circuit reordered: %s", got)
	}
	if !b.failed("addr-d0") {
		t.Fatalf("not opened after %d failures", breakerFailures)
	}
	if got := order(); got != "d1d2d0" {
		t.Fatalf("open circuit: order %s, want d1d2d0", got)
	}
	b.failed("addr-d1")
	b.failed("addr-d1")
	if !b.failed("addr-d1") {
		t.Fatal("d1 not opened at its third failure")
	}
	if got := order(); got != "d2d0d1" {
		t.Fatalf("two open circuits: order %s, want d2d0d1", got)
	}
	now = now.Add(breakerCooldown)
	if got := order(); got != "d0d1d2" {
		t.Fatalf("after the cooldown: order %s, want the map's", got)
	}
	if !b.failed("addr-d0") {
		t.Fatal("a failure after the cooldown (half-open) did not reopen")
	}
	b.succeeded("addr-d0")
	if b.isOpen("addr-d0") || order() != "d0d1d2" {
		t.Fatal("a success did not close the circuit")
	}
	if b.failed("addr-d0") {
		t.Fatal("one failure after a success opened the circuit")
	}
}

// Maintain tries a failed round again after 1 s, 2 s, 4 s … up to 30 s
// while rounds keep failing, and not at all once one succeeds; a failure
// after that starts from 1 s again.
func TestRetryBackoff(t *testing.T) {
	var b retryBackoff
	var got []time.Duration
	for _, failed := range []bool{true, true, true, true, true, true, true, false, false, true} {
		got = append(got, b.next(failed))
	}
	s := time.Second
	want := []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 30 * s, 30 * s, 0, 0, s}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
}
