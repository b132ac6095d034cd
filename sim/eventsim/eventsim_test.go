package eventsim

import (
	"crypto/rand"
	"encoding/binary"
	"sort"
	"strings"
	"testing"
)

func TestOrderingAndFIFOTies(t *testing.T) {
	s := New()
	var got []string
	rec := func(tag string) func() { return func() { got = append(got, tag) } }
	s.At(30, rec("c"))
	s.At(10, rec("a1"))
	s.At(20, rec("b"))
	s.At(10, rec("a2"))
	s.At(10, rec("a3"))
	// An event scheduled during a tie at the same time runs after those
	// already queued.
	s.At(20, func() {
		got = append(got, "b2")
		s.At(20, rec("b3"))
	})
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	want := "a1 a2 a3 b b2 b3 c"
	if g := strings.Join(got, " "); g != want {
		t.Fatalf("order %q, want %q", g, want)
	}
	if s.Now() != 30 || s.Fired() != 7 || s.Pending() != 0 {
		t.Errorf("now %d fired %d pending %d", s.Now(), s.Fired(), s.Pending())
	}
}

// TestRandomOrder checks the heap against a sort on random times, ties
// included.
func TestRandomOrder(t *testing.T) {
	s := New()
	type ev struct {
		at  Time
		seq int
	}
	var want []ev
	var got []ev
	buf := make([]byte, 4*5000)
	if _, err := rand.Read(buf); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5000; i++ {
		at := Time(binary.LittleEndian.Uint32(buf[4*i:]) % 500) // many ties
		e := ev{at, i}
		want = append(want, e)
		s.At(at, func() { got = append(got, e) })
	}
	sort.SliceStable(want, func(i, j int) bool { return want[i].at < want[j].at })
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d: got %+v want %+v", i, got[i], want[i])
		}
	}
}

func TestCancel(t *testing.T) {
	s := New()
	var got []int
	evs := make([]*Event, 10)
	for i := range evs {
		evs[i] = s.At(Time(i%3), func() { got = append(got, i) })
	}
	if !s.Cancel(evs[4]) || !s.Cancel(evs[0]) || !s.Cancel(evs[9]) {
		t.Fatal("cancel of pending event failed")
	}
	if s.Cancel(evs[4]) {
		t.Error("double cancel succeeded")
	}
	if evs[4].Pending() {
		t.Error("cancelled event still pending")
	}
	// An event can cancel a later one.
	late := s.At(100, func() { got = append(got, 100) })
	s.At(50, func() { s.Cancel(late) })
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	// time 0: 3,6 (0,9 cancelled); time 1: 1,7 (4 cancelled); time 2: 2,5,8
	want := []int{3, 6, 1, 7, 2, 5, 8}
	if len(got) != len(want) {
		t.Fatalf("got %v want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v want %v", got, want)
		}
	}
	if s.Cancel(evs[1]) {
		t.Error("cancel of a fired event succeeded")
	}
	if s.Cancel(nil) {
		t.Error("cancel(nil) succeeded")
	}
}

func TestPastAndNegative(t *testing.T) {
	s := New()
	s.At(10, func() { s.At(5, func() {}) })
	if err := s.Run(); err == nil || !strings.Contains(err.Error(), "before now") {
		t.Errorf("scheduling in the past: %v", err)
	}
	s = New()
	if e := s.After(-1, func() {}); e != nil || s.Err() == nil {
		t.Error("negative delay accepted")
	}
	s = New()
	if e := s.At(1, nil); e != nil || s.Err() == nil {
		t.Error("nil fn accepted")
	}
	s = New()
	s.At(5, func() {})
	s.After(Never, func() {})
	if s.Err() != nil {
		t.Errorf("After(Never) at time 0 should be fine: %v", s.Err())
	}
	s.RunUntil(5)
	s.After(Never, func() {})
	if s.Err() == nil {
		t.Error("overflowing delay accepted")
	}
}

func TestRunUntil(t *testing.T) {
	s := New()
	n := 0
	for i := 1; i <= 10; i++ {
		s.At(Time(i)*Microsecond, func() { n++ })
	}
	if err := s.RunUntil(5 * Microsecond); err != nil {
		t.Fatal(err)
	}
	if n != 5 || s.Now() != 5*Microsecond || s.Pending() != 5 {
		t.Errorf("n %d now %v pending %d", n, s.Now(), s.Pending())
	}
	s.RunUntil(7500 * Nanosecond)
	if n != 7 || s.Now() != 7500*Nanosecond {
		t.Errorf("n %d now %v", n, s.Now())
	}
}

func TestRateDuration(t *testing.T) {
	r, err := GBps(2.4)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n    int64
		want Time
	}{
		{0, 0},
		{2400, Microsecond},              // 2400 B at 2.4 GB/s = 1 us
		{32768, 13653334},                // 32768/2.4e9 s = 13653.333.. ns -> rounded up
		{1, 417},                         // 0.41666 ns -> 417 ps
		{2400000000, Second},             // 1 s
		{1 << 40, Time(458129844906667)}, // 2^40 / 2.4e9 s, rounded up
	} {
		if got := r.Duration(tc.n); got != tc.want {
			t.Errorf("Duration(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
	if r.Duration(-5) != 0 {
		t.Error("negative size")
	}
	huge := Rate{Bytes: 1, Per: Second}
	if huge.Duration(1<<62) != Never {
		t.Error("overflow did not saturate")
	}
	for _, g := range []float64{0, -1, 2e9} {
		if _, err := GBps(g); err == nil {
			t.Errorf("GBps(%g) accepted", g)
		}
	}
	if g := r.GBps(); g != 2.4 {
		t.Errorf("round trip %g", g)
	}
}

// TestServerHandComputed: a 1 GB/s server (1 byte per ns).
func TestServerHandComputed(t *testing.T) {
	s := New()
	v := NewServer(s, "link", Rate{Bytes: 1, Per: Nanosecond})
	var done []Time
	rec := func() { done = append(done, s.Now()) }
	// t=0: 100 B -> [0,100ns]; 50 B queued -> [100,150].
	v.Transfer(100, rec)
	v.Transfer(50, rec)
	// t=400: idle again: 10 B -> [400,410]; then at t=405 20 B -> [410,430].
	s.At(400*Nanosecond, func() { v.Transfer(10, rec) })
	s.At(405*Nanosecond, func() { v.Transfer(20, rec) })
	// An Occupy of 7 ns at t=1000.
	s.At(1000*Nanosecond, func() { v.Occupy(7*Nanosecond, rec) })
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	want := []Time{100, 150, 410, 430, 1007}
	for i := range want {
		if done[i] != want[i]*Nanosecond {
			t.Fatalf("completions %v, want %v ns", done, want)
		}
	}
	st := v.Stats()
	if st.Requests != 5 || st.Bytes != 180 || st.Busy != 187*Nanosecond {
		t.Errorf("stats %+v", st)
	}
	if u := st.Utilization(s.Now()); u != 187.0/1007 {
		t.Errorf("utilization %g", u)
	}
	var noRate Server = *NewServer(s, "x", Rate{})
	noRate.Transfer(5, nil)
	if s.Err() == nil {
		t.Error("transfer without a rate accepted")
	}
}

func TestPipe(t *testing.T) {
	s := New()
	p := NewPipe(s, 250*Nanosecond)
	var at []Time
	p.Send(8, func() { at = append(at, s.Now()) })
	s.At(10*Nanosecond, func() { p.Send(8, func() { at = append(at, s.Now()) }) })
	s.Run()
	if len(at) != 2 || at[0] != 250*Nanosecond || at[1] != 260*Nanosecond {
		t.Errorf("deliveries %v", at)
	}
	if p.Stats().Bytes != 16 || p.Stats().Requests != 2 {
		t.Errorf("stats %+v", p.Stats())
	}
}

// TestBanked: 4 banks of 1 B/ns, 64-byte interleave.
func TestBanked(t *testing.T) {
	s := New()
	b, err := NewBanked(s, "edram", 4, Rate{Bytes: 1, Per: Nanosecond}, 64)
	if err != nil {
		t.Fatal(err)
	}
	// 256 aligned bytes: 64 per bank in parallel -> 64 ns.
	if end := b.Access(0, 256, nil); end != 64*Nanosecond {
		t.Errorf("aligned 256 B: %v", end)
	}
	// Next, 1000 bytes from address 32: chunks 0..16 (addr 32..1031).
	// Chunk k -> bank k%4. Chunk 0 has 32 B (bank 0), chunk 16 has 8 B
	// (1031-1024+1, bank 0). Bank0: chunks 0,4,8,12,16 = 32+64*3+8 = 232;
	// banks 1,2,3: 4 chunks x 64 = 256. Banks already busy to 64 ns.
	end := b.Access(32, 1000, nil)
	if end != (64+256)*Nanosecond {
		t.Errorf("unaligned access ends %v, want 320 ns", end)
	}
	wantBytes := []int64{64 + 232, 64 + 256, 64 + 256, 64 + 256}
	for i, w := range wantBytes {
		if got := b.Bank(i).Stats().Bytes; got != w {
			t.Errorf("bank %d bytes %d want %d", i, got, w)
		}
	}
	if st := b.Stats(); st.Bytes != 1256 {
		t.Errorf("total bytes %d", st.Bytes)
	}
	if _, err := b.AccessBank(4, 10, nil); err == nil {
		t.Error("bank out of range accepted")
	}
	if _, err := NewBanked(s, "x", 0, Rate{1, 1}, 64); err == nil {
		t.Error("zero banks accepted")
	}
}

// TestBankedBruteForce compares Access's per-bank split with byte-by-byte
// counting on random ranges.
func TestBankedBruteForce(t *testing.T) {
	buf := make([]byte, 8*300)
	if _, err := rand.Read(buf); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i++ {
		x := binary.LittleEndian.Uint64(buf[8*i:])
		nb := int(x%7) + 1
		il := int64(x>>3%50) + 1
		addr := int64(x >> 9 % 5000)
		n := int64(x >> 22 % 3000)
		s := New()
		b, _ := NewBanked(s, "m", nb, Rate{1, 1}, il)
		b.Access(addr, n, nil)
		want := make([]int64, nb)
		for a := addr; a < addr+n; a++ {
			want[(a/il)%int64(nb)]++
		}
		for k := 0; k < nb; k++ {
			if got := b.Bank(k).Stats().Bytes; got != want[k] {
				t.Fatalf("banks %d il %d addr %d n %d: bank %d got %d want %d", nb, il, addr, n, k, got, want[k])
			}
		}
	}
}

func TestFromNanoseconds(t *testing.T) {
	if v, ok := FromNanoseconds(75000); !ok || v != 75*Microsecond {
		t.Errorf("75000 ns = %v", v)
	}
	if v, ok := FromNanoseconds(0.4166); !ok || v != 417 {
		t.Errorf("0.4166 ns = %d ps", v)
	}
	if _, ok := FromNanoseconds(-1); ok {
		t.Error("negative accepted")
	}
}

// TestArbiter: 1 B/ns, class 0 overtakes queued class-1 jobs, FIFO within a
// class, done callbacks may submit before the next job is chosen.
func TestArbiter(t *testing.T) {
	s := New()
	a := NewArbiter(s, "ch", 2, Rate{Bytes: 1, Per: Nanosecond})
	var log []string
	rec := func(tag string) func() { return func() { log = append(log, tag+"@"+s.Now().String()) } }
	a.SubmitBytes(1, 100, rec("d1")) // starts at once: [0,100]
	a.SubmitBytes(1, 100, rec("d2")) // queued
	a.SubmitBytes(1, 100, func() {
		log = append(log, "d3@"+s.Now().String())
		a.Submit(0, 5*Nanosecond, 0, rec("c3")) // submitted at completion: runs next
	})
	s.At(10*Nanosecond, func() { a.Submit(0, 10*Nanosecond, 0, rec("c1")) }) // overtakes d2,d3
	s.At(20*Nanosecond, func() { a.Submit(0, 10*Nanosecond, 0, rec("c2")) })
	s.At(400*Nanosecond, func() { a.SubmitBytes(1, 1, rec("d4")) })
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"d1@0.100000us", "c1@0.110000us", "c2@0.120000us", "d2@0.220000us",
		"d3@0.320000us", "c3@0.325000us", "d4@0.401000us",
	}
	if len(log) != len(want) {
		t.Fatalf("log %v", log)
	}
	for i := range want {
		if log[i] != want[i] {
			t.Fatalf("log %v, want %v", log, want)
		}
	}
	st := a.Stats()
	if st.Requests != 7 || st.Bytes != 301 || st.Busy != 326*Nanosecond {
		t.Errorf("stats %+v", st)
	}
	a.Submit(2, 1, 0, nil)
	if s.Err() == nil {
		t.Error("bad class accepted")
	}
}
