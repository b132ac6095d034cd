//go:build !linux

package ot

// hugeBlocks returns n zeroed blocks on the heap (huge pages are asked for
// on Linux only; see hugepage_linux.go).
func hugeBlocks(n int) ([]block, func()) { return make([]block, n), func() {} }
