//go:build !linux

package cputime

import "time"

// Thread is unavailable off Linux: it reports false and callers fall back
// to wall time.
func Thread() (time.Duration, bool) { return 0, false }
