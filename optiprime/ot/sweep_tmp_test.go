package ot

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func BenchmarkLPNSweep(b *testing.B) {
	p, _ := FerretRegular.params()
	sk, _, sOut, _ := lpnTables(b, p)
	rk, rBits, rOut, rBitsOut := lpnTables(b, p)
	type cfg struct {
		band, shift int
		blocked     bool
	}
	var cfgs []cfg
	for _, f := range strings.Fields(os.Getenv("CFGS")) {
		v := strings.Split(f, ",")
		a, _ := strconv.Atoi(v[0])
		s, _ := strconv.Atoi(v[1])
		cfgs = append(cfgs, cfg{a, s, s > 0})
	}
	for _, c := range cfgs {
		lpnBandChunks, lpnSliceShift, lpnBlocked = c.band, c.shift, c.blocked
		if !c.blocked {
			lpnSliceShift = 16
		}
		b.Run(fmt.Sprintf("band%d/shift%d/sender", c.band, c.shift), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				lpnEncode(p, sk, sOut, nil, nil)
			}
		})
		if os.Getenv("BOTH") != "" {
			b.Run(fmt.Sprintf("band%d/shift%d/both", c.band, c.shift), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					var wg sync.WaitGroup
					wg.Add(1)
					go func() { defer wg.Done(); lpnEncode(p, sk, sOut, nil, nil) }()
					lpnEncode(p, rk, rOut, rBits, rBitsOut)
					wg.Wait()
				}
			})
		}
	}
}
