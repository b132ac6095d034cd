// Package storeread compares, in one run, the object store's parallel limb
// reads with a plain sequential read of the same bytes from the same file
// system (page cache included: no O_DIRECT, nothing dropped), so on a warm
// cache it measures the store's CPU-side costs (goroutines, checksums)
// more than disk bandwidth. `go test -run '^$' -bench . ./bench/storeread`
// runs it; the store package itself holds no benchmark code.
package storeread
