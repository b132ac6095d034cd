package nand

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/sim/eventsim"
)

// TestStoreLayoutPlugsIn reads a whole ciphertext laid out by the object
// store's channel-interleaving rule (store/layout) through ChannelRow: a
// 2-poly x 30-limb, N = 2^16, 4-byte ciphertext (8 pages of 32 KiB per limb,
// 480 pages) on the rosemary geometry. Every page is read once, every
// channel carries 480/16 = 30 pages, and, with so few pages per channel that
// the first tR shows, the read time lies between tR + 30 page transfers (no
// schedule can beat it) and tR + cmd_2 + 30 x (transfer + cmd_2) (every
// command serialized on the channel).
func TestStoreLayoutPlugsIn(t *testing.T) {
	g := preset(t, "rosemary")
	lay := layout.Layout{Channels: g.Channels, PageSize: g.PageBytes}
	shape := layout.Shape{Polys: 2, Limbs: 30, LogN: 16, WordSize: 4}
	d, err := lay.NewDescriptor(shape, [2]uint32{0, 1000}, 0)
	if err != nil {
		t.Fatal(err)
	}
	k := lay.PagesPerLimb(shape)
	total := lay.PagesPerObject(shape)
	if k != 8 || total != 480 {
		t.Fatalf("k %d, total %d", k, total)
	}
	rule := func(page int64) (int, int64) {
		perPoly := int64(shape.Limbs * k)
		poly, rest := page/perPoly, page%perPoly
		loc, err := lay.Locate(d, int(poly), int(rest)/k, int(rest)%k)
		if err != nil {
			t.Fatal(err)
		}
		return loc.Channel, int64(loc.Row)
	}
	s := eventsim.New()
	a, err := New(s, g, ChannelRow(g, rule))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for p := int64(0); p < total; p++ {
		if err := a.Read(p, func(p int64) { seen[p] = true }); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	if int64(len(seen)) != total {
		t.Fatalf("%d of %d pages read", len(seen), total)
	}
	for c := 0; c < g.Channels; c++ {
		if n := a.Channel(c).Stats().Bytes; n != 30*int64(g.PageBytes) {
			t.Errorf("channel %d carried %d bytes", c, n)
		}
	}
	tm := a.Timing()
	lo := tm.TR + 30*tm.PageOut
	hi := tm.TR + tm.ReadCommand[2] + 30*(tm.PageOut+tm.ReadCommand[2])
	if s.Now() < lo || s.Now() > hi {
		t.Errorf("read took %v, outside [%v, %v]", s.Now(), lo, hi)
	}
	bound, _ := PeakReadGBps(g)
	got := float64(total*int64(g.PageBytes)) / s.Now().Seconds() / 1e9
	if got > bound {
		t.Errorf("%.2f GB/s exceeds the bound %.2f", got, bound)
	}
	t.Logf("15 MiB ciphertext in %v: %.2f GB/s (steady-state bound %.2f)", s.Now(), got, bound)
}
