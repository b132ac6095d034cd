package ot

import "testing"

func TestEqTmp(t *testing.T) {
	p, _ := FerretSmall.params()
	secret := randBlocks(t, p.k)
	bits := make([]uint8, p.k)
	for i := range bits {
		bits[i] = uint8(secret[i][1] & 1)
	}
	init := randBlocks(t, p.n)
	lpnBlocked = false
	a := append([]block(nil), init...)
	ab := make([]uint8, p.n)
	lpnEncode(p, secret, a, bits, ab)
	lpnBlocked = true
	for _, sh := range []int{10, 12, 16} {
		lpnSliceShift = sh
		b := append([]block(nil), init...)
		bb := make([]uint8, p.n)
		lpnEncode(p, secret, b, bits, bb)
		for i := range a {
			if a[i] != b[i] || ab[i] != bb[i] {
				t.Fatal(sh, i)
			}
		}
	}
}
