package ssd

import (
	"math"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/sim/eventsim"
	"github.com/rosemary-fhe/rosemary/sim/ssd/nand"
)

// TestChannelPagesMatchesLayout checks the per-channel page counts of a
// run of object pages against store/layout's Locate on an object holding
// the same pages (Polys 1, Limbs = instances x limbs).
func TestChannelPagesMatchesLayout(t *testing.T) {
	for _, c := range []struct {
		channels, pageSize int
		logN               uint8
		limbs              int
	}{{16, 4096, 12, 30}, {8, 1024, 10, 7}, {5, 1024, 11, 9}, {16, 16384, 12, 3}} {
		lay := layout.Layout{Channels: c.channels, PageSize: c.pageSize}
		s := layout.Shape{Polys: 1, Limbs: c.limbs, LogN: c.logN, WordSize: 4}
		d, err := lay.Place(s, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		k := int64(lay.PagesPerLimb(s))
		total := lay.PagesPerObject(s)
		for first := int64(0); first < total; first += 1 + total/7 {
			for _, n := range []int64{0, 1, k, total - first} {
				if first+n > total {
					continue
				}
				want := make([]int64, c.channels)
				for g := first; g < first+n; g++ {
					loc, err := lay.Locate(d, 0, int(g/k), int(g%k))
					if err != nil {
						t.Fatal(err)
					}
					want[loc.Channel]++
				}
				got := channelPages(c.channels, first, n)
				for ch := range want {
					if got[ch] != want[ch] {
						t.Fatalf("%+v pages [%d,+%d): channel %d has %d, layout says %d", c, first, n, ch, got[ch], want[ch])
					}
				}
			}
		}
	}
}

// TestFlashMatchesPageLevel compares the bulk flash model with the
// page-level nand.Array (MQSim's ONFI model, one event per page) on a
// 16384-page striped scan: the finish times agree within 1%.
func TestFlashMatchesPageLevel(t *testing.T) {
	for _, name := range []string{"rosemary", "ssd-small", "ssd-large"} {
		a, err := arch.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		g := a.NAND
		const pages = 16384
		s1 := eventsim.New()
		arr, err := nand.New(s1, g, nand.ChannelRow(g, func(p int64) (int, int64) {
			return int(p % int64(g.Channels)), p / int64(g.Channels)
		}))
		if err != nil {
			t.Fatal(err)
		}
		for p := int64(0); p < pages; p++ {
			if err := arr.Read(p, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := s1.Run(); err != nil {
			t.Fatal(err)
		}
		s2 := eventsim.New()
		fs, err := NewFlash(s2, g)
		if err != nil {
			t.Fatal(err)
		}
		end := fs.Read(0, pages)
		ref := s1.Now()
		if rel := math.Abs(float64(end-ref)) / float64(ref); rel > 0.01 {
			t.Errorf("%s: stream %v vs page-level %v (%.2f%%)", name, end, ref, 100*rel)
		}
		t.Logf("%s: %d pages: stream %v, page-level %v", name, pages, end, ref)
	}
}

// TestFlashCounters: 32 pages over 16 channels are two pages per channel,
// each channel paying the command and tR fill once; a second read booked
// while the channels are still busy pays no fill. Pages, Busy and OnBusy
// report exactly that.
func TestFlashCounters(t *testing.T) {
	a := rosemary(t)
	s := eventsim.New()
	f, err := NewFlash(s, a.NAND)
	if err != nil {
		t.Fatal(err)
	}
	if a.NAND.Channels != 16 {
		t.Fatalf("rosemary has %d channels; the test assumes 16", a.NAND.Channels)
	}
	var calls int
	var busy eventsim.Time
	f.OnBusy = func(start, end eventsim.Time) { calls++; busy += end - start }
	end := f.Read(0, 32)
	if want := f.fill + 2*f.perPage; end != want {
		t.Errorf("32 pages end at %v, want fill + 2 pages = %v", end, want)
	}
	if end2 := f.Read(32, 16); end2 != end+f.perPage {
		t.Errorf("16 more pages end at %v, want %v", end2, end+f.perPage)
	}
	if f.Pages() != 48 || calls != 32 {
		t.Errorf("%d pages, %d bookings; want 48, 32", f.Pages(), calls)
	}
	if want := f.fill + 3*f.perPage; f.Busy() != want || busy != 16*want {
		t.Errorf("busy %v per channel (%v in all), want %v", f.Busy(), busy, want)
	}
	if _, err := f.PagesPerInstance(layout.Shape{Polys: 1, Limbs: 0, LogN: 12, WordSize: 4}); err == nil {
		t.Error("a shape without limbs was accepted")
	}
}
