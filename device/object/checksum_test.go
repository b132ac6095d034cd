package object

import (
	"hash/crc32"
	"testing"
)

// The checksum is the CRC-32C of the limbs concatenated: splitting an
// object into limbs differently changes nothing, one flipped bit changes it.
func TestChecksum(t *testing.T) {
	whole := []byte("rosemary stores limbs in pages, each with its own CRC")
	want := crc32.Checksum(whole, crc32.MakeTable(crc32.Castagnoli))
	if got := Checksum([][]byte{whole}); got != want {
		t.Fatalf("one limb: %#08x, want %#08x", got, want)
	}
	if got := Checksum([][]byte{whole[:7], whole[7:30], whole[30:]}); got != want {
		t.Fatalf("three limbs: %#08x, want %#08x", got, want)
	}
	flipped := append([]byte(nil), whole...)
	flipped[11] ^= 0x10
	if Checksum([][]byte{flipped}) == want {
		t.Fatal("a flipped bit kept the checksum")
	}
	if Checksum(nil) != 0 {
		t.Fatal("the checksum of no limbs is not 0")
	}
}
