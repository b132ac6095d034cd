//go:build !unix

package e2e

import "time"

// processCPU is unavailable here: CPU times are reported as 0.
func processCPU() (time.Duration, bool) { return 0, false }
