//go:build !unix

package testkit

import "time"

// ProcessCPU is 0 where the platform does not report it.
func ProcessCPU() time.Duration { return 0 }
